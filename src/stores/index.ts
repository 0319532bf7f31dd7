/** Opens the quota store and the key store where the settings put them (`Config.stores`, resolved once). */
import type { Config } from '../config.ts'
import { openKeyStore, type KeyStore } from './keys.ts'
import { KEY_CACHE_LIVE_MS, redisKeyStore } from './keys-redis.ts'
import { memoryQuotaStore, type QuotaStore } from './quota.ts'
import { leasingQuotaStore } from './quota-leases.ts'
import { redisQuotaStore } from './quota-redis.ts'
import { redisConnection } from './redis.ts'
import { sqliteQuotaStore } from './quota-sqlite.ts'
import { memoryUsageStore, type UsageStore } from './usage.ts'
import { redisUsageStore } from './usage-redis.ts'
import { sqliteUsageStore } from './usage-sqlite.ts'

/**
 * `shared`: this process is one of `--workers`, whose siblings open the same SQLite file (quota-sqlite.ts).
 * On Redis with ALMANAC_QUOTA_LEASES set, the plans named there spend leased credits (quota-leases.ts).
 */
export function createQuotaStore(
  config: Pick<Config, 'stores'> & Partial<Pick<Config, 'quotaLeases'>>,
  log?: (line: string) => void,
  options: { shared?: boolean } = {},
): QuotaStore {
  const where = config.stores.quota
  if (where.kind === 'memory') return memoryQuotaStore()
  if (where.kind === 'sqlite') return sqliteQuotaStore(where.dir, { shared: options.shared })
  if (!config.quotaLeases?.size) return redisQuotaStore(where.url, { log })
  const connection = redisConnection(where.url, { role: 'quota store', log })
  return leasingQuotaStore(redisQuotaStore(where.url, { connection }), connection, { blocks: config.quotaLeases })
}

/** The key store (ALMANAC_KEY_STORE, else the quota store's Redis, else SQLite); SQLite is opened at once, Redis on first use. */
export function createKeyStore(config: Pick<Config, 'stores' | 'quotaFailOpen'>, log?: (line: string) => void): KeyStore {
  const where = config.stores.keys
  if (where.kind === 'sqlite') return openKeyStore(where.dir)
  // Fail-open chooses serving over exactness: keys seen in the last minute keep working through a failover.
  return redisKeyStore(where.url, { log, staleIfErrorMs: config.quotaFailOpen ? KEY_CACHE_LIVE_MS : 0 })
}

/** The usage ledger, in the store the quotas use (memory, the state dir's SQLite, or Redis). */
export function createUsageStore(config: Pick<Config, 'stores' | 'usageRetentionDays'>, log?: (line: string) => void): UsageStore {
  const where = config.stores.quota
  if (where.kind === 'memory') return memoryUsageStore()
  if (where.kind === 'sqlite') return sqliteUsageStore(where.dir)
  return redisUsageStore(where.url, { log, retentionDays: config.usageRetentionDays })
}
