/**
 * Quota counters: fixed windows of N credits per subject and plan. A consume either takes all `cost`
 * credits or none (a bulk request that does not fit is refused whole); a refund gives credits back to the
 * window they were taken in (a request admitted on its headers and then answered 503 spends nothing). Windows are aligned to multiples
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

/**
 * Memory and SQLite answer at once; Redis answers with a promise. The request path takes either, so the
 * local stores cost no promise per request.
 */
export type Answer<T> = T | Promise<T>

export interface QuotaStore {
  /** Spends `cost` credits if all fit; `cost` 0 spends nothing. Throws or rejects if the store is unreachable. */
  consume(subject: string, plan: Plan, cost: number, now?: number): Answer<QuotaState>
  /**
   * Gives back `credits` taken at `now` (the consume's time): only to that window (once it has ended
   * there is nothing to give back to) and never below zero. Atomic like consume; returns the state after.
   */
  refund(subject: string, plan: Plan, credits: number, now?: number): Answer<QuotaState>
  /** The current state without spending anything. */
  peek(subject: string, plan: Plan, now?: number): Answer<QuotaState>
  close(): Promise<void> | void
  /** For /readyz: null when the store answers, else why not (only stores that can be unreachable have it). */
  check?(): Promise<string | null>
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
  /** Counters by subject, then by plan (name and window length): no key string built per request. */
  const used = new Map<string, Map<string, Counter[]>>()
  let sweptAt = 0
  /** The subject's counter for the plan, made when absent; its window may be a past one. */
  const counterOf = (subject: string, plan: Plan, window: number): Counter => {
    let plans = used.get(subject)
    if (!plans) used.set(subject, (plans = new Map()))
    let entries = plans.get(plan.name)
    if (!entries) plans.set(plan.name, (entries = []))
    let entry = entries.find((e) => e.windowSeconds === plan.windowSeconds)
    if (!entry) entries.push((entry = { windowSeconds: plan.windowSeconds, window, used: 0 }))
    return entry
  }
  const state = (subject: string, plan: Plan, cost: number, now: number): QuotaState => {
    const window = windowStart(plan, now)
    // Forget counters of past windows now and then, so the map holds only recent subjects.
    if (used.size > 10_000 && now - sweptAt > 60_000) {
      sweptAt = now
      for (const [who, plans] of used) {
        for (const [name, entries] of plans) {
          const live = entries.filter((e) => e.window + e.windowSeconds > now / 1000)
          if (live.length) plans.set(name, live)
          else plans.delete(name)
        }
        if (!plans.size) used.delete(who)
      }
    }
    const entry = counterOf(subject, plan, window)
    if (entry.window !== window) {
      entry.window = window
      entry.used = 0
    }
    const allowed = entry.used + cost <= plan.credits
    if (allowed) entry.used += cost
    return quotaState(plan, window, entry.used, allowed)
  }
  return {
    consume: (subject, plan, cost, now = Date.now()) => state(subject, plan, cost, now),
    refund(subject, plan, credits, now = Date.now()) {
      const window = windowStart(plan, now)
      const entry = counterOf(subject, plan, window)
      // A counter already moved on to a later window holds none of these credits.
      if (entry.window !== window) return quotaState(plan, window, 0, true)
      entry.used = Math.max(0, entry.used - credits)
      return quotaState(plan, window, entry.used, true)
    },
    peek: (subject, plan, now = Date.now()) => state(subject, plan, 0, now),
    close() {
      used.clear()
    },
  }
}

interface Counter {
  windowSeconds: number
  window: number
  used: number
}
