/**
 * A bounded cache with two generations: hits are Map lookups, and when the young generation is full
 * the old one is dropped whole — an LRU approximation with no per-hit bookkeeping.
 */
export class GenerationalCache<K, V> {
  private young = new Map<K, V>()
  private old = new Map<K, V>()

  constructor(private readonly size: number) {}

  get(key: K): V | undefined {
    const hit = this.young.get(key)
    if (hit !== undefined) return hit
    const older = this.old.get(key)
    if (older !== undefined) this.set(key, older)
    return older
  }

  set(key: K, value: V) {
    if (this.young.size >= this.size) {
      this.old = this.young
      this.young = new Map()
    }
    this.young.set(key, value)
  }

  clear() {
    this.young.clear()
    this.old.clear()
  }
}
