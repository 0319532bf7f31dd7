/**
 * One Redis connection as the stores use it (quota counters, API keys): Bun's built-in client, commands
 * that fail fast while Redis is unreachable (no offline queue, a timeout on every command), and a new dial
 * after a short back-off once it is, so service resumes by itself when Redis comes back.
 *
 * A `redis+cluster://` or `redis+sentinel://` URL names a Redis Cluster or a Sentinel group instead
 * (redis-topology.ts, on ioredis, as Bun's client speaks to one node only); a plain `redis://` keeps Bun's
 * client, measured the faster.
 */
import { asLogger, type LogSink } from '../lib/logger.ts'
import { RedisClient } from 'bun'
import { isTopologyUrl, topologyConnection } from './redis-topology.ts'

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
  close(): void
  /**
   * True on a Redis Cluster: the keys one script touches must then share a hash tag (one slot). A single
   * node or a Sentinel group has one master holding every key, so the stores keep their untagged names there.
   */
  readonly cluster: boolean
}

/** The URL without its password, for messages. */
export const redactUrl = (url: string) =>
  url.replace(/\/\/([^@/]*)@/, (_, auth: string) => `//${auth.includes(':') ? auth.slice(0, auth.indexOf(':')) + ':***' : '***'}@`)

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

/** A single node (`redis://`, `rediss://`) on Bun's client, or a cluster or Sentinel group on ioredis. */
export function redisConnection(url: string, options: RedisOptions = {}): RedisConnection {
  return isTopologyUrl(url) ? topologyConnection(url, options) : singleNodeConnection(url, options)
}

function singleNodeConnection(url: string, options: RedisOptions): RedisConnection {
  const { timeoutMs = 1000, maxBackoffMs = 2000, role = 'store' } = options
  const log = asLogger(options.log ?? (() => {}))
  const where = redactUrl(url)
  let client: RedisClient | null = null
  let connecting: Promise<RedisClient> | null = null
  let failures = 0
  let retryAt = 0
  let lastError = ''
  let closed = false

  const down = (e: unknown) => {
    const message = (e as Error)?.message ?? String(e)
    if (!failures) log({ level: 'error', msg: `${role} unreachable`, store: where, error: message })
    failures++
    lastError = message
    retryAt = Date.now() + Math.min(maxBackoffMs, 50 * 2 ** Math.min(failures, 10))
    const old = client
    client = null
    old?.close()
  }

  const connection = (): Promise<RedisClient> => {
    if (closed) return Promise.reject(new Error(`the ${role} is closed`))
    if (client?.connected) return Promise.resolve(client)
    if (connecting) return connecting
    if (Date.now() < retryAt) return Promise.reject(new Error(`Redis at ${where} is unreachable (${lastError})`))
    const fresh = new RedisClient(url, { autoReconnect: false, enableOfflineQueue: false, connectionTimeout: timeoutMs })
    fresh.onclose = () => {}
    connecting = withTimeout(fresh.connect(), `connecting to Redis at ${where}`, timeoutMs)
      .then(() => {
        if (failures) log({ level: 'info', msg: `${role} reachable again`, store: where })
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

  const command = async (name: string, args: string[]): Promise<any> => {
    const c = await connection()
    try {
      return await withTimeout(c.send(name, args), `Redis ${name}`, timeoutMs)
    } catch (e) {
      if ((e as { code?: string }).code === 'ERR_REDIS_SERVER_ERROR') throw e
      if (c === client) down(e)
      throw new Error(`Redis at ${where} is unreachable (${(e as Error).message})`)
    }
  }

  return {
    command,
    script: scriptOver(command),
    check: checkOver(command),
    close() {
      closed = true
      client?.close()
      client = null
    },
    cluster: false,
  }
}
