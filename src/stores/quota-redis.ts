/**
 * Quota counters in Redis, shared by every instance that points at the same server. A consume is one
 * Lua script (Redis runs a script alone, so read-decide-increment is atomic across all clients); one key
 * per subject and window, expiring shortly after the window ends.
 *
 * Redis may go away and come back: commands fail fast while it is unreachable (no offline queue, a
 * timeout on every command), the caller turns that into a 503 or lets the request through (fail-open),
 * and the next request after a short back-off dials again, so service resumes by itself.
 */
import { RedisClient } from 'bun'
import type { Plan } from '../config.ts'
import { quotaState, windowStart, type QuotaStore } from './quota.ts'

/** KEYS[1] counter; ARGV cost, credits, ttl. Returns {allowed, used after}. */
const CONSUME = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local cost = tonumber(ARGV[1])
if used + cost > tonumber(ARGV[2]) then return {0, used} end
used = redis.call('INCRBY', KEYS[1], cost)
if used == cost then redis.call('EXPIRE', KEYS[1], ARGV[3]) end
return {1, used}
`
const CONSUME_SHA = new Bun.CryptoHasher('sha1').update(CONSUME).digest('hex')

export interface RedisQuotaOptions {
  /** Milliseconds a command (or a connection attempt) may take before the store counts as down. */
  timeoutMs?: number
  /** Longest pause between connection attempts while Redis is down. */
  maxBackoffMs?: number
  keyPrefix?: string
  log?: (line: string) => void
}

/** The URL without its password, for messages. */
export const redactUrl = (url: string) =>
  url.replace(/\/\/([^@/]*)@/, (_, auth: string) => `//${auth.includes(':') ? auth.slice(0, auth.indexOf(':')) + ':***' : '***'}@`)

export function redisQuotaStore(url: string, options: RedisQuotaOptions = {}): QuotaStore {
  const { timeoutMs = 1000, maxBackoffMs = 2000, keyPrefix = 'almanac:quota:', log = () => {} } = options
  const where = redactUrl(url)
  let client: RedisClient | null = null
  let connecting: Promise<RedisClient> | null = null
  let failures = 0
  let retryAt = 0
  let lastError = ''
  let closed = false

  const withTimeout = <T>(p: Promise<T>, what: string): Promise<T> => {
    let timer: Timer
    return Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} took longer than ${timeoutMs} ms`)), timeoutMs)
      }),
    ]).finally(() => clearTimeout(timer))
  }

  const down = (e: unknown) => {
    const message = (e as Error)?.message ?? String(e)
    if (!failures) log(JSON.stringify({ level: 'error', msg: 'quota store unreachable', store: where, error: message }))
    failures++
    lastError = message
    retryAt = Date.now() + Math.min(maxBackoffMs, 50 * 2 ** Math.min(failures, 10))
    const old = client
    client = null
    old?.close()
  }

  const connection = (): Promise<RedisClient> => {
    if (closed) return Promise.reject(new Error('the quota store is closed'))
    if (client?.connected) return Promise.resolve(client)
    if (connecting) return connecting
    if (Date.now() < retryAt) return Promise.reject(new Error(`Redis at ${where} is unreachable (${lastError})`))
    const fresh = new RedisClient(url, { autoReconnect: false, enableOfflineQueue: false, connectionTimeout: timeoutMs })
    fresh.onclose = () => {}
    connecting = withTimeout(fresh.connect(), `connecting to Redis at ${where}`)
      .then(() => {
        if (failures) log(JSON.stringify({ level: 'info', msg: 'quota store reachable again', store: where }))
        failures = 0
        client = fresh
        return fresh
      })
      .catch((e) => {
        fresh.close()
        down(e)
        throw new Error(`Redis at ${where} is unreachable (${lastError})`)
      })
      .finally(() => {
        connecting = null
      })
    return connecting
  }

  /** One command; a connection or timeout failure marks the store down (a Redis error reply does not). */
  const command = async (name: string, args: string[]): Promise<any> => {
    const c = await connection()
    try {
      return await withTimeout(c.send(name, args), `Redis ${name}`)
    } catch (e) {
      if ((e as { code?: string }).code === 'ERR_REDIS_SERVER_ERROR') throw e
      if (c === client) down(e)
      throw new Error(`Redis at ${where} is unreachable (${(e as Error).message})`)
    }
  }

  const keyOf = (subject: string, plan: Plan, window: number) => `${keyPrefix}${plan.name}:${plan.windowSeconds}:${window}:${subject}`

  return {
    async consume(subject, plan, cost, now = Date.now()) {
      const window = windowStart(plan, now)
      const key = keyOf(subject, plan, window)
      // Kept a minute past the window's end so a clock a little behind still finds it.
      const ttl = String(Math.max(1, window + plan.windowSeconds - Math.floor(now / 1000)) + 60)
      const args = ['1', key, String(cost), String(plan.credits), ttl]
      let reply: [number, number]
      try {
        reply = await command('EVALSHA', [CONSUME_SHA, ...args])
      } catch (e) {
        if (!String((e as Error).message).startsWith('NOSCRIPT')) throw e
        reply = await command('EVAL', [CONSUME, ...args])
      }
      return quotaState(plan, window, Number(reply[1]), reply[0] === 1)
    },
    async peek(subject, plan, now = Date.now()) {
      const window = windowStart(plan, now)
      const used = Number((await command('GET', [keyOf(subject, plan, window)])) ?? 0)
      return quotaState(plan, window, used, true)
    },
    async check() {
      try {
        await command('PING', [])
        return null
      } catch (e) {
        return (e as Error).message
      }
    },
    close() {
      closed = true
      client?.close()
      client = null
    },
  }
}
