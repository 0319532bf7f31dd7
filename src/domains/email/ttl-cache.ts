/**
 * A bounded cache whose entries expire: at most `maxEntries` entries and about `maxBytes` of payload
 * (each entry's size is estimated by the caller), least recently used out first. The clock is injected,
 * so tests step time instead of sleeping. Keys are outside input: a Map, never a plain object.
 */
export class TtlCache<V> {
  private readonly map = new Map<string, { value: V; expires: number; bytes: number }>()
  private bytes = 0

  constructor(
    private readonly maxEntries: number,
    private readonly maxBytes: number,
    private readonly now: () => number,
  ) {}

  get(key: string): V | undefined {
    const hit = this.map.get(key)
    if (!hit) return undefined
    if (hit.expires <= this.now()) {
      this.delete(key)
      return undefined
    }
    // Re-insert: Map order is recency order.
    this.map.delete(key)
    this.map.set(key, hit)
    return hit.value
  }

  /** Keeps `value` for `ttlMs`; a value bigger than the whole budget is not kept. */
  set(key: string, value: V, ttlMs: number, bytes: number) {
    this.delete(key)
    if (ttlMs <= 0 || bytes > this.maxBytes) return
    this.map.set(key, { value, expires: this.now() + ttlMs, bytes })
    this.bytes += bytes
    while (this.map.size > this.maxEntries || this.bytes > this.maxBytes) {
      const oldest = this.map.keys().next().value as string
      this.delete(oldest)
    }
  }

  delete(key: string) {
    const hit = this.map.get(key)
    if (!hit) return
    this.map.delete(key)
    this.bytes -= hit.bytes
  }

  get size() {
    return this.map.size
  }

  clear() {
    this.map.clear()
    this.bytes = 0
  }
}
