/**
 * One Redis connection as the stores use it (quota counters, API keys): Bun's built-in client, commands
 * that fail fast while Redis is unreachable (no offline queue, a timeout on every command), and a new dial
 * after a short back-off once it is, so service resumes by itself when Redis comes back.
 */
import { asLogger, type LogSink } from '../lib/logger.ts'
import { RedisClient } from 'bun'

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
}

/** The URL without its password, for messages. */
export const redactUrl = (url: string) =>
  url.replace(/\/\/([^@/]*)@/, (_, auth: string) => `//${auth.includes(':') ? auth.slice(0, auth.indexOf(':')) + ':***' : '***'}@`)

export function redisConnection(url: string, options: RedisOptions = {}): RedisConnection {
  const { timeoutMs = 1000, maxBackoffMs = 2000, role = 'store' } = options
  const log = asLogger(options.log ?? (() => {}))
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
    connecting = withTimeout(fresh.connect(), `connecting to Redis at ${where}`)
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
      return await withTimeout(c.send(name, args), `Redis ${name}`)
    } catch (e) {
      if ((e as { code?: string }).code === 'ERR_REDIS_SERVER_ERROR') throw e
      if (c === client) down(e)
      throw new Error(`Redis at ${where} is unreachable (${(e as Error).message})`)
    }
  }

  return {
    command,
    script(source) {
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
