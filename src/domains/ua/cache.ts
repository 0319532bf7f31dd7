/**
 * The parse-result cache: two generations of Maps (hits are one lookup; when the young generation is
 * full, in entries or in key bytes, the old one is dropped whole: an LRU approximation without per-hit
 * bookkeeping). Keys are the UA plus the hints that matter, so memory is bounded by both limits.
 */
export class ResultCache<V> {
  private young = new Map<string, V>()
  private old = new Map<string, V>()
  private youngBytes = 0
  private oldBytes = 0

  /** Each generation holds at most `entries` entries and `bytes` of keys (2 bytes per character). */
  constructor(
    private readonly entries: number,
    private readonly bytes: number,
  ) {}

  get(key: string): V | undefined {
    if (this.entries <= 0) return undefined
    const hit = this.young.get(key)
    if (hit !== undefined) return hit
    const older = this.old.get(key)
    if (older !== undefined) this.set(key, older)
    return older
  }

  set(key: string, value: V) {
    if (this.entries <= 0) return
    const size = key.length * 2
    if (this.young.size >= this.entries || this.youngBytes + size > this.bytes) {
      this.old = this.young
      this.oldBytes = this.youngBytes
      this.young = new Map()
      this.youngBytes = 0
    }
    this.young.set(key, value)
    this.youngBytes += size
  }

  stats() {
    return { entries: this.young.size + this.old.size, bytes: this.youngBytes + this.oldBytes }
  }
}
