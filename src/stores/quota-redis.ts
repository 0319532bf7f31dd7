/**
 * Quota counters in Redis, shared by every instance that points at the same server. A consume is one
 * Lua script (Redis runs a script alone, so read-decide-increment is atomic across all clients), and so is
 * a refund; one key per subject and window (its start in the name: a calendar month's too), expiring a
 * minute after the window ends.
 *
 * Redis may go away and come back: commands fail fast while it is unreachable (no offline queue, a
 * timeout on every command), the caller turns that into a 503 or lets the request through (fail-open),
 * and the next request after a short back-off dials again, so service resumes by itself.
 */
import type { Plan } from '../config.ts'
import { redisConnection, type RedisConnection, type RedisOptions } from './redis.ts'
import { quotaState, quotaWindow, type QuotaStore } from './quota.ts'

/** KEYS[1] counter; ARGV cost, credits, ttl. Returns {allowed, used after}. */
const CONSUME = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local cost = tonumber(ARGV[1])
if used + cost > tonumber(ARGV[2]) then return {0, used} end
used = redis.call('INCRBY', KEYS[1], cost)
if used == cost then redis.call('EXPIRE', KEYS[1], ARGV[3]) end
return {1, used}
`

/** KEYS[1] counter; ARGV credits to give back. Returns the count after (never below zero). */
const REFUND = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local give = math.min(used, tonumber(ARGV[1]))
if give > 0 then used = redis.call('DECRBY', KEYS[1], give) end
return used
`

export interface RedisQuotaOptions extends RedisOptions {
  keyPrefix?: string
  /** A connection already open (the lease wrapper shares it, quota-leases.ts); else one is opened for `url`. */
  connection?: RedisConnection
}

export const QUOTA_KEY_PREFIX = 'almanac:quota:'

/** The counter of `subject` in the window starting at `window`: a monthly plan's keys say `1mo` where a fixed one's say its length. */
export const quotaKey = (keyPrefix: string, subject: string, plan: Plan, window: number) =>
  `${keyPrefix}${plan.name}:${plan.calendar === 'month' ? '1mo' : plan.windowSeconds}:${window}:${subject}`

/** Seconds a window's key lives: to the window's end and a minute more, so a clock a little behind still finds it. */
export const quotaKeyTtl = (end: number, now: number) => String(Math.max(1, end - Math.floor(now / 1000)) + 60)

export function redisQuotaStore(url: string, options: RedisQuotaOptions = {}): QuotaStore {
  const { keyPrefix = QUOTA_KEY_PREFIX, connection, ...rest } = options
  const redis = connection ?? redisConnection(url, { role: 'quota store', ...rest })
  const consume = redis.script(CONSUME)
  const refund = redis.script(REFUND)

  const keyOf = (subject: string, plan: Plan, window: number) => quotaKey(keyPrefix, subject, plan, window)

  return {
    async consume(subject, plan, cost, now = Date.now()) {
      const { start, end } = quotaWindow(plan, now)
      const key = keyOf(subject, plan, start)
      const ttl = quotaKeyTtl(end, now)
      const reply: [number, number] = await consume([key], [String(cost), String(plan.credits), ttl])
      return quotaState(plan, start, Number(reply[1]), reply[0] === 1)
    },
    async refund(subject, plan, credits, now = Date.now()) {
      // The key names the window the credits were taken in, so a refund never reaches a later one.
      const window = quotaWindow(plan, now).start
      const used: number = await refund([keyOf(subject, plan, window)], [String(credits)])
      return quotaState(plan, window, Number(used), true)
    },
    async peek(subject, plan, now = Date.now()) {
      const window = quotaWindow(plan, now).start
      const used = Number((await redis.command('GET', [keyOf(subject, plan, window)])) ?? 0)
      return quotaState(plan, window, used, true)
    },
    check: () => redis.check(),
    close: () => redis.close(),
  }
}
