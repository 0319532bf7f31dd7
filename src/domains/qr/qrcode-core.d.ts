/** Types of the parts of npm `qrcode` (MIT) used here: its encoder core, without its renderers. */
declare module 'qrcode/lib/core/qrcode.js' {
  export interface BitMatrix {
    size: number
    data: Uint8Array
    /** 1 where a module is a function pattern (never masked). */
    reservedBit: Uint8Array
  }
  export interface Symbol {
    modules: BitMatrix
    version: number
    maskPattern: number
  }
  export function create(
    data: string | { data: string; mode: 'numeric' | 'alphanumeric' | 'byte' }[],
    options: { errorCorrectionLevel: 'L' | 'M' | 'Q' | 'H'; maskPattern?: number },
  ): Symbol
}

declare module 'qrcode/lib/core/version.js' {
  export function getCapacity(version: number, errorCorrectionLevel: unknown, mode?: unknown): number
}

declare module 'qrcode/lib/core/error-correction-level.js' {
  export const L: unknown
  export const M: unknown
  export const Q: unknown
  export const H: unknown
}

declare module 'qrcode/lib/core/mode.js' {
  export const NUMERIC: unknown
  export const ALPHANUMERIC: unknown
  export const BYTE: unknown
  export const MIXED: unknown
}

declare module 'qrcode/lib/core/format-info.js' {
  /** The 15 BCH-coded format bits of a level (qrcode's level object) and a mask. */
  export function getEncodedBits(errorCorrectionLevel: unknown, mask: number): number
}
