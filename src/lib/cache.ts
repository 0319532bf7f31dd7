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
