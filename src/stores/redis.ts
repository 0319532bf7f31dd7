/**
 * One Redis connection as the stores use it (quota counters, API keys): Bun's built-in client, commands
 * that fail fast while Redis is unreachable (no offline queue, a timeout on every command), and a new dial
 * after a short back-off once it is, so service resumes by itself when Redis comes back.
 *
 * A `redis+cluster://` or `redis+sentinel://` URL names a Redis Cluster or a Sentinel group instead
 * (redis-topology.ts, on ioredis, as Bun's client speaks to one node only); a plain `redis://` keeps Bun's
 * client, measured the faster.
 */
import { asLogger } from '../lib/logger.ts'
import { RedisClient } from 'bun'
import {
  caOf,
  checkOver,
  keepSubscribed,
  Outage,
  redactUrl,
  scriptOver,
  withTimeout,
  type RedisConnection,
  type RedisOptions,
  type SubscribeDial,
} from './redis-connection.ts'
import { isTopologyUrl, topologyConnection } from './redis-topology.ts'

export type { RedisConnection, RedisOptions }
export { redactUrl }

/** A single node (`redis://`, `rediss://`) on Bun's client, or a cluster or Sentinel group on ioredis. */
export function redisConnection(url: string, options: RedisOptions = {}): RedisConnection {
  return isTopologyUrl(url) ? topologyConnection(url, options) : singleNodeConnection(url, options)
}

function singleNodeConnection(given: string, options: RedisOptions): RedisConnection {
  const { timeoutMs = 1000, maxBackoffMs = 2000, role = 'store' } = options
  const log = asLogger(options.log ?? (() => {}))
  const where = redactUrl(given)
  const { url, ca } = caOf(given)
  const tls = ca === undefined ? {} : { tls: { ca } }
  let client: RedisClient | null = null
  let connecting: Promise<RedisClient> | null = null
  const outage = new Outage(role, where, log, maxBackoffMs)
  let retryAt = 0
  let closed = false

  const down = (e: unknown) => {
    outage.down(e)
    retryAt = Date.now() + outage.backoff()
    const old = client
    client = null
    old?.close()
  }

  const connection = (): Promise<RedisClient> => {
    if (closed) return Promise.reject(new Error(`the ${role} is closed`))
    if (client?.connected) return Promise.resolve(client)
    if (connecting) return connecting
    if (Date.now() < retryAt) return Promise.reject(outage.unreachable())
    const fresh = new RedisClient(url, { autoReconnect: false, enableOfflineQueue: false, connectionTimeout: timeoutMs, ...tls })
    fresh.onclose = () => {}
    connecting = withTimeout(fresh.connect(), `connecting to Redis at ${where}`, timeoutMs)
      .then(() => {
        outage.up()
        client = fresh
        return fresh
      })
      .catch((e) => {
        fresh.close()
        down(e)
        throw outage.unreachable()
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

  /** A subscriber is a client of its own: one in subscriber mode can send nothing else. */
  const dial =
    (channel: string): SubscribeDial =>
    async (_attempt, message, lost) => {
      const c = new RedisClient(url, { autoReconnect: false, enableOfflineQueue: false, connectionTimeout: timeoutMs, ...tls })
      c.onclose = () => lost()
      try {
        await withTimeout(c.connect(), `connecting to Redis at ${where}`, timeoutMs)
        await withTimeout(
          c.subscribe(channel, (text) => message(text)),
          `Redis SUBSCRIBE`,
          timeoutMs,
        )
      } catch (e) {
        c.onclose = null
        c.close()
        throw e
      }
      return () => {
        c.onclose = null
        c.close()
      }
    }

  return {
    command,
    script: scriptOver(command),
    check: checkOver(command),
    subscribe: (channel, handlers) => keepSubscribed(dial(channel), handlers, outage.backoff),
    close() {
      closed = true
      client?.close()
      client = null
    },
    cluster: false,
  }
}
