/** Picks the quota store (`memory`, `sqlite` or a `redis://` URL) and the key store (`sqlite` or Redis). */
import { keyStoreOf, type Config } from '../config.ts'
import { openKeyStore, type KeyStore } from './keys.ts'
import { redisKeyStore } from './keys-redis.ts'
import { memoryQuotaStore, type QuotaStore } from './quota.ts'
import { redisQuotaStore } from './quota-redis.ts'
import { sqliteQuotaStore } from './quota-sqlite.ts'

export function createQuotaStore(config: Pick<Config, 'quotaStore' | 'stateDir'>, log?: (line: string) => void): QuotaStore {
  if (config.quotaStore === 'memory') return memoryQuotaStore()
  if (config.quotaStore === 'sqlite') return sqliteQuotaStore(config.stateDir)
  return redisQuotaStore(config.quotaStore, { log })
}

/** The key store ALMANAC_KEY_STORE names (see `keyStoreOf`); SQLite is opened at once, Redis on first use. */
export function createKeyStore(config: Pick<Config, 'keyStore' | 'quotaStore' | 'stateDir'>, log?: (line: string) => void): KeyStore {
  const where = keyStoreOf(config)
  return where === 'sqlite' ? openKeyStore(config.stateDir) : redisKeyStore(where, { log })
}
