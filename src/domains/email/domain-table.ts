/**
 * A set of domain names with a small bitmask each (which lists hold the name), stored as flat arrays:
 * the names' bytes back to back, their offsets, and an open-addressing hash table of (index, mask, hash)
 * entries. Opening is a few typed-array views over the artifact (no per-name objects on the heap), and a
 * lookup hashes the JS string's code units and compares bytes: no allocation, millions per second.
 * Names are lower-case ASCII (A-labels), so one code unit is one byte.
 */

export interface DomainTable {
  names: Uint8Array
  /** n + 1 entries: name i is names[offsets[i] .. offsets[i + 1]). */
  offsets: Uint32Array
  /**
   * Pairs (entry, hash), a power-of-two count of them. entry 0 is empty, otherwise `mask << 24 | index + 1`;
   * hash is the name's full hash. A probe that meets another name is told apart in the same cache line,
   * and a hit reads its mask there too: only the name's bytes are fetched from elsewhere (to compare).
   */
  slots: Uint32Array
}

/** Names at most (index + 1 must fit in 24 bits next to the 8-bit mask). */
export const MAX_NAMES = (1 << 24) - 2

/** FNV-1a over code units (ASCII names: the same as over bytes). */
function hashOf(s: string, from: number, to: number): number {
  let h = 0x811c9dc5
  for (let i = from; i < to; i++) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

function hashBytes(b: Uint8Array, from: number, to: number): number {
  let h = 0x811c9dc5
  for (let i = from; i < to; i++) {
    h ^= b[i]!
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

/** Builds the table from name -> mask (names already lower-case ASCII). */
export function buildDomainTable(entries: Map<string, number>): DomainTable {
  const sorted = [...entries.keys()].sort()
  const encoder = new TextEncoder()
  const total = sorted.reduce((n, name) => n + name.length, 0)
  const names = new Uint8Array(total)
  if (sorted.length > MAX_NAMES) throw new Error(`a domain table holds at most ${MAX_NAMES} names`)
  const offsets = new Uint32Array(sorted.length + 1)
  let at = 0
  sorted.forEach((name, i) => {
    offsets[i] = at
    names.set(encoder.encode(name), at)
    at += name.length
  })
  offsets[sorted.length] = at
  let size = 1
  while (size < sorted.length * 2) size <<= 1
  const count = Math.max(size, 2)
  const slots = new Uint32Array(count * 2)
  const mask = count - 1
  for (let i = 0; i < sorted.length; i++) {
    const h = hashBytes(names, offsets[i]!, offsets[i + 1]!)
    let slot = h & mask
    while (slots[slot * 2] !== 0) slot = (slot + 1) & mask
    const m = entries.get(sorted[i]!)!
    if (m < 1 || m > 255) throw new Error(`mask ${m} of ${sorted[i]} is not 1-255`)
    slots[slot * 2] = ((m << 24) | (i + 1)) >>> 0
    slots[slot * 2 + 1] = h
  }
  return { names, offsets, slots }
}

/**
 * The mask of `s.slice(from, to)` (a lower-case ASCII name), or 0 when the table does not hold it.
 * Taking a range lets callers try a name's parents without slicing strings.
 */
export function maskOf(t: DomainTable, s: string, from = 0, to = s.length): number {
  const length = to - from
  const mask = (t.slots.length >>> 1) - 1
  const h = hashOf(s, from, to)
  let slot = h & mask
  for (;;) {
    const entry = t.slots[slot * 2]!
    if (entry === 0) return 0
    if (t.slots[slot * 2 + 1] === h) {
      const i = (entry & 0xffffff) - 1
      const start = t.offsets[i]!
      if (t.offsets[i + 1]! - start === length) {
        let j = 0
        while (j < length && t.names[start + j] === s.charCodeAt(from + j)) j++
        if (j === length) return entry >>> 24
      }
    }
    slot = (slot + 1) & mask
  }
}
