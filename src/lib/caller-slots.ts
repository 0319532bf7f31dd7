/**
 * A fixed number of slots for some outside work (sockets to a resolver, requests to a registry), shared
 * by callers so that no one caller can hold them all: each may hold at most `perCaller` at once, and all
 * together at most `total`. Taking never waits: a caller over its share, or a full pool, is refused and
 * the work is reported as not done. Counts live in a map entry per caller holding a slot, deleted at zero.
 * A take may weigh more than one slot (a job's bytes against a memory budget): the same rules, in units.
 */
export interface CallerSlots {
  readonly total: number
  readonly perCaller: number
  /** Takes `weight` slots for `caller`; false (nothing taken) when that would pass the caller's share or the total. */
  take(caller: string, weight?: number): boolean
  /** Gives back `weight` slots `caller` took. */
  release(caller: string, weight?: number): void
  /** Why taking `weight` for `caller` would be refused (`share` first, as `take` checks), or undefined; counts nothing. */
  refusal(caller: string, weight?: number): 'share' | 'full' | undefined
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
  const refusal = (caller: string, weight = 1) => {
    if ((byCaller.get(caller) ?? 0) + weight > perCaller) return 'share'
    if (inUse + weight > total) return 'full'
    return undefined
  }
  return {
    total,
    perCaller,
    refused,
    refusal,
    take(caller, weight = 1) {
      const why = refusal(caller, weight)
      if (why) {
        refused[why]++
        return false
      }
      byCaller.set(caller, (byCaller.get(caller) ?? 0) + weight)
      inUse += weight
      return true
    },
    release(caller, weight = 1) {
      const mine = byCaller.get(caller) ?? 0
      const given = Math.min(mine, weight)
      if (given <= 0) return
      if (mine === given) byCaller.delete(caller)
      else byCaller.set(caller, mine - given)
      inUse -= given
    },
    held: (caller) => (caller === undefined ? inUse : (byCaller.get(caller) ?? 0)),
  }
}
