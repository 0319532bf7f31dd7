/**
 * A fixed number of slots for some outside work (sockets to a resolver, requests to a registry), shared
 * by callers so that no one caller can hold them all: each may hold at most `perCaller` at once, and all
 * together at most `total`. Taking never waits: a caller over its share, or a full pool, is refused and
 * the work is reported as not done. Counts live in a map entry per caller holding a slot, deleted at zero.
 */
export interface CallerSlots {
  readonly total: number
  readonly perCaller: number
  /** Takes one slot for `caller`; false (nothing taken) when the caller holds its share or all are taken. */
  take(caller: string): boolean
  /** Gives back one slot `caller` took. */
  release(caller: string): void
  /** Slots `caller` holds, or all callers together without one. */
  held(caller?: string): number
  /** Takes refused so far because the caller held its share / because every slot was taken. */
  readonly refused: { share: number; full: number }
}

/** The default share: an eighth of the slots, at least 4 (a bulk of a few addresses), at most all of them. */
export const defaultShare = (total: number) => Math.min(total, Math.max(4, Math.floor(total / 8)))

export function callerSlots(total: number, perCaller = defaultShare(total)): CallerSlots {
  const byCaller = new Map<string, number>()
  let inUse = 0
  const refused = { share: 0, full: 0 }
  return {
    total,
    perCaller,
    refused,
    take(caller) {
      const mine = byCaller.get(caller) ?? 0
      if (mine >= perCaller) {
        refused.share++
        return false
      }
      if (inUse >= total) {
        refused.full++
        return false
      }
      byCaller.set(caller, mine + 1)
      inUse++
      return true
    },
    release(caller) {
      const mine = byCaller.get(caller) ?? 0
      if (mine <= 0) return
      if (mine === 1) byCaller.delete(caller)
      else byCaller.set(caller, mine - 1)
      inUse--
    },
    held: (caller) => (caller === undefined ? inUse : (byCaller.get(caller) ?? 0)),
  }
}
