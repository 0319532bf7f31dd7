/**
 * Splits a payload into numeric, alphanumeric and byte segments so its bit stream is as short as
 * possible: the linear-time dynamic programme of ISO/IEC 18004 annex J's goal, in Project Nayuki's form
 * (one pass over the code points, costs in sixths of a bit). npm `qrcode`'s own optimiser builds a graph
 * and runs Dijkstra over it, which takes 25-35 ms on a 4,296-character text that alternates letters and
 * digits; this takes well under a millisecond, so no payload the SPEC allows holds the event loop long.
 */

export type SegmentMode = 'numeric' | 'alphanumeric' | 'byte'

export interface Segment {
  data: string
  mode: SegmentMode
}

const MODES: SegmentMode[] = ['byte', 'alphanumeric', 'numeric']

/** Character count indicator bits by mode, for versions 1-9, 10-26, 27-40. */
const COUNT_BITS: Record<SegmentMode, [number, number, number]> = { numeric: [10, 12, 14], alphanumeric: [9, 11, 13], byte: [8, 16, 16] }

/** The versions each count-indicator size applies to. */
export const VERSION_RANGES: [number, number][] = [
  [1, 9],
  [10, 26],
  [27, 40],
]

/** Per ASCII code: 2 a digit, 1 another alphanumeric character (0-9 A-Z space $%*+-./:), 0 byte mode only. */
const CLASS = new Uint8Array(128)
for (const c of '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:') CLASS[c.charCodeAt(0)] = c >= '0' && c <= '9' ? 2 : 1

/**
 * Optimal segments for versions in `range` (0, 1, 2 as in VERSION_RANGES). One pass over the code points
 * with charCodeAt (no array of characters: this runs three times on a maximal text, once per range).
 */
export function optimalSegments(text: string, range: 0 | 1 | 2): Segment[] {
  const n = text.length // UTF-16 units: at least as many as code points
  const head0 = (4 + COUNT_BITS.byte[range]) * 6
  const head1 = (4 + COUNT_BITS.alphanumeric[range]) * 6
  const head2 = (4 + COUNT_BITS.numeric[range]) * 6
  const heads = [head0, head1, head2]
  let p0 = head0
  let p1 = head1
  let p2 = head2
  // For each code point and each mode it may end in (3 slots), the mode the code point itself is encoded in.
  const from = new Int8Array(n * 3)
  /** UTF-16 index where each code point starts (one past the last: text.length). */
  const starts = new Int32Array(n + 1)
  const cur = [0, 0, 0]
  const modeOf = [0, 0, 0]
  const ends = [0, 0, 0]
  let count = 0
  for (let at = 0; at < n; count++) {
    starts[count] = at
    const unit = text.charCodeAt(at)
    let bytes: number
    let cls = 0
    if (unit < 0x80) {
      bytes = 1
      cls = CLASS[unit]!
      at++
    } else if (unit < 0x800) {
      bytes = 2
      at++
    } else if (unit >= 0xd800 && unit <= 0xdbff && at + 1 < n && (text.charCodeAt(at + 1) & 0xfc00) === 0xdc00) {
      bytes = 4 // a surrogate pair
      at += 2
    } else {
      bytes = 3 // a lone surrogate is encoded as U+FFFD: 3
      at++
    }
    cur[0] = p0 + bytes * 48
    modeOf[0] = 0
    const alnum = cls > 0
    cur[1] = alnum ? p1 + 33 : Infinity // 11 bits per 2 characters
    modeOf[1] = alnum ? 1 : -1
    const digit = cls === 2
    cur[2] = digit ? p2 + 20 : Infinity // 10 bits per 3 digits
    modeOf[2] = digit ? 2 : -1
    // Or end the segment after this character and start one of another mode.
    ends[0] = Math.ceil(cur[0]! / 6) * 6
    ends[1] = alnum ? Math.ceil(cur[1]! / 6) * 6 : Infinity
    ends[2] = digit ? Math.ceil(cur[2]! / 6) * 6 : Infinity
    for (let to = 0; to < 3; to++) {
      for (let f = 0; f < 3; f++) {
        if (f === to || modeOf[f]! < 0 || modeOf[f] !== f) continue
        const cost = ends[f]! + heads[to]!
        if (modeOf[to]! < 0 || cost < cur[to]!) {
          cur[to] = cost
          modeOf[to] = f
        }
      }
    }
    from[count * 3] = modeOf[0]!
    from[count * 3 + 1] = modeOf[1]!
    from[count * 3 + 2] = modeOf[2]!
    p0 = cur[0]!
    p1 = cur[1]!
    p2 = cur[2]!
  }
  starts[count] = n
  // Trace back from the cheapest final mode.
  let mode = p0 <= p1 && p0 <= p2 ? 0 : p1 <= p2 ? 1 : 2
  const modes = new Int8Array(count)
  for (let i = count - 1; i >= 0; i--) {
    mode = from[i * 3 + mode]!
    modes[i] = mode
  }
  const out: Segment[] = []
  let start = 0
  for (let i = 1; i <= count; i++) {
    if (i < count && modes[i] === modes[start]) continue
    out.push({ data: text.slice(starts[start]!, starts[i]!), mode: MODES[modes[start]!]! })
    start = i
  }
  return out
}

/**
 * Fewer bits than any segmentation of `text` takes in any version: each code point at its densest mode's
 * rate (a digit 10/3 bits, another alphanumeric character 5.5, anything else 8 per UTF-8 byte), without
 * headers. Lets the caller skip version ranges that cannot hold the text without segmenting for them.
 */
export function leastBits(text: string): number {
  let bits = 0
  for (let at = 0; at < text.length; at++) {
    const unit = text.charCodeAt(at)
    if (unit < 0x80) bits += CLASS[unit] === 2 ? 10 / 3 : CLASS[unit] === 1 ? 5.5 : 8
    else if (unit < 0x800) bits += 16
    else if ((unit & 0xfc00) === 0xdc00 && at > 0 && (text.charCodeAt(at - 1) & 0xfc00) === 0xd800)
      bits += 8 // 4 bytes a pair: 24 + 8
    else bits += 24
  }
  return Math.floor(bits)
}

/** Bits the segments take in versions of `range`: mode indicators, counts and data. */
export function segmentBits(segments: Segment[], range: 0 | 1 | 2): number {
  let bits = 0
  for (const s of segments) {
    const n = s.mode === 'byte' ? Buffer.byteLength(s.data, 'utf8') : s.data.length
    const data =
      s.mode === 'numeric'
        ? Math.floor(n / 3) * 10 + [0, 4, 7][n % 3]!
        : s.mode === 'alphanumeric'
          ? Math.floor(n / 2) * 11 + (n % 2) * 6
          : n * 8
    bits += 4 + COUNT_BITS[s.mode][range] + data
  }
  return bits
}
