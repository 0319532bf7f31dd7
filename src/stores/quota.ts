/**
 * Quota counters: windows of N credits per subject and plan. A consume either takes all `cost` credits or
 * none (a bulk request that does not fit is refused whole); a refund gives credits back to the window they
 * were taken in (a request admitted on its headers and then answered 503 spends nothing). A fixed window
 * (`1h`, `30d`) is aligned to multiples of its length since the Unix epoch; a monthly one (`1mo`) is the UTC
 * calendar month. Either way every instance and store computes the same window from the clock alone, so
 * they agree on when one resets (`quotaWindow`).
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
  /** The window's length: for a monthly plan, this month's (what RateLimit-Policy's `w` reports). */
  windowSeconds: number
}

/**
 * Memory and SQLite answer at once; Redis answers with a promise (and SQLite while another process hands the
 * file over, quota-sqlite.ts). The request path takes either, so the local stores cost no promise per request.
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

/** A window in Unix seconds: from `start` (included) to `end` (excluded). */
export interface QuotaWindow {
  start: number
  end: number
}

/** The last calendar month asked for: a month's requests all fall in it, so its dates are computed once. */
let month: QuotaWindow = { start: 0, end: 0 }

const monthHolding = (seconds: number): QuotaWindow => {
  if (seconds >= month.start && seconds < month.end) return month
  const date = new Date(seconds * 1000)
  const [year, index] = [date.getUTCFullYear(), date.getUTCMonth()]
  month = { start: Date.UTC(year, index, 1) / 1000, end: Date.UTC(year, index + 1, 1) / 1000 }
  return month
}

/** The window of `plan` holding `now` (ms). */
export function quotaWindow(plan: Plan, now: number): QuotaWindow {
  if (plan.calendar === 'month') return monthHolding(Math.floor(now / 1000))
  const start = Math.floor(now / 1000 / plan.windowSeconds) * plan.windowSeconds
  return { start, end: start + plan.windowSeconds }
}

/** End of the window that starts at `start`. */
export const windowEnd = (plan: Plan, start: number) => (plan.calendar === 'month' ? monthHolding(start).end : start + plan.windowSeconds)

/**
 * How a store tells a plan's counters apart from another window length under the same plan name (a plan
 * changed from `1h` to `1d` starts afresh): the length in seconds, 0 for the calendar month.
 */
export const windowKey = (plan: Plan) => (plan.calendar === 'month' ? 0 : plan.windowSeconds)

/** The state after a consume given the window's start, the credits used in it (after it) and whether it fit. */
export const quotaState = (plan: Plan, start: number, used: number, allowed: boolean): QuotaState => {
  const reset = windowEnd(plan, start)
  return {
    allowed,
    policy: plan.name,
    limit: plan.credits,
    remaining: Math.max(0, plan.credits - used),
    reset,
    windowSeconds: reset - start,
  }
}

/** One subject's credits in one window of one plan. `pending`: spent here and not yet written out (quota-sqlite.ts). */
export interface Counter {
  subject: string
  plan: string
  key: number
  window: number
  used: number
  pending: number
}

/**
 * Counters by subject, then by plan name and window key: no key string built per request. `load` gives
 * a counter made now its count (the memory store starts from 0; the SQLite store from its file).
 */
export class CounterTable {
  private readonly bySubject = new Map<string, Map<string, Counter[]>>()
  private sweptAt = 0

  constructor(private readonly load: (subject: string, plan: Plan, window: number) => number = () => 0) {}

  /** The subject's counter for the plan, moved on to `window` if it was in an earlier one. */
  get(subject: string, plan: Plan, window: number): Counter {
    let plans = this.bySubject.get(subject)
    if (!plans) this.bySubject.set(subject, (plans = new Map()))
    let entries = plans.get(plan.name)
    if (!entries) plans.set(plan.name, (entries = []))
    const key = windowKey(plan)
    let entry = entries.find((e) => e.key === key)
    if (!entry) {
      entry = { subject, plan: plan.name, key, window, used: this.load(subject, plan, window), pending: 0 }
      entries.push(entry)
    }
    // A past window's count, and what of it is unwritten, no longer decides anything.
    if (entry.window < window) Object.assign(entry, { window, used: 0, pending: 0 })
    return entry
  }

  /** Forgets counters of past windows now and then (`now` in ms), so the table holds only recent subjects. */
  sweep(now: number) {
    if (this.bySubject.size <= 10_000 || now - this.sweptAt < 60_000) return
    this.sweptAt = now
    const seconds = now / 1000
    for (const [who, plans] of this.bySubject) {
      for (const [name, entries] of plans) {
        // Past the longest window a counter can have (a 31-day month) or its own length: gone.
        const live = entries.filter((e) => e.pending !== 0 || e.window + (e.key || 31 * 86400) > seconds)
        if (live.length) plans.set(name, live)
        else plans.delete(name)
      }
      if (!plans.size) this.bySubject.delete(who)
    }
  }

  clear() {
    this.bySubject.clear()
  }
}

/** Spends `cost` from `counter` if it fits; the change is also added to `pending`. */
export function spend(counter: Counter, plan: Plan, cost: number): boolean {
  const allowed = counter.used + cost <= plan.credits
  if (allowed) {
    counter.used += cost
    counter.pending += cost
  }
  return allowed
}

/** Gives back up to `credits` (never below zero); `pending` follows. */
export function giveBack(counter: Counter, credits: number) {
  const back = Math.min(counter.used, credits)
  counter.used -= back
  counter.pending -= back
}

export function memoryQuotaStore(): QuotaStore {
  const counters = new CounterTable()
  const state = (subject: string, plan: Plan, cost: number, now: number): QuotaState => {
    const window = quotaWindow(plan, now).start
    counters.sweep(now)
    const counter = counters.get(subject, plan, window)
    const allowed = spend(counter, plan, cost)
    return quotaState(plan, window, counter.used, allowed)
  }
  return {
    consume: (subject, plan, cost, now = Date.now()) => state(subject, plan, cost, now),
    refund(subject, plan, credits, now = Date.now()) {
      const window = quotaWindow(plan, now).start
      const counter = counters.get(subject, plan, window)
      // A counter already moved on to a later window holds none of these credits.
      if (counter.window !== window) return quotaState(plan, window, 0, true)
      giveBack(counter, credits)
      return quotaState(plan, window, counter.used, true)
    },
    peek: (subject, plan, now = Date.now()) => state(subject, plan, 0, now),
    close() {
      counters.clear()
    },
  }
}
