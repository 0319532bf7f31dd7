/**
 * Quota counters: fixed windows of N credits per subject and plan. A consume either takes all `cost`
 * credits or none (a bulk request that does not fit is refused whole). Windows are aligned to multiples
 * of the plan's length since the Unix epoch, so every instance and store agrees on when one resets.
 * Stores: memory (this file), sqlite (`quota-sqlite.ts`), redis (`quota-redis.ts`); `index.ts` picks one.
 */
import type { Plan } from '../config.ts'

export interface QuotaState {
  allowed: boolean
  /** The plan's name (the IETF RateLimit policy name). */
  policy: string
  /** Credits in the window. */
  limit: number
  /** Credits left after this request. */
  remaining: number
  /** Unix seconds when the window resets. */
  reset: number
  windowSeconds: number
}

export interface QuotaStore {
  /** Spends `cost` credits if all fit; `cost` 0 spends nothing. Rejects if the store is unreachable. */
  consume(subject: string, plan: Plan, cost: number, now?: number): Promise<QuotaState>
  /** The current state without spending anything. */
  peek(subject: string, plan: Plan, now?: number): Promise<QuotaState>
  close(): Promise<void> | void
}

/** Start of the window holding `now` (ms), in Unix seconds. */
export const windowStart = (plan: Plan, now: number) => Math.floor(now / 1000 / plan.windowSeconds) * plan.windowSeconds

/** The state after a consume given the credits used in the window (after it) and whether it fit. */
export const quotaState = (plan: Plan, window: number, used: number, allowed: boolean): QuotaState => ({
  allowed,
  policy: plan.name,
  limit: plan.credits,
  remaining: Math.max(0, plan.credits - used),
  reset: window + plan.windowSeconds,
  windowSeconds: plan.windowSeconds,
})

export function memoryQuotaStore(): QuotaStore {
  const used = new Map<string, { window: number; used: number }>()
  let sweptWindow = 0
  const state = (subject: string, plan: Plan, cost: number, now: number): QuotaState => {
    const window = windowStart(plan, now)
    // Forget counters of past windows now and then, so the map holds only recent subjects.
    if (used.size > 10_000 && now - sweptWindow > 60_000) {
      sweptWindow = now
      for (const [k, e] of used) if (e.window + Number(k.slice(0, k.indexOf('\0'))) <= now / 1000) used.delete(k)
    }
    const key = `${plan.windowSeconds}\0${plan.name}\0${subject}`
    let entry = used.get(key)
    if (!entry || entry.window !== window) used.set(key, (entry = { window, used: 0 }))
    const allowed = entry.used + cost <= plan.credits
    if (allowed) entry.used += cost
    return quotaState(plan, window, entry.used, allowed)
  }
  return {
    async consume(subject, plan, cost, now = Date.now()) {
      return state(subject, plan, cost, now)
    },
    async peek(subject, plan, now = Date.now()) {
      return state(subject, plan, 0, now)
    },
    close() {
      used.clear()
    },
  }
}
