/**
 * The three quota stores a test runs against, each made fresh: memory, SQLite in a temporary folder, and a
 * real redis-server (started before the file's tests, stopped after) with a key prefix of its own per store,
 * so tests do not see each other's counters.
 */
import { afterAll, beforeAll } from 'bun:test'
import { memoryQuotaStore, type QuotaStore } from '../../src/stores/quota.ts'
import { redisQuotaStore } from '../../src/stores/quota-redis.ts'
import { sqliteQuotaStore } from '../../src/stores/quota-sqlite.ts'
import { startRedis, type TestRedis } from './redis.ts'
import { tempDirs } from './temp.ts'

/** Call at the top level of a test file: `describe.each(quotaStores('name'))(…)`. */
export function quotaStores(name: string): [string, () => QuotaStore][] {
  let redis: TestRedis
  const tempDir = tempDirs(`almanac-${name}-`)
  let prefixes = 0
  beforeAll(async () => {
    redis = await startRedis()
  })
  afterAll(() => redis.close())
  return [
    ['memory', () => memoryQuotaStore()],
    ['sqlite', () => sqliteQuotaStore(tempDir())],
    ['redis', () => redisQuotaStore(redis.url, { keyPrefix: `${name}${++prefixes}:` })],
  ]
}
