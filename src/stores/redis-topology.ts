/**
 * The stores' Redis connection on a Redis Cluster or a Sentinel group, through ioredis (Bun's client
 * speaks to one node only). Named by the store settings' own URL, so every store (quota, keys, usage, the
 * RDAP cache) can be pointed at a topology without a setting of its own:
 *
 * - `redis+cluster://[user:password@]host:port,host:port[?…]`: seed nodes, any of the cluster's; the rest
 *   and the slot map are learnt from them and followed through failovers (MOVED, a refreshed slot map).
 * - `redis+sentinel://[user:password@]host:port,host:port/<master name>[/<db>][?sentinel_password=…]`:
 *   the sentinels; the master they name is asked again after every lost connection, so a promoted replica
 *   is found by itself.
 * - `rediss+cluster://` and `rediss+sentinel://`: the same over TLS (to the sentinels too); `?ca=<PEM file>`
 *   adds a CA to trust for the nodes' certificates (redis-connection.ts `caOf`).
 *
 * The same fail-fast rules as a single node: no offline queue, no command retried on a new connection, a
 * timeout on every command; while ioredis reconnects (with the same back-off) commands fail at once, and
 * the first one after it is ready again goes through.
 */
import { Cluster, Redis, type ClusterOptions, type RedisOptions as IoRedisOptions } from 'ioredis'
import { asLogger } from '../lib/logger.ts'
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

export interface Topology {
  kind: 'cluster' | 'sentinel'
  tls: boolean
  username?: string
  password?: string
  nodes: { host: string; port: number }[]
  /** Sentinel: the name the sentinels monitor the master by, its database, the sentinels' own password. */
  master?: string
  db?: number
  sentinelPassword?: string
  /** The PEM of the CA trusted besides the system's (`?ca=<file>`), for TLS to every node and sentinel. */
  ca?: string
}

const SCHEME = /^(rediss?)\+(cluster|sentinel):\/\//

export const isTopologyUrl = (url: string) => SCHEME.test(url)

/** Reads a `redis+cluster://` or `redis+sentinel://` URL (WHATWG URL parsing takes one host only). */
export function parseTopologyUrl(given: string): Topology {
  const { url, ca } = caOf(given)
  const scheme = SCHEME.exec(url)
  if (!scheme) throw new Error(`not a Redis Cluster or Sentinel URL: ${url}`)
  const kind = scheme[2] as Topology['kind']
  let rest = url.slice(scheme[0].length)
  const query = new URLSearchParams(rest.includes('?') ? rest.slice(rest.indexOf('?') + 1) : '')
  rest = rest.split('?')[0]!
  const slash = rest.indexOf('/')
  const authority = slash < 0 ? rest : rest.slice(0, slash)
  const path = (slash < 0 ? '' : rest.slice(slash + 1)).split('/').filter(Boolean)
  const at = authority.lastIndexOf('@')
  const [user = '', password] = at < 0 ? [] : authority.slice(0, at).split(/:(.*)/s)
  const nodes = (at < 0 ? authority : authority.slice(at + 1)).split(',').map((hostPort) => {
    const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(hostPort) ?? /^\[?([^\]:]+)\]?$/.exec(hostPort)
    if (!m) throw new Error(`${redactUrl(url)}: ${JSON.stringify(hostPort)} is not host:port`)
    return { host: m[1]!, port: Number(m[2] ?? (kind === 'sentinel' ? 26379 : 6379)) }
  })
  const topology: Topology = { kind, tls: scheme[1] === 'rediss', nodes }
  if (ca !== undefined) topology.ca = ca
  if (user) topology.username = decodeURIComponent(user)
  if (password !== undefined) topology.password = decodeURIComponent(password)
  if (kind === 'sentinel') {
    if (!path[0]) throw new Error(`${redactUrl(url)}: name the master, redis+sentinel://host:port,…/<master name>`)
    topology.master = decodeURIComponent(path[0])
    if (path[1]) topology.db = Number(path[1])
    const sentinelPassword = query.get('sentinel_password')
    if (sentinelPassword) topology.sentinelPassword = sentinelPassword
  }
  return topology
}

/** Replies that mean the topology cannot serve the key now (a failover under way), not that the command was wrong. */
const UNAVAILABLE = /^(CLUSTERDOWN|TRYAGAIN|MASTERDOWN|LOADING|READONLY)/

/** The TLS options of every connection to the topology's nodes and sentinels. */
const tlsOf = (t: Topology) => (t.tls ? (t.ca === undefined ? {} : { ca: t.ca }) : undefined)

/** What every connection to one of the topology's nodes is given. */
const nodeOptions = (t: Topology, timeoutMs: number): IoRedisOptions => ({
  username: t.username,
  password: t.password,
  tls: tlsOf(t),
  connectTimeout: timeoutMs,
  // A command in flight when its connection drops fails; it is not sent again on the next connection.
  maxRetriesPerRequest: 0,
})

function clientOf(t: Topology, timeoutMs: number, backoff: (times: number) => number): Redis | Cluster {
  const tls = tlsOf(t)
  const node = nodeOptions(t, timeoutMs)
  if (t.kind === 'cluster') {
    const options: ClusterOptions = {
      enableOfflineQueue: false,
      clusterRetryStrategy: backoff,
      slotsRefreshTimeout: timeoutMs,
      // A replica being promoted answers CLUSTERDOWN or redirects for about a node timeout; ioredis follows them
      // every 100 ms. Those retries count against maxRedirections, which ends them well inside the store's own
      // timeout: a command the caller has given up on (answered 503, or served uncounted under fail-open) must
      // never be applied afterwards, spending a credit for it.
      retryDelayOnClusterDown: 100,
      retryDelayOnFailover: 100,
      maxRedirections: Math.max(1, Math.floor(timeoutMs / 100) - 4),
      redisOptions: node,
    }
    return new Cluster(t.nodes, options)
  }
  return new Redis({
    ...node,
    sentinels: t.nodes,
    name: t.master,
    db: t.db,
    sentinelPassword: t.sentinelPassword,
    enableTLSForSentinelMode: t.tls,
    sentinelTLS: tls,
    enableOfflineQueue: false,
    retryStrategy: backoff,
    sentinelRetryStrategy: backoff,
    // A master demoted by a failover answers READONLY: reconnect, asking the sentinels for the new one.
    reconnectOnError: (e) => (e.message.startsWith('READONLY') ? 2 : false),
  })
}

export function topologyConnection(url: string, options: RedisOptions = {}): RedisConnection {
  const { timeoutMs = 1000, maxBackoffMs = 2000, role = 'store' } = options
  const log = asLogger(options.log ?? (() => {}))
  const where = redactUrl(url)
  const topology = parseTopologyUrl(url)
  const outage = new Outage(role, where, log, maxBackoffMs)
  let client: Redis | Cluster | null = null
  let closed = false

  /** The wait for the client's next 'ready', shared by every caller meanwhile (one listener, not one each). */
  let readiness: Promise<void> | null = null

  /** The client once ready; while it is not, the first callers wait up to the timeout and the rest of an outage fails at once. */
  const ready = async (): Promise<Redis | Cluster> => {
    if (closed) throw new Error(`the ${role} is closed`)
    if (!client || client.status === 'end') {
      client = clientOf(topology, timeoutMs, outage.backoff)
      // ioredis reports every failed (re)connection here; the commands report the outage.
      client.on('error', (e: Error) => (outage.lastError = e.message))
      readiness = null
    }
    const c = client
    if (c.status === 'ready') return c
    if (outage.failures) throw outage.unreachable()
    readiness ??= withTimeout(
      new Promise<void>((resolve) => c.once('ready', resolve)),
      `connecting to Redis at ${where}`,
      timeoutMs,
    ).finally(() => (readiness = null))
    await readiness
    return c
  }

  const command = async (name: string, args: string[]): Promise<any> => {
    try {
      const c = await ready()
      const reply = await withTimeout(c.call(name, ...args), `Redis ${name}`, timeoutMs)
      outage.up()
      return reply
    } catch (e) {
      const message = (e as Error).message
      if ((e as Error).name === 'ReplyError' && !UNAVAILABLE.test(message)) throw e
      if (!message.startsWith(`Redis at ${where}`)) outage.down(e)
      throw new Error(message.startsWith(`Redis at ${where}`) ? message : `Redis at ${where} is unreachable (${message})`)
    }
  }

  return {
    command,
    script: scriptOver(command),
    check: checkOver(command),
    subscribe: (channel, handlers) => keepSubscribed(subscriberDial(topology, timeoutMs, channel), handlers, outage.backoff),
    close() {
      closed = true
      client?.disconnect()
      client = null
    },
    cluster: topology.kind === 'cluster',
  }
}

/**
 * A subscriber on one node of its own, not through the cluster client (whose resubscriptions after a failover
 * it cannot tell apart from a subscription that held): a cluster's PUBLISH reaches every node, so any one will do,
 * the next seed node after each lost one; a Sentinel group's is its master, asked of the sentinels at each dial.
 * ioredis reconnects nothing here: keepSubscribed dials again and so knows when messages may have been missed.
 */
function subscriberDial(t: Topology, timeoutMs: number, channel: string): SubscribeDial {
  return async (attempt, message, lost) => {
    const common: IoRedisOptions = {
      ...nodeOptions(t, timeoutMs),
      enableOfflineQueue: false,
      autoResubscribe: false,
      lazyConnect: true,
      retryStrategy: () => null,
    }
    const where =
      t.kind === 'cluster'
        ? t.nodes[attempt % t.nodes.length]!
        : {
            sentinels: t.nodes,
            name: t.master,
            sentinelPassword: t.sentinelPassword,
            enableTLSForSentinelMode: t.tls,
            sentinelTLS: tlsOf(t),
            sentinelRetryStrategy: () => null,
          }
    const c = new Redis({ ...common, ...where })
    c.on('error', () => {})
    c.on('message', (_channel: string, text: string) => message(text))
    c.once('end', lost)
    const hangUp = () => {
      c.removeAllListeners('end')
      c.disconnect()
    }
    try {
      await withTimeout(c.connect(), `connecting to Redis for SUBSCRIBE`, timeoutMs)
      await withTimeout(c.subscribe(channel), `Redis SUBSCRIBE`, timeoutMs)
    } catch (e) {
      hangUp()
      throw e
    }
    return hangUp
  }
}
