/**
 * Reads a QR code's modules back from PNG pixels (via pngjs), knowing its module count and margin from the
 * answer, and what ISO/IEC 18004 fixes about every code: finder patterns and the BCH-coded format
 * information that carries the error correction level.
 */
import type { Pixels } from './decode.ts'

export type Module = (row: number, col: number) => boolean

/** Module (row, col) is dark when the pixel at its centre has the foreground colour. */
export function moduleReader(p: Pixels, modules: number, margin: number, fg: [number, number, number]): Module {
  const total = modules + 2 * margin
  const at = (m: number) => Math.floor(((m + margin + 0.5) * p.width) / total)
  return (row, col) => {
    const i = (at(row) * p.width + at(col)) * 4
    return p.data[i] === fg[0] && p.data[i + 1] === fg[1] && p.data[i + 2] === fg[2]
  }
}

/** The 7x7 finder pattern: dark ring, light ring, dark 3x3 centre. */
export function hasFinder(m: Module, top: number, left: number): boolean {
  for (let r = 0; r < 7; r++)
    for (let c = 0; c < 7; c++) {
      const ring = Math.max(Math.abs(r - 3), Math.abs(c - 3))
      if (m(top + r, left + c) !== (ring !== 2)) return false
    }
  return true
}

/** The 32 valid masked format words (5 data bits + BCH(15,5) with generator 0x537, XOR 0x5412). */
function formatWords(): Map<number, number> {
  const out = new Map<number, number>()
  for (let data = 0; data < 32; data++) {
    let rem = data << 10
    for (let bit = 14; bit >= 10; bit--) if (rem & (1 << bit)) rem ^= 0x537 << (bit - 10)
    out.set(((data << 10) | rem) ^ 0x5412, data)
  }
  return out
}
const WORDS = formatWords()
const LEVELS = new Map([
  [0b01, 'L'],
  [0b00, 'M'],
  [0b11, 'Q'],
  [0b10, 'H'],
])

/**
 * The error correction level from the format information beside the top-left finder (row 8 and
 * column 8, skipping the timing pattern); either bit order is tried, and only a valid BCH word counts.
 */
export function ecLevelOf(m: Module): string | null {
  const cells: [number, number][] = []
  for (let c = 0; c <= 8; c++) if (c !== 6) cells.push([8, c])
  for (let r = 7; r >= 0; r--) if (r !== 6) cells.push([r, 8])
  const bits = cells.map(([r, c]) => (m(r, c) ? 1 : 0))
  for (const order of [bits, [...bits].reverse()]) {
    const word = order.slice(0, 15).reduce((acc: number, b) => (acc << 1) | b, 0)
    const data = WORDS.get(word)
    if (data !== undefined) return LEVELS.get(data >> 3) ?? null
  }
  return null
}
