/**
 * The QuotaStore contract, run against every store: memory, sqlite (a temp state dir) and redis (a real
 * redis-server). Time is passed in, so window boundaries are tested without waiting.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Plan } from '../../src/config.ts'
import { memoryQuotaStore, type QuotaStore } from '../../src/stores/quota.ts'
import { redisQuotaStore } from '../../src/stores/quota-redis.ts'
import { sqliteQuotaStore } from '../../src/stores/quota-sqlite.ts'
import { startRedis, type TestRedis } from '../support/redis.ts'
import { tempDirs } from '../support/temp.ts'

const plan: Plan = { name: 'tiny', credits: 20, windowSeconds: 60 }
// 1_700_000_123.456 s lies in the minute that starts at 1_700_000_100 (1_700_000_100 / 60 = 28_333_335).
const T0 = 1_700_000_123_456
const WINDOW_END = 1_700_000_160

let redis: TestRedis
const tempDir = tempDirs('almanac-quota-')
let prefixes = 0

beforeAll(async () => {
  redis = await startRedis()
})
afterAll(() => redis.close())

const stores: [string, () => QuotaStore][] = [
  ['memory', () => memoryQuotaStore()],
  ['sqlite', () => sqliteQuotaStore(tempDir())],
  // A fresh key prefix per store, so tests do not see each other's counters on the shared server.
  ['redis', () => redisQuotaStore(redis.url, { keyPrefix: `t${++prefixes}:` })],
]

describe.each(stores)('%s quota store', (_, make) => {
  test('counts credits down within a window and reports the window end', async () => {
    const store = make()
    const first = await store.consume('alice', plan, 1, T0)
    expect(first).toEqual({ allowed: true, policy: 'tiny', limit: 20, remaining: 19, reset: WINDOW_END, windowSeconds: 60 })
    expect((await store.consume('alice', plan, 4, T0 + 1000)).remaining).toBe(15)
    expect((await store.peek('alice', plan, T0 + 2000)).remaining).toBe(15)
    expect((await store.peek('alice', plan, T0 + 2000)).remaining).toBe(15)
    await store.close()
  })

  test('a consume that does not fit takes nothing; one that fits exactly takes the rest', async () => {
    const store = make()
    expect((await store.consume('bob', plan, 17, T0)).remaining).toBe(3)
    const refused = await store.consume('bob', plan, 5, T0)
    expect(refused.allowed).toBe(false)
    expect(refused.remaining).toBe(3)
    const exact = await store.consume('bob', plan, 3, T0)
    expect(exact.allowed).toBe(true)
    expect(exact.remaining).toBe(0)
    expect((await store.consume('bob', plan, 1, T0)).allowed).toBe(false)
    // More than the whole plan can never fit, even in a fresh window.
    expect((await store.consume('carol', plan, 21, T0)).allowed).toBe(false)
    expect((await store.peek('carol', plan, T0)).remaining).toBe(20)
    await store.close()
  })

  test('the next window starts again from the full plan', async () => {
    const store = make()
    expect((await store.consume('dave', plan, 20, T0)).remaining).toBe(0)
    expect((await store.consume('dave', plan, 1, WINDOW_END * 1000 - 1)).allowed).toBe(false)
    const next = await store.consume('dave', plan, 1, WINDOW_END * 1000)
    expect(next).toEqual({ allowed: true, policy: 'tiny', limit: 20, remaining: 19, reset: WINDOW_END + 60, windowSeconds: 60 })
    await store.close()
  })

  test('a refund gives credits back to the window they were taken in, never below zero, never to a later window', async () => {
    const store = make()
    expect((await store.consume('gina', plan, 5, T0)).remaining).toBe(15)
    const back = await store.refund('gina', plan, 2, T0 + 1000)
    expect(back).toEqual({ allowed: true, policy: 'tiny', limit: 20, remaining: 17, reset: WINDOW_END, windowSeconds: 60 })
    // More than was taken: back to the whole plan, not beyond it.
    expect((await store.refund('gina', plan, 50, T0)).remaining).toBe(20)
    expect((await store.peek('gina', plan, T0)).remaining).toBe(20)
    // Credits taken in one window and given back after the next began: the new window is untouched.
    await store.consume('gina', plan, 3, T0)
    expect((await store.consume('gina', plan, 4, WINDOW_END * 1000)).remaining).toBe(16)
    expect((await store.refund('gina', plan, 3, T0)).reset).toBe(WINDOW_END)
    expect((await store.peek('gina', plan, WINDOW_END * 1000)).remaining).toBe(16)
    // A subject that never spent anything gets nothing.
    expect((await store.refund('hugo', plan, 1, T0)).remaining).toBe(20)
    expect((await store.consume('hugo', plan, 20, T0)).allowed).toBe(true)
    await store.close()
  })

  test('concurrent refunds and consumes stay exact: 20 taken, 10 given back, 10 more fit and no more', async () => {
    const store = make()
    await Promise.all(Array.from({ length: 20 }, () => store.consume('ivan', plan, 1, T0)))
    await Promise.all(Array.from({ length: 10 }, () => store.refund('ivan', plan, 1, T0)))
    const again = await Promise.all(Array.from({ length: 15 }, () => store.consume('ivan', plan, 1, T0)))
    expect(again.filter((s) => s.allowed).length).toBe(10)
    await store.close()
  })

  test('subjects and plans are counted apart', async () => {
    const store = make()
    const other: Plan = { name: 'other', credits: 20, windowSeconds: 60 }
    await store.consume('erin', plan, 20, T0)
    expect((await store.consume('frank', plan, 1, T0)).remaining).toBe(19)
    expect((await store.consume('erin', other, 1, T0)).remaining).toBe(19)
    await store.close()
  })

  test('50 concurrent consumes against 20 credits: exactly 20 succeed', async () => {
    const store = make()
    const results = await Promise.all(Array.from({ length: 50 }, () => store.consume('grace', plan, 1, T0)))
    expect(results.filter((r) => r.allowed).length).toBe(20)
    expect((await store.peek('grace', plan, T0)).remaining).toBe(0)
    await store.close()
  })
})

describe('sqlite quota store', () => {
  test('counters survive closing and reopening the database', async () => {
    const dir = tempDir()
    const before = sqliteQuotaStore(dir)
    await before.consume('heidi', plan, 7, T0)
    await before.close()
    const after = sqliteQuotaStore(dir)
    expect((await after.peek('heidi', plan, T0)).remaining).toBe(13)
    expect((await after.consume('heidi', plan, 14, T0)).allowed).toBe(false)
    expect((await after.consume('heidi', plan, 13, T0)).allowed).toBe(true)
    await after.close()
  })

  test('two connections to one file share the counters', async () => {
    const dir = tempDir()
    const a = sqliteQuotaStore(dir)
    const b = sqliteQuotaStore(dir)
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).consume('ivan', plan, 1, T0)))
    expect(results.filter((r) => r.allowed).length).toBe(20)
    await a.close()
    await b.close()
  })
})

describe('redis quota store', () => {
  test('two clients (two instances) share the counters atomically', async () => {
    const keyPrefix = `shared${++prefixes}:`
    const a = redisQuotaStore(redis.url, { keyPrefix })
    const b = redisQuotaStore(redis.url, { keyPrefix })
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).consume('judy', plan, 1, T0)))
    expect(results.filter((r) => r.allowed).length).toBe(20)
    await a.close()
    await b.close()
  })

  test('the counter key expires after its window', async () => {
    const keyPrefix = `ttl${++prefixes}:`
    const store = redisQuotaStore(redis.url, { keyPrefix })
    const now = Date.now()
    await store.consume('ken', plan, 1, now)
    const window = Math.floor(now / 1000 / 60) * 60
    const probe = new Bun.RedisClient(redis.url)
    const ttl = Number(await probe.send('TTL', [`${keyPrefix}tiny:60:${window}:ken`]))
    // Until the window ends, plus a minute of slack for clocks behind ours.
    expect(ttl).toBeGreaterThan(60)
    expect(ttl).toBeLessThanOrEqual(window + 60 - Math.floor(now / 1000) + 60)
    probe.close()
    await store.close()
  })

  test('an unreachable server rejects each call (no crash) and is used again once it is back', async () => {
    const own = await startRedis()
    const store = redisQuotaStore(own.url, { keyPrefix: 'outage:', maxBackoffMs: 50 })
    expect((await store.consume('lee', plan, 1, T0)).remaining).toBe(19)
    await own.stop()
    await expect(store.consume('lee', plan, 1, T0)).rejects.toThrow(/unreachable/)
    await expect(store.peek('lee', plan, T0)).rejects.toThrow(/unreachable/)
    await own.start()
    // The server came back empty (no persistence); the store dials again after its back-off.
    let state
    for (let i = 0; i < 100 && !state; i++) {
      state = await Promise.resolve(store.consume('lee', plan, 1, T0)).catch(() => undefined)
      if (!state) await Bun.sleep(50)
    }
    expect(state?.remaining).toBe(19)
    await store.close()
    await own.close()
  })

  test('a server that was never there rejects with a message naming it, password hidden', async () => {
    const store = redisQuotaStore(`redis://user:s3cret@127.0.0.1:${(await import('../support/ports.ts')).freePort()}`)
    const error = await Promise.resolve(store.consume('mia', plan, 1, T0)).catch((e: Error) => e)
    expect(error).toBeInstanceOf(Error)
    expect((error as Error).message).toMatch(/Redis at redis:\/\/user:\*\*\*@127\.0\.0\.1:\d+ is unreachable/)
    expect((error as Error).message).not.toContain('s3cret')
    await store.close()
  })
})
