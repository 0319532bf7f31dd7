/**
 * The usage ledger's store contract, on memory, SQLite (a temp state dir) and a real redis-server: a batch
 * adds to its hour and its day; a batch id applied twice counts once; two stores on one file or one Redis
 * (as two processes or instances would be) writing at once sum exactly; old rows are pruned by grain.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { RedisClient } from 'bun'
import {
  HOURLY_DAYS,
  LATENCY_BUCKETS,
  latencyBucket,
  memoryUsageStore,
  quantile,
  type UsageRow,
  type UsageStore,
} from '../../src/stores/usage.ts'
import { redisUsageStore } from '../../src/stores/usage-redis.ts'
import { sqliteUsageStore } from '../../src/stores/usage-sqlite.ts'
import { redisServers } from '../support/redis-topologies.ts'
import { tempDirs } from '../support/temp.ts'

const servers = redisServers()
const tempDir = tempDirs('almanac-usage-store-')

/** 2026-11-29 10:00 UTC and the hours around it. */
const DAY = Date.UTC(2026, 10, 29) / 1000
const at = (hour: number) => DAY + hour * 3600

const row = (period: number, over: Partial<UsageRow> = {}): UsageRow => ({
  period,
  caller: 'key:key_a',
  customer: '',
  domain: 'ip',
  route: 'GET /api/v1/ip/:ip',
  outcome: '2xx',
  requests: 1,
  credits: 1,
  refunded: 0,
  bytes: 100,
  latency: Array.from({ length: LATENCY_BUCKETS }, (_, i) => (i === 0 ? 1 : 0)),
  ...over,
})

/** Each kind of store, and a maker of a second handle on the same data (another process or instance). */
const kinds: [string, () => [UsageStore, () => UsageStore]][] = [
  [
    'memory',
    () => {
      const one = memoryUsageStore()
      return [one, () => one]
    },
  ],
  [
    'sqlite',
    () => {
      const dir = tempDir()
      return [sqliteUsageStore(dir), () => sqliteUsageStore(dir)]
    },
  ],
  [
    'redis',
    () => {
      const keyPrefix = servers.prefix('u')
      const now = () => (at(30) + 60) * 1000
      return [redisUsageStore(servers.single.url, { keyPrefix, now }), () => redisUsageStore(servers.single.url, { keyPrefix, now })]
    },
  ],
  ...(['cluster', 'sentinel'] as const).map((kind): [string, () => [UsageStore, () => UsageStore]] => [
    `redis ${kind}`,
    () => {
      const keyPrefix = servers.prefix('u')
      const now = () => (at(30) + 60) * 1000
      const url = servers.url(kind)
      return [redisUsageStore(url, { keyPrefix, now }), () => redisUsageStore(url, { keyPrefix, now })]
    },
  ]),
]

describe.each(kinds)('the usage ledger on the %s store', (_, make) => {
  const closing: UsageStore[] = []
  const open = () => {
    const [store, again] = make()
    closing.push(store)
    return { store, again: () => (closing.push(again()), closing.at(-1)!) }
  }
  afterAll(async () => {
    for (const s of closing) await s.close()
  })

  test('a batch adds to its hour and its day; rows of other callers and days stay apart', async () => {
    const { store } = open()
    await store.write({ id: 'b1', rows: [row(at(10)), row(at(10), { outcome: '429:quota', credits: 0 }), row(at(11), { bytes: 50 })] })
    await store.write({ id: 'b2', rows: [row(at(10), { requests: 2, credits: 3, bytes: 10 }), row(at(10), { caller: 'key:key_b' })] })
    await store.write({ id: 'b3', rows: [row(at(26), { customer: 'cus_1' })] })
    const hours = await store.read({ grain: 'hour', since: at(0), until: at(24), caller: 'key:key_a' })
    expect(hours.map((r) => [r.period, r.outcome, r.requests, r.credits, r.bytes])).toEqual([
      [at(10), '2xx', 3, 4, 110],
      [at(10), '429:quota', 1, 0, 100],
      [at(11), '2xx', 1, 1, 50],
    ])
    const days = await store.read({ grain: 'day', since: at(0) })
    expect(days.map((r) => [r.period, r.caller, r.outcome, r.requests, r.credits, r.bytes, r.latency[0]])).toEqual([
      [at(0), 'key:key_a', '2xx', 4, 5, 160, 3],
      [at(0), 'key:key_a', '429:quota', 1, 0, 100, 1],
      [at(0), 'key:key_b', '2xx', 1, 1, 100, 1],
      [at(24), 'key:key_a', '2xx', 1, 1, 100, 1],
    ])
    expect((await store.read({ grain: 'day', since: at(0), customer: 'cus_1' })).map((r) => r.period)).toEqual([at(24)])
  })

  test('a batch written again (its reply lost, retried) counts once', async () => {
    const { store } = open()
    const batch = { id: 'again', rows: [row(at(5), { requests: 7 })] }
    await store.write(batch)
    await store.write(batch)
    const [day] = await store.read({ grain: 'day', since: at(0) })
    // SQLite applies a batch in one transaction, so a failed one left nothing and a retry is the first write.
    expect(day?.requests).toBe(_ === 'sqlite' ? 14 : 7)
  })

  test('two writers on the same data, 50 batches each at once: the totals are exact', async () => {
    const { store, again } = open()
    const other = again()
    await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        (i % 2 ? other : store).write({ id: `w${i}`, rows: [row(at(i % 3), { requests: 1, credits: i % 4, bytes: i })] }),
      ),
    )
    const days = await store.read({ grain: 'day', since: at(0) })
    expect(days.map((r) => [r.requests, r.credits, r.bytes])).toEqual([[100, 150, 4950]])
    const hours = await other.read({ grain: 'hour', since: at(0) })
    expect(hours.map((r) => r.requests)).toEqual([34, 33, 33])
  })

  // Redis keys expire by TTL instead: tested below.
  test.skipIf(_.startsWith('redis'))('pruning drops hourly rows after HOURLY_DAYS and daily rows after the retention', async () => {
    const { store } = open()
    await store.write({ id: 'old', rows: [row(at(0)), row(at(24 * 50))] })
    await store.prune((at(24 * 50) + HOURLY_DAYS * 86_400 - 3600) * 1000, 40)
    expect((await store.read({ grain: 'hour', since: 0 })).map((r) => r.period)).toEqual([at(24 * 50)])
    expect((await store.read({ grain: 'day', since: 0 })).map((r) => r.period)).toEqual([at(24 * 50)])
  })
})

describe('latency buckets', () => {
  test('a latency falls in the first bucket whose bound holds it; quantiles read the bounds back', () => {
    expect([0.2, 1, 1.01, 30, 6000].map(latencyBucket)).toEqual([0, 0, 1, 5, 12])
    const latency = new Array(LATENCY_BUCKETS).fill(0)
    latency[0] = 90
    latency[3] = 9
    latency[8] = 1
    expect([quantile(latency, 0.5), quantile(latency, 0.95), quantile(latency, 0.99), quantile(latency, 1)]).toEqual([1, 10, 10, 500])
    expect(quantile(new Array(LATENCY_BUCKETS).fill(0), 0.5)).toBeNull()
  })
})

describe('the Redis ledger expires what the others prune', () => {
  test("hourly keys live HOURLY_DAYS, daily keys the operator's retention", async () => {
    const store = redisUsageStore(servers.single.url, { keyPrefix: 'ttl:', retentionDays: 40 })
    await store.write({ id: 'ttl', rows: [row(at(10))] })
    const client = new RedisClient(servers.single.url)
    const ttl = async (key: string) => Number(await client.send('TTL', [key]))
    expect(await ttl(`ttl:hour:${at(10)}:key:key_a`)).toBeWithin(HOURLY_DAYS * 86_400 - 5, HOURLY_DAYS * 86_400 + 1)
    expect(await ttl(`ttl:day:${at(0)}:key:key_a`)).toBeWithin(40 * 86_400 - 5, 40 * 86_400 + 1)
    expect(await ttl(`ttl:day:${at(0)}`)).toBeWithin(40 * 86_400 - 5, 40 * 86_400 + 1)
    client.close()
    await store.close()
  })
})
