/**
 * A bounded cache with two generations: hits are Map lookups, and when the young generation is full
 * the old one is dropped whole — an LRU approximation with no per-hit bookkeeping.
 *
 * Bounded in entries, and in bytes when given a `weigh` (a cheap estimate of an entry's heap size): caches
 * keyed or filled by client text must be bounded in both, as a thousand entries of 14 KB each are 14 MB.
 * An entry heavier than half the byte budget is not kept at all.
 */
export class GenerationalCache<K, V> {
  private young = new Map<K, V>()
  private old = new Map<K, V>()
  private youngBytes = 0
  private oldBytes = 0

  constructor(
    private readonly size: number,
    private readonly maxBytes = Infinity,
    private readonly weigh?: (key: K, value: V) => number,
  ) {}

  get(key: K): V | undefined {
    const hit = this.young.get(key)
    if (hit !== undefined) return hit
    const older = this.old.get(key)
    if (older !== undefined) this.set(key, older)
    return older
  }

  set(key: K, value: V) {
    const bytes = this.weigh ? this.weigh(key, value) : 0
    if (bytes > this.maxBytes / 2) return
    // Each generation holds at most half the entries and half the bytes, so both together stay in bounds.
    if (this.young.size >= Math.max(1, Math.floor(this.size / 2)) || this.youngBytes + bytes > this.maxBytes / 2) {
      this.old = this.young
      this.oldBytes = this.youngBytes
      this.young = new Map()
      this.youngBytes = 0
    }
    this.young.set(key, value)
    this.youngBytes += bytes
  }

  /** Forgets one entry (its weight stays counted until its generation is dropped: a bound, not a tally). */
  delete(key: K) {
    this.young.delete(key)
    this.old.delete(key)
  }

  clear() {
    this.young.clear()
    this.old.clear()
    this.youngBytes = 0
    this.oldBytes = 0
  }

  /** Entries held and their weight, both generations. */
  stats() {
    return { entries: this.young.size + this.old.size, bytes: this.youngBytes + this.oldBytes }
  }
}

/**
 * A cache's doorkeeper: which keys were asked recently, in a fixed 4 bytes a slot (256 KiB by default), so
 * a cache can keep an answer only from its key's second asking. A stream of keys never asked twice (a UA
 * with a request id in it) would otherwise fill the cache with answers nobody asks for again, and each one
 * kept costs its freezing and the collector's work. Direct-mapped 32-bit hashes: a key is remembered until
 * another lands on its slot; two keys with one hash only let an answer in early.
 */
export class Doorkeeper {
  private readonly slots: Uint32Array
  private readonly mask: number

  constructor(bits = 16) {
    this.slots = new Uint32Array(2 ** bits)
    this.mask = 2 ** bits - 1
  }

  /** Whether `key` was asked before and is still remembered; it is remembered from now on either way. */
  askedBefore(key: string): boolean {
    // | 1: an empty slot (0) never reads as a key's hash.
    const hash = (Bun.hash.crc32(key) | 1) >>> 0
    const slot = hash & this.mask
    if (this.slots[slot] === hash) return true
    this.slots[slot] = hash
    return false
  }
}
