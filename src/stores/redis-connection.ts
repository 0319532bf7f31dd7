/**
 * What every Redis connection of the stores is, whatever the topology behind it (redis.ts: one node on
 * Bun's client; redis-topology.ts: a cluster or Sentinel group on ioredis), and the parts they share.
 */
import { readFileSync } from 'node:fs'
import type { Logger, LogSink } from '../lib/logger.ts'

export interface RedisOptions {
  /** Milliseconds a command (or a connection attempt) may take before the store counts as down. */
  timeoutMs?: number
  /** Longest pause between connection attempts while Redis is down. */
  maxBackoffMs?: number
  log?: LogSink
  /** What the connection serves, for log lines ("quota store", "key store"). */
  role?: string
}

export interface RedisConnection {
  /** One command; a connection failure or timeout marks the store down (a Redis error reply does not). */
  command(name: string, args: string[]): Promise<any>
  /** A Lua script by its SHA-1, loaded on first use (EVALSHA, then EVAL on NOSCRIPT). */
  script(source: string): (keys: string[], args: string[]) => Promise<any>
  /** null when Redis answers PING, else why not. */
  check(): Promise<string | null>
  /**
   * Keeps `channel` subscribed on a connection of its own, dialling again (with the back-off) whenever it is lost.
   * Messages published while no subscription was live are never delivered: `handlers.live` says when that may be.
   */
  subscribe(channel: string, handlers: SubscribeHandlers): Subscription
  close(): void
  /**
   * True on a Redis Cluster: the keys one script touches must then share a hash tag (one slot). A single
   * node or a Sentinel group has one master holding every key, so the stores keep their untagged names there.
   */
  readonly cluster: boolean
}

export interface SubscribeHandlers {
  message(text: string): void
  /** Told each time the subscription comes up (the SUBSCRIBE is confirmed) or goes down (its connection is lost). */
  live?(live: boolean): void
}

export interface Subscription {
  /** True while the channel is subscribed on a connection that is up: every message published is being heard. */
  readonly live: boolean
  close(): void
}

/**
 * Subscribes on a fresh connection: resolves, once the SUBSCRIBE is confirmed, to what closes that connection;
 * `lost` is called when it ends. `attempt` counts the dials since the last one that held (a topology picks its node by it).
 */
export type SubscribeDial = (attempt: number, message: (text: string) => void, lost: () => void) => Promise<() => void>

/** A subscription kept up by `dial`, dialled again after `backoff(attempt)` ms whenever it fails or is lost. */
export function keepSubscribed(dial: SubscribeDial, handlers: SubscribeHandlers, backoff: (attempt: number) => number): Subscription {
  let live = false
  let closed = false
  let attempt = 0
  let hangUp: (() => void) | null = null
  let timer: Timer | undefined
  const setLive = (now: boolean) => {
    if (live === now) return
    live = now
    handlers.live?.(now)
  }
  const connect = () => {
    if (closed) return
    let ended = false
    const lost = () => {
      if (ended) return
      ended = true
      hangUp?.()
      hangUp = null
      setLive(false)
      if (closed) return
      timer = setTimeout(connect, backoff(++attempt))
      timer.unref()
    }
    dial(attempt, (text) => !ended && handlers.message(text), lost).then((close) => {
      if (ended || closed) return close()
      hangUp = close
      attempt = 0
      setLive(true)
    }, lost)
  }
  connect()
  return {
    get live() {
      return live
    },
    close() {
      closed = true
      clearTimeout(timer)
      hangUp?.()
      hangUp = null
      setLive(false)
    },
  }
}

/** The URL without its passwords (the user's, and a Sentinel group's `sentinel_password`), for messages. */
export const redactUrl = (url: string) =>
  url
    .replace(/\/\/([^@/]*)@/, (_, auth: string) => `//${auth.includes(':') ? auth.slice(0, auth.indexOf(':')) + ':***' : '***'}@`)
    .replace(/(sentinel_password=)[^&]*/, '$1***')

/** Rejects when `p` has not settled within `timeoutMs`: no command waits longer than the store's timeout. */
export function withTimeout<T>(p: Promise<T>, what: string, timeoutMs: number): Promise<T> {
  let timer: Timer
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} took longer than ${timeoutMs} ms`)), timeoutMs)
    }),
  ]).finally(() => clearTimeout(timer))
}

/** A Lua script by its SHA-1 over `command`: EVALSHA, then EVAL when this node has not seen it (NOSCRIPT). */
export function scriptOver(command: RedisConnection['command']): RedisConnection['script'] {
  return (source) => {
    const sha = new Bun.CryptoHasher('sha1').update(source).digest('hex')
    return async (keys, args) => {
      const all = [String(keys.length), ...keys, ...args]
      try {
        return await command('EVALSHA', [sha, ...all])
      } catch (e) {
        if (!String((e as Error).message).startsWith('NOSCRIPT')) throw e
        return command('EVAL', [source, ...all])
      }
    }
  }
}

/** PING as /readyz asks it: null when answered, else why not. */
export const checkOver = (command: RedisConnection['command']) => async (): Promise<string | null> => {
  try {
    await command('PING', [])
    return null
  } catch (e) {
    return (e as Error).message
  }
}

/**
 * The URL without its `ca` query parameter, and the PEM that parameter names (`rediss://…?ca=/etc/almanac/redis-ca.pem`):
 * the CA a store trusts for its Redis's certificate, besides the system's, per store URL (a private CA need not be
 * trusted by the whole process, as NODE_EXTRA_CA_CERTS would make it). Read once, when the store is made: a
 * missing file is a start-up error, not an outage.
 */
export function caOf(url: string): { url: string; ca?: string } {
  const q = url.indexOf('?')
  if (q < 0) return { url }
  const query = new URLSearchParams(url.slice(q + 1))
  const path = query.get('ca')
  if (path === null) return { url }
  query.delete('ca')
  const rest = query.toString()
  const bare = url.slice(0, q) + (rest ? `?${rest}` : '')
  try {
    return { url: bare, ca: readFileSync(path, 'utf8') }
  } catch (e) {
    throw new Error(`the Redis CA file ${path} cannot be read: ${(e as Error).message}`)
  }
}

/**
 * The outages of one connection, as both topologies keep them: the first failure of an outage is logged and
 * the recovery once; the last error names what is wrong; the pause before the next attempt grows with the
 * failures, up to `maxBackoffMs`.
 */
export class Outage {
  failures = 0
  lastError = ''
  constructor(
    private readonly role: string,
    private readonly where: string,
    private readonly log: Logger,
    private readonly maxBackoffMs: number,
  ) {}

  down(e: unknown): void {
    const message = (e as Error)?.message ?? String(e)
    if (!this.failures) this.log({ level: 'error', msg: `${this.role} unreachable`, store: this.where, error: message })
    this.failures++
    this.lastError = message
  }

  up(): void {
    if (this.failures) this.log({ level: 'info', msg: `${this.role} reachable again`, store: this.where })
    this.failures = 0
  }

  /** Milliseconds before attempt `times` (the failures so far, by default). */
  backoff = (times = this.failures): number => Math.min(this.maxBackoffMs, 50 * 2 ** Math.min(times, 10))

  /** What a command is told while the outage lasts. */
  unreachable(): Error {
    return new Error(`Redis at ${this.where} is unreachable (${this.lastError})`)
  }
}
