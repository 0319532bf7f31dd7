/**
 * `almanac state migrate-redis --from URL --to URL`: copies what the stores keep in one Redis into another,
 * for an operator moving from a single node to a Redis Cluster or a Sentinel group (or back).
 *
 * Names differ by topology: on a cluster the stores put hash tags into them (the key store's whole prefix,
 * the usage ledger's UTC day, a lease hash its counter's name), on a single node and a Sentinel group they do
 * not. Each key is renamed by the stores' own naming helpers, so the copy is what the stores would have
 * written on the target. Keys are found with SCAN (on every master of a cluster) and copied with DUMP and
 * RESTORE, a batch at a time, each with the TTL it had left (a key that expires meanwhile is not copied).
 * Nothing is deleted from the source, and RESTORE replaces: a run that stopped part-way can be run again.
 *
 * ioredis for every topology, a single node too: DUMP's payload is binary, which the stores' connection
 * (strings in, strings out) would mangle.
 */
import { Cluster, Redis, type RedisOptions as IoRedisOptions } from 'ioredis'
import { RDAP_KEY_PREFIX } from '../domains/email/rdap-store.ts'
import { SHARE_KEY_PREFIX } from '../domains/qr/shares-redis.ts'
import { KEY_STORE_PREFIX, keyStorePrefix } from '../stores/keys-redis.ts'
import { QUOTA_KEY_PREFIX } from '../stores/quota-redis.ts'
import { leaseHashOf } from '../stores/quota-leases.ts'
import { caOf, withTimeout } from '../stores/redis-connection.ts'
import { isTopologyUrl, parseTopologyUrl } from '../stores/redis-topology.ts'
import { redactUrl } from '../stores/redis.ts'
import { USAGE_KEY_PREFIX, usageDayPrefix, usageDayTag } from '../stores/usage-redis.ts'
import { parseCommand, UsageError } from './args.ts'

export const MIGRATE_REDIS_USAGE = `usage: almanac state migrate-redis --from URL --to URL [--dry-run] [--replace]
  copies the API keys, customers, audit log, quota counters, usage ledger, QR shares and RDAP cache kept in
  the Redis at --from into the one at --to, each key renamed as the stores name it there (a Redis Cluster's
  names carry hash tags, a single node's and a Sentinel group's do not) and with the TTL it had left.
  URLs as ALMANAC_KEY_STORE takes them: redis://, rediss://, redis+cluster://…, redis+sentinel://…/<master>.
  Stop the servers that write --from first: what they write during the copy may be missed.
  Nothing is deleted from --from. Refuses when --to is --from, or when --to already holds keys of a store
  that --from has keys of; --replace copies anyway, over the keys of the same name (to run again after a
  run that stopped part-way). --dry-run: counts what would be copied, copies nothing.`

/** Why a key is left where it is. */
interface Skip {
  skip: string
}

interface MigratedStore {
  /** What the report calls it. */
  label: string
  /** Its keys' untagged prefix; on a cluster they may start with `{` and it. */
  prefix: string
  /** The key's name on the target (`cluster`: the target is a Redis Cluster), from its name and TYPE on the source. */
  nameOn(key: string, type: string, cluster: boolean): string | Skip
}

const same = (key: string) => key

const BATCH_CLAIMS = 'usage batch claims (each only stops the instance that sent a batch from applying it twice; they expire within a day)'

export const MIGRATED_STORES: MigratedStore[] = [
  {
    label: 'key store (keys, customers, audit)',
    prefix: KEY_STORE_PREFIX,
    nameOn(key, _type, cluster) {
      const tagged = keyStorePrefix(true)
      const rest = key.startsWith(tagged) ? key.slice(tagged.length) : key.slice(KEY_STORE_PREFIX.length)
      return keyStorePrefix(cluster) + rest
    },
  },
  {
    label: 'quota counters',
    prefix: QUOTA_KEY_PREFIX,
    nameOn(key, type, cluster) {
      // A counter is a string under the same name everywhere; its lease hash, `<counter>:lease`, shares its slot on a cluster.
      if (type !== 'hash' || !key.endsWith(':lease')) return key
      const counter = key.startsWith('{') ? key.slice(1, -'}:lease'.length) : key.slice(0, -':lease'.length)
      return leaseHashOf(counter, cluster) ?? { skip: 'lease hashes that cannot share a cluster slot with their counter' }
    },
  },
  {
    label: 'usage ledger',
    prefix: USAGE_KEY_PREFIX,
    nameOn(key, _type, cluster) {
      const rest = key.startsWith('{') ? key.slice(key.indexOf('}:') + 2) : key.slice(USAGE_KEY_PREFIX.length)
      const [kind, period = ''] = rest.split(':')
      if (kind === 'batch') return { skip: BATCH_CLAIMS }
      if ((kind !== 'hour' && kind !== 'day') || !/^\d+$/.test(period)) return { skip: 'keys that are not ledger rows' }
      return usageDayPrefix(USAGE_KEY_PREFIX, usageDayTag(cluster, Number(period))) + rest
    },
  },
  { label: 'QR shares', prefix: SHARE_KEY_PREFIX, nameOn: same },
  { label: 'RDAP cache', prefix: RDAP_KEY_PREFIX, nameOn: same },
]

/** SCAN patterns of a store's keys, untagged and tagged (the prefixes hold no glob characters). */
const patternsOf = (store: MigratedStore) => [`${store.prefix}*`, `{${store.prefix}*`]

export class MigrateError extends Error {}

const SCAN_COUNT = 500
const CONNECT_MS = 10_000

interface Side {
  client: Redis | Cluster
  cluster: boolean
  where: string
}

/** A client for `given`; errors are kept for the message of a failed connection, not printed by ioredis. */
function open(given: string): Side {
  const common: IoRedisOptions = {
    connectTimeout: CONNECT_MS,
    maxRetriesPerRequest: 1,
    enableAutoPipelining: true,
    retryStrategy: () => null,
  }
  if (!isTopologyUrl(given)) {
    const { url, ca } = caOf(given)
    return { client: new Redis(url, { ...common, ...(ca === undefined ? {} : { tls: { ca } }) }), cluster: false, where: redactUrl(given) }
  }
  const t = parseTopologyUrl(given)
  const tls = t.tls ? (t.ca === undefined ? {} : { ca: t.ca }) : undefined
  const node: IoRedisOptions = { ...common, username: t.username, password: t.password, tls }
  const where = redactUrl(given)
  if (t.kind === 'cluster')
    return {
      client: new Cluster(t.nodes, { redisOptions: node, enableAutoPipelining: true, clusterRetryStrategy: () => null }),
      cluster: true,
      where,
    }
  const sentinel = { sentinels: t.nodes, name: t.master, db: t.db, sentinelPassword: t.sentinelPassword, sentinelTLS: tls }
  const client = new Redis({ ...node, ...sentinel, enableTLSForSentinelMode: t.tls, sentinelRetryStrategy: () => null })
  return { client, cluster: false, where }
}

/** Resolves once `side` is ready; rejects naming it when it cannot be reached. */
async function ready(side: Side): Promise<void> {
  let last = ''
  side.client.on('error', (e: Error) => (last = e.message))
  if (side.client.status === 'ready') return
  const up = new Promise<void>((resolve, reject) => {
    side.client.once('ready', resolve)
    side.client.once('end', () => reject(new MigrateError(`cannot reach Redis at ${side.where}${last ? ` (${last})` : ''}`)))
  })
  await withTimeout(up, `connecting to Redis at ${side.where}`, CONNECT_MS).catch((e) => {
    throw e instanceof MigrateError ? e : new MigrateError((e as Error).message)
  })
}

/** The nodes that hold keys: every master of a cluster, else the one node (a Sentinel group's master). */
const mastersOf = (side: Side): Redis[] => (side.client instanceof Cluster ? side.client.nodes('master') : [side.client])

/** Batches of the names matching `pattern` on every master, at most about SCAN_COUNT at a time. */
async function* scan(side: Side, pattern: string): AsyncGenerator<string[]> {
  for (const node of mastersOf(side)) {
    let cursor = '0'
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT)
      cursor = next
      if (keys.length) yield keys
    } while (cursor !== '0')
  }
}

/** One key of `store` on `side`, or undefined when it has none. */
async function anyKeyOf(side: Side, store: MigratedStore): Promise<string | undefined> {
  for (const pattern of patternsOf(store)) for await (const keys of scan(side, pattern)) return keys[0]
  return undefined
}

/** The run ids of `side`'s masters: two URLs that share one name the same server. */
async function runIds(side: Side): Promise<string[]> {
  const infos = await Promise.all(mastersOf(side).map((node) => node.info('server')))
  return infos.map((info) => /run_id:(\w+)/.exec(info)?.[1] ?? '')
}

/** Throws when the two sides are one server, or when `to` holds keys of a store `from` has keys of (unless `replace`). */
async function refuse(from: Side, to: Side, replace: boolean): Promise<MigratedStore[]> {
  const [fromIds, toIds] = await Promise.all([runIds(from), runIds(to)])
  const shared = fromIds.find((id) => id && toIds.includes(id))
  if (shared) throw new MigrateError(`${from.where} and ${to.where} are the same Redis (run_id ${shared}): nothing to copy`)
  const present: MigratedStore[] = []
  for (const store of MIGRATED_STORES) {
    if ((await anyKeyOf(from, store)) === undefined) continue
    present.push(store)
    const there = await anyKeyOf(to, store)
    if (there !== undefined && !replace)
      throw new MigrateError(
        `${to.where} already holds keys of the ${store.label} (${there}, …): copying would mix two stores. ` +
          'Point --to at an empty Redis, or pass --replace to overwrite its keys of the same names (after a run that stopped part-way)',
      )
  }
  return present
}

interface Tally {
  copied: number
  expired: number
  skipped: Map<string, number>
}

/** The TTL to restore with, in ms: what was left when read, less the time since (0: none; null: expired meanwhile). */
const ttlLeft = (pttl: number, readAt: number, now: number): number | null => {
  if (pttl === -1) return 0
  const left = Math.floor(pttl - (now - readAt))
  return pttl < 0 || left <= 0 ? null : left
}

/** Copies (or, dry, counts) one batch of `store`'s keys. */
async function copyBatch(store: MigratedStore, keys: string[], from: Side, to: Side, dry: boolean, tally: Tally): Promise<void> {
  const read = await Promise.all(
    keys.map(async (key) => {
      const readAt = performance.now()
      const [type, pttl, dump] = await Promise.all([
        from.client.type(key),
        from.client.pttl(key),
        dry ? Promise.resolve(null) : from.client.dumpBuffer(key),
      ])
      return { key, type, pttl, dump, readAt }
    }),
  )
  const writes: Promise<unknown>[] = []
  for (const { key, type, pttl, dump, readAt } of read) {
    const target = store.nameOn(key, type, to.cluster)
    if (typeof target !== 'string') {
      tally.skipped.set(target.skip, (tally.skipped.get(target.skip) ?? 0) + 1)
      continue
    }
    const ttl = type === 'none' ? null : ttlLeft(pttl, readAt, performance.now())
    if (ttl === null || (!dry && !dump)) {
      tally.expired++
      continue
    }
    tally.copied++
    if (!dry) writes.push(to.client.restore(target, ttl, dump!, 'REPLACE'))
  }
  await Promise.all(writes)
}

async function migrate(from: Side, to: Side, options: { dry: boolean; replace: boolean }, out: (line: string) => void) {
  await Promise.all([ready(from), ready(to)])
  const present = await refuse(from, to, options.replace)
  const verb = options.dry ? 'would copy' : 'copied'
  let total = 0
  for (const store of MIGRATED_STORES) {
    const tally: Tally = { copied: 0, expired: 0, skipped: new Map() }
    if (present.includes(store))
      for (const pattern of patternsOf(store))
        for await (const keys of scan(from, pattern)) await copyBatch(store, keys, from, to, options.dry, tally)
    total += tally.copied
    out(`${store.label}: ${verb} ${tally.copied} keys${tally.expired ? ` (${tally.expired} expired meanwhile, not copied)` : ''}`)
    for (const [why, n] of tally.skipped) out(`  not copied: ${n} ${why}`)
  }
  const summary = `${total} keys from ${from.where} to ${to.where}`
  out(options.dry ? `dry run: would copy ${summary}; nothing written` : `copied ${summary}`)
}

/** Runs `almanac state migrate-redis`; returns the process exit code. */
export async function migrateRedisCommand(args: string[], out: (line: string) => void, log: (line: string) => void): Promise<number> {
  const text = { type: 'string' } as const
  const flag = { type: 'boolean' } as const
  const parsed = parseCommand(args, { from: text, to: text, 'dry-run': flag, replace: flag })
  if (parsed.help) {
    out(MIGRATE_REDIS_USAGE)
    return 0
  }
  const isRedisUrl = (s: unknown): s is string => typeof s === 'string' && /^rediss?(\+(cluster|sentinel))?:\/\//.test(s)
  for (const name of ['from', 'to'])
    if (!isRedisUrl(parsed.values[name]))
      throw new UsageError(`state migrate-redis needs --${name} URL (redis://, rediss://, redis+cluster://, redis+sentinel://)`)
  const [fromUrl, toUrl] = [parsed.values.from as string, parsed.values.to as string]
  if (fromUrl === toUrl) throw new UsageError('state migrate-redis: --from and --to are the same URL')
  let sides: Side[] = []
  try {
    sides = [open(fromUrl), open(toUrl)]
    await migrate(sides[0]!, sides[1]!, { dry: parsed.values['dry-run'] === true, replace: parsed.values.replace === true }, out)
    return 0
  } catch (e) {
    log(`almanac: ${(e as Error).message}`)
    return 1
  } finally {
    for (const side of sides) side.client.disconnect()
  }
}
