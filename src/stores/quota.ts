/**
 * Quota counters: fixed windows of N credits per subject. A consume either takes all `cost` credits or
 * none (a bulk request that does not fit is refused whole).
 */
import type { Plan } from '../config.ts'

export interface QuotaState {
  allowed: boolean
  /** Credits in the window. */
  limit: number
  /** Credits left after this request. */
  remaining: number
  /** Unix seconds when the window resets. */
  reset: number
  windowSeconds: number
}

export interface QuotaStore {
  consume(subject: string, plan: Plan, cost: number, now?: number): Promise<QuotaState>
  /** The current state without spending anything. */
  peek(subject: string, plan: Plan, now?: number): Promise<QuotaState>
  close(): Promise<void> | void
}

const windowStart = (plan: Plan, now: number) => Math.floor(now / 1000 / plan.windowSeconds) * plan.windowSeconds

export function memoryQuotaStore(): QuotaStore {
  const used = new Map<string, { window: number; used: number }>()
  const state = (subject: string, plan: Plan, cost: number, now: number): QuotaState => {
    const window = windowStart(plan, now)
    const key = `${plan.name}\0${subject}`
    let entry = used.get(key)
    if (!entry || entry.window !== window) used.set(key, (entry = { window, used: 0 }))
    const allowed = cost === 0 || entry.used + cost <= plan.credits
    if (allowed) entry.used += cost
    return { allowed, limit: plan.credits, remaining: Math.max(0, plan.credits - entry.used), reset: window + plan.windowSeconds, windowSeconds: plan.windowSeconds }
  }
  return {
    async consume(subject, plan, cost, now = Date.now()) {
      return state(subject, plan, cost, now)
    },
    async peek(subject, plan, now = Date.now()) {
      return state(subject, plan, 0, now)
    },
    close() {},
  }
}
