/** Picks the quota store named by `config.quotaStore`: `memory`, `sqlite` or a `redis://` URL. */
import type { Config } from '../config.ts'
import { memoryQuotaStore, type QuotaStore } from './quota.ts'
import { redisQuotaStore } from './quota-redis.ts'
import { sqliteQuotaStore } from './quota-sqlite.ts'

export function createQuotaStore(config: Pick<Config, 'quotaStore' | 'stateDir'>, log?: (line: string) => void): QuotaStore {
  if (config.quotaStore === 'memory') return memoryQuotaStore()
  if (config.quotaStore === 'sqlite') return sqliteQuotaStore(config.stateDir)
  return redisQuotaStore(config.quotaStore, { log })
}
