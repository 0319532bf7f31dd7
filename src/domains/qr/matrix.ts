/**
 * Payload text -> QR matrix, by npm `qrcode`'s encoder core (ISO/IEC 18004; it picks the smallest version
 * and the best mask) over segments from `segments.ts` (numeric, alphanumeric and byte runs, optimal). Text is
 * encoded as UTF-8 in byte segments, without an ECI header: what zbar, ZXing and phone cameras expect.
 * A payload that does not fit in version 40 at the chosen level is a 422 stating that level's capacity.
 */
import * as ECLevel from 'qrcode/lib/core/error-correction-level.js'
import * as Mode from 'qrcode/lib/core/mode.js'
import { create } from 'qrcode/lib/core/qrcode.js'
import { getCapacity } from 'qrcode/lib/core/version.js'
import { AlmanacError } from '../../lib/errors.ts'
import { remask } from './mask.ts'
import { leastBits, optimalSegments, segmentBits, VERSION_RANGES, type Segment } from './segments.ts'

export const EC_LEVELS = ['L', 'M', 'Q', 'H'] as const
export type EcLevel = (typeof EC_LEVELS)[number]

/** Recovery capacity of each level (ISO/IEC 18004 table 13), for the docs. */
export const EC_RECOVERY: Record<EcLevel, string> = { L: '7%', M: '15%', Q: '25%', H: '30%' }

export interface QrMatrix {
  /** Modules per side (21 for version 1 ... 177 for version 40), quiet zone excluded. */
  size: number
  /** Row-major, 1 = dark. */
  data: Uint8Array
  /** QR version 1-40. */
  version: number
}

export interface Capacity {
  numeric: number
  alphanumeric: number
  bytes: number
}

const LEVEL = new Map<EcLevel, unknown>([
  ['L', ECLevel.L],
  ['M', ECLevel.M],
  ['Q', ECLevel.Q],
  ['H', ECLevel.H],
])

/** Largest version-40 payload at a level, by segment mode (L: 7089 digits, 4296 alphanumeric, 2953 bytes). */
export function capacityOf(level: EcLevel): Capacity {
  const ec = LEVEL.get(level)
  return {
    numeric: getCapacity(40, ec, Mode.NUMERIC),
    alphanumeric: getCapacity(40, ec, Mode.ALPHANUMERIC),
    bytes: getCapacity(40, ec, Mode.BYTE),
  }
}

/** Bits of data (segments, headers included) a version holds at a level. */
export const dataBits = (version: number, level: EcLevel): number => getCapacity(version, LEVEL.get(level), Mode.MIXED)

const TOO_BIG = 'The amount of data is too big to be stored in a QR Code'

/**
 * Segments for the smallest version that holds them: the optimum depends on the count-indicator sizes,
 * which change at versions 10 and 27, so each range is tried in turn (as Project Nayuki's encoder does).
 * When none fits, the largest range's segments go on to the encoder, which then reports the overflow.
 */
export function segmentsFor(payload: string, level: EcLevel): Segment[] {
  const ec = LEVEL.get(level)
  let segments: Segment[] = []
  const least = leastBits(payload)
  for (const range of [0, 1, 2] as const) {
    const capacity = getCapacity(VERSION_RANGES[range]![1], ec, Mode.MIXED)
    if (range < 2 && least > capacity) continue // a long text: no need to segment for smaller versions
    segments = optimalSegments(payload, range)
    const bits = segmentBits(segments, range)
    if (bits <= capacity) return segments
  }
  return segments
}

/** The matrix of `payload` at `level`; a payload over the capacity is a 422 naming `field`. */
export function encodeMatrix(payload: string, level: EcLevel, field: string): QrMatrix {
  let symbol
  try {
    // Mask 0 now, the chosen mask by `remask`: qrcode's own choice is the same, ~10x slower.
    symbol = create(segmentsFor(payload, level), { errorCorrectionLevel: level, maskPattern: 0 })
  } catch (e) {
    if ((e as Error).message !== TOO_BIG) throw e
    const c = capacityOf(level)
    const bytes = Buffer.byteLength(payload, 'utf8')
    const message =
      `does not fit in a QR code at error correction level ${level}: the payload is ${payload.length} characters (${bytes} bytes of ` +
      `UTF-8), ` +
      `and level ${level} holds at most ${c.numeric} digits, ${c.alphanumeric} alphanumeric characters (0-9, A-Z, space and $%*+-./:) ` +
      `or ${c.bytes} bytes; ` +
      (level === 'L' ? 'shorten it' : 'shorten it or choose a lower error_correction')
    throw new AlmanacError('invalid', `${field} ${message}.`, {
      errors: [{ in: 'body', field, message }],
      extra: { capacity: { error_correction: level, ...c }, payload_bytes: bytes },
    })
  }
  remask(symbol.modules, LEVEL.get(level))
  return { size: symbol.modules.size, data: symbol.modules.data, version: symbol.version }
}
