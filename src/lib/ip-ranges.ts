/**
 * Sorted, non-overlapping address ranges with a u32 value each (an ASN organisation index, or a bitmask
 * of the lists that flag the range), searched by binary search on typed arrays. IPv4 and IPv6 are kept
 * apart: IPv4 compares one u32, IPv6 four. Built once at dataset build time (or when operator lists are
 * loaded) and stored as raw little-endian arrays in a small container file, read without parsing.
 */
import { parseCidr } from './ip-address.ts'

export interface RangeTable {
  v4Start: Uint32Array
  v4End: Uint32Array
  v4Value: Uint32Array
  /** Four words per range, most significant first. */
  v6Start: Uint32Array
  v6End: Uint32Array
  v6Value: Uint32Array
  /**
   * For each value b of the first 16 bits, how many ranges start below b << 16 (65,537 entries):
   * a search starts in the address's own bucket, a few steps instead of ~18 over the whole table.
   */
  v4Buckets: Uint32Array
  v6Buckets: Uint32Array
}

/** Bucket index of sorted starts (`stride` words per start; the first word's top 16 bits bucket it). */
function buckets(starts: Uint32Array, stride: number): Uint32Array {
  const n = starts.length / stride
  const out = new Uint32Array(65537)
  let r = 0
  for (let b = 0; b <= 65536; b++) {
    while (r < n && starts[r * stride]! >>> 16 < b) r++
    out[b] = r
  }
  return out
}

/** A table over stored arrays (sorted by start, disjoint), with its bucket index built. */
export function rangeTable(
  v4Start: Uint32Array,
  v4End: Uint32Array,
  v4Value: Uint32Array,
  v6Start: Uint32Array,
  v6End: Uint32Array,
  v6Value: Uint32Array,
): RangeTable {
  return { v4Start, v4End, v4Value, v6Start, v6End, v6Value, v4Buckets: buckets(v4Start, 1), v6Buckets: buckets(v6Start, 4) }
}

export const NOT_FOUND = -1

/** Value of the range holding an IPv4 address, or NOT_FOUND. */
export function findV4(t: RangeTable, ip: number): number {
  const starts = t.v4Start
  const b = ip >>> 16
  // The last range starting at or before ip is between the last one before this bucket and the last in it.
  let lo = t.v4Buckets[b]! - 1
  let hi = t.v4Buckets[b + 1]! - 1
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1
    if (starts[mid]! <= ip) lo = mid
    else hi = mid - 1
  }
  return lo >= 0 && ip <= t.v4End[lo]! ? t.v4Value[lo]! : NOT_FOUND
}

/** Compares the address at row `i` of `arr` (four words a row) with w0..w3: -1, 0 or 1. */
const cmpAt = (arr: Uint32Array, i: number, w0: number, w1: number, w2: number, w3: number) => {
  const p = i * 4
  let a = arr[p]!
  if (a !== w0) return a < w0 ? -1 : 1
  a = arr[p + 1]!
  if (a !== w1) return a < w1 ? -1 : 1
  a = arr[p + 2]!
  if (a !== w2) return a < w2 ? -1 : 1
  a = arr[p + 3]!
  return a === w3 ? 0 : a < w3 ? -1 : 1
}

/** Value of the range holding an IPv6 address (four words), or NOT_FOUND. */
export function findV6(t: RangeTable, w: ArrayLike<number>): number {
  const w0 = w[0]!
  const w1 = w[1]!
  const w2 = w[2]!
  const w3 = w[3]!
  const b = w0 >>> 16
  let lo = t.v6Buckets[b]! - 1
  let hi = t.v6Buckets[b + 1]! - 1
  const starts = t.v6Start
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1
    if (cmpAt(starts, mid, w0, w1, w2, w3) <= 0) lo = mid
    else hi = mid - 1
  }
  return lo >= 0 && cmpAt(t.v6End, lo, w0, w1, w2, w3) >= 0 ? t.v6Value[lo]! : NOT_FOUND
}

/** One input range for building: inclusive bounds as BigInt (IPv4 and IPv6 in separate lists). */
export interface RawRange {
  start: bigint
  end: bigint
  value: number
}

export const wordsToBig = (w: ArrayLike<number>) => (BigInt(w[0]!) << 96n) | (BigInt(w[1]!) << 64n) | (BigInt(w[2]!) << 32n) | BigInt(w[3]!)
const bigToWords = (v: bigint, out: Uint32Array, at: number) => {
  for (let k = 3; k >= 0; k--) {
    out[at + k] = Number(v & 0xffffffffn)
    v >>= 32n
  }
}

/** A table from ranges that do not overlap (first one wins where they do), e.g. ASN rows. */
export function tableFromRanges(v4: RawRange[], v6: RawRange[]): RangeTable {
  const pack = (rows: RawRange[], wide: boolean) => {
    rows.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0))
    const kept: RawRange[] = []
    for (const r of rows) {
      const prev = kept[kept.length - 1]
      if (prev && r.start <= prev.end) continue
      kept.push(r)
    }
    const per = wide ? 4 : 1
    const start = new Uint32Array(kept.length * per)
    const end = new Uint32Array(kept.length * per)
    const value = new Uint32Array(kept.length)
    kept.forEach((r, i) => {
      if (wide) {
        bigToWords(r.start, start, i * 4)
        bigToWords(r.end, end, i * 4)
      } else {
        start[i] = Number(r.start)
        end[i] = Number(r.end)
      }
      value[i] = r.value
    })
    return { start, end, value }
  }
  const a = pack(v4, false)
  const b = pack(v6, true)
  return rangeTable(a.start, a.end, a.value, b.start, b.end, b.value)
}

/**
 * Overlapping ranges whose values are bits (one per list) -> disjoint ranges whose value is the OR of
 * the bits covering them, so one search answers every list at once.
 */
export function flattenBitRanges(v4: RawRange[], v6: RawRange[]): RangeTable {
  const flatten = (rows: RawRange[]): RawRange[] => {
    const events: { at: bigint; bit: number; delta: number }[] = []
    for (const r of rows) {
      events.push({ at: r.start, bit: r.value, delta: 1 }, { at: r.end + 1n, bit: r.value, delta: -1 })
    }
    events.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0))
    const counts = new Array(32).fill(0)
    const out: RawRange[] = []
    let i = 0
    while (i < events.length) {
      const at = events[i]!.at
      while (i < events.length && events[i]!.at === at) {
        const e = events[i]!
        for (let b = 0; b < 32; b++) if (e.bit & (1 << b)) counts[b] += e.delta
        i++
      }
      let mask = 0
      for (let b = 0; b < 32; b++) if (counts[b] > 0) mask |= 1 << b
      const last = out[out.length - 1]
      if (last && last.end === -1n) last.end = at - 1n // close the open segment
      if (mask !== 0) {
        if (last && last.value === mask >>> 0 && last.end === at - 1n)
          last.end = -1n // extend it
        else out.push({ start: at, end: -1n, value: mask >>> 0 })
      }
    }
    return out.filter((r) => r.end >= r.start)
  }
  return tableFromRanges(flatten(v4), flatten(v6))
}

/**
 * Parses a list file: one address or CIDR per line; `#` comments, blank lines, and
 * `scheme://host:port` proxy lines (the host is kept) are accepted. Returns ranges and bad lines.
 */
export function parseListText(
  text: string,
  bit: number,
): { v4: RawRange[]; v6: RawRange[]; bad: { line: number; text: string; why: string }[] } {
  const v4: RawRange[] = []
  const v6: RawRange[] = []
  const bad: { line: number; text: string; why: string }[] = []
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    let s = lines[i]!.replace(/#.*/, '').trim()
    if (!s) continue
    const url = /^[a-z0-9+.-]+:\/\/(\[[^\]]+\]|[^:/]+)(?::\d+)?\/?$/i.exec(s)
    if (url) s = url[1]!.replace(/^\[|\]$/g, '')
    const cidr = parseCidr(s)
    if (typeof cidr === 'string') {
      bad.push({ line: i + 1, text: s, why: cidr })
      continue
    }
    if (cidr.version === 4) v4.push({ start: BigInt(cidr.first[3]!), end: BigInt(cidr.last[3]!), value: bit })
    else v6.push({ start: wordsToBig(cidr.first), end: wordsToBig(cidr.last), value: bit })
  }
  return { v4, v6, bad }
}
