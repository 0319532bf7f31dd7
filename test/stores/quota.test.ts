/**
 * The QuotaStore contract, run against every store: memory, sqlite (a temp state dir) and redis (a real
 * redis-server, a Redis Cluster, a Sentinel group). Time is passed in, so window boundaries (fixed and calendar-month) are tested without
 * waiting; the SQLite store's write-behind is driven by its `tick` and a clock the test moves.
 */
import { Database } from 'bun:sqlite'
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { loadConfig, type Plan } from '../../src/config.ts'
import { memoryQuotaStore, quotaWindow, type QuotaStore } from '../../src/stores/quota.ts'
import { redisQuotaStore } from '../../src/stores/quota-redis.ts'
import { sqliteQuotaStore } from '../../src/stores/quota-sqlite.ts'
import { startRedis } from '../support/redis.ts'
import { redisServers } from '../support/redis-topologies.ts'
import { tempDirs } from '../support/temp.ts'

const plan: Plan = { name: 'tiny', credits: 20, windowSeconds: 60 }
// 1_700_000_123.456 s lies in the minute that starts at 1_700_000_100 (1_700_000_100 / 60 = 28_333_335).
const T0 = 1_700_000_123_456
const WINDOW_END = 1_700_000_160

const servers = redisServers()
const tempDir = tempDirs('almanac-quota-')

const stores: [string, () => QuotaStore][] = [
  ['memory', () => memoryQuotaStore()],
  ['sqlite', () => sqliteQuotaStore(tempDir())],
  // A fresh key prefix per store, so tests do not see each other's counters on the shared server.
  ['redis', () => redisQuotaStore(servers.single.url, { keyPrefix: servers.prefix('t') })],
  // The same on a Redis Cluster (3 masters, a replica each) and a Sentinel group (issue 46).
  ['redis cluster', () => redisQuotaStore(servers.url('cluster'), { keyPrefix: servers.prefix('t') })],
  ['redis sentinel', () => redisQuotaStore(servers.url('sentinel'), { keyPrefix: servers.prefix('t') })],
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

const monthly: Plan = { name: 'monthly', credits: 20, windowSeconds: 31 * 86400, calendar: 'month' }
const utc = (...parts: [number, number, number, number?, number?, number?, number?]) => Date.UTC(...parts)
const DAY = 86400

describe('calendar-month windows', () => {
  test.each([
    ['Jan 31 2027, last millisecond', utc(2027, 0, 31, 23, 59, 59, 999), utc(2027, 0, 1), utc(2027, 1, 1), 31],
    ['Feb 1 2027, first millisecond', utc(2027, 1, 1), utc(2027, 1, 1), utc(2027, 2, 1), 28],
    ['Feb 29 2028 (leap day)', utc(2028, 1, 29, 12), utc(2028, 1, 1), utc(2028, 2, 1), 29],
    ['Dec 31 2027, last second', utc(2027, 11, 31, 23, 59, 59), utc(2027, 11, 1), utc(2028, 0, 1), 31],
    ['Jan 1 2028', utc(2028, 0, 1), utc(2028, 0, 1), utc(2028, 1, 1), 31],
    ['Apr 30 2027', utc(2027, 3, 30, 8), utc(2027, 3, 1), utc(2027, 4, 1), 30],
  ])('%s', (_, now, start, end, days) => {
    expect(quotaWindow(monthly, now)).toEqual({ start: start / 1000, end: end / 1000 })
    expect((end - start) / 1000).toBe(days * DAY)
  })

  test('ALMANAC_PLANS: `1mo` is the calendar month; `2mo` is refused with a reason', () => {
    const plans = loadConfig({ env: { ALMANAC_PLANS: 'pro:100000/1mo,d30:5/30d', ALMANAC_DEFAULT_PLAN: 'pro' }, argv: [] }).plans
    expect(plans.get('pro')).toEqual({ name: 'pro', credits: 100000, windowSeconds: 31 * DAY, calendar: 'month' })
    expect(plans.get('d30')).toEqual({ name: 'd30', credits: 5, windowSeconds: 30 * DAY })
    expect(() => loadConfig({ env: { ALMANAC_PLANS: 'pro:100/2mo', ALMANAC_DEFAULT_PLAN: 'pro' }, argv: [] })).toThrow(
      /ALMANAC_PLANS.*one month \(`1mo`\), not 2mo/,
    )
  })

  test('a fixed 30d window is aligned to the epoch, not to the month', () => {
    const { start, end } = quotaWindow({ name: 'd30', credits: 1, windowSeconds: 30 * DAY }, utc(2027, 0, 31))
    expect(start % (30 * DAY)).toBe(0)
    expect(end - start).toBe(30 * DAY)
    expect(new Date(start * 1000).getUTCDate()).not.toBe(1)
  })
})

describe.each(stores)('%s quota store, monthly plan', (_, make) => {
  test('Jan 31 → Feb 1: the January window is spent to its last millisecond, February starts full and is 28 days', async () => {
    const store = make()
    const january = await store.consume('olga', monthly, 20, utc(2027, 0, 10))
    expect(january).toEqual({
      allowed: true,
      policy: 'monthly',
      limit: 20,
      remaining: 0,
      reset: utc(2027, 1, 1) / 1000,
      windowSeconds: 31 * DAY,
    })
    expect((await store.consume('olga', monthly, 1, utc(2027, 0, 31, 23, 59, 59, 999))).allowed).toBe(false)
    const february = await store.consume('olga', monthly, 1, utc(2027, 1, 1))
    expect(february).toEqual({
      allowed: true,
      policy: 'monthly',
      limit: 20,
      remaining: 19,
      reset: utc(2027, 2, 1) / 1000,
      windowSeconds: 28 * DAY,
    })
    // Credits of January given back in February reach nothing.
    expect((await store.refund('olga', monthly, 5, utc(2027, 0, 20))).reset).toBe(utc(2027, 1, 1) / 1000)
    expect((await store.peek('olga', monthly, utc(2027, 1, 2))).remaining).toBe(19)
    await store.close()
  })

  test('Feb 29 2028 counts in a 29-day February; March 1 starts again', async () => {
    const store = make()
    expect((await store.consume('pia', monthly, 12, utc(2028, 1, 3))).remaining).toBe(8)
    const leap = await store.consume('pia', monthly, 8, utc(2028, 1, 29, 23, 59, 59))
    expect([leap.allowed, leap.remaining, leap.reset, leap.windowSeconds]).toEqual([true, 0, utc(2028, 2, 1) / 1000, 29 * DAY])
    expect((await store.consume('pia', monthly, 1, utc(2028, 1, 29, 23, 59, 59, 999))).allowed).toBe(false)
    expect((await store.peek('pia', monthly, utc(2028, 2, 1))).remaining).toBe(20)
    await store.close()
  })

  test('Dec → Jan: the year turns with the window', async () => {
    const store = make()
    expect((await store.consume('quinn', monthly, 20, utc(2027, 11, 31, 23, 59, 59))).reset).toBe(utc(2028, 0, 1) / 1000)
    expect((await store.consume('quinn', monthly, 1, utc(2027, 11, 31, 23, 59, 59, 999))).allowed).toBe(false)
    const january = await store.consume('quinn', monthly, 3, utc(2028, 0, 1))
    expect([january.remaining, january.reset, january.windowSeconds]).toEqual([17, utc(2028, 1, 1) / 1000, 31 * DAY])
    await store.close()
  })

  test('a monthly plan and a fixed one of the same name and 31 days are counted apart', async () => {
    const store = make()
    const fixed: Plan = { name: 'monthly', credits: 20, windowSeconds: 31 * DAY }
    await store.consume('rita', monthly, 20, utc(2027, 4, 10))
    expect((await store.consume('rita', fixed, 1, utc(2027, 4, 10))).remaining).toBe(19)
    await store.close()
  })
})

/** The counters as the file holds them (what a process opening it after a crash would start from). */
const fileRows = (dir: string) => {
  const db = new Database(join(dir, 'quota.sqlite'), { readonly: true })
  try {
    return db.query('SELECT subject, window_start, used FROM quota_counters ORDER BY subject').all()
  } finally {
    db.close()
  }
}

describe('sqlite quota store', () => {
  test("the file's only user counts in memory and writes behind: at the latest after flushMs, before the next consume", async () => {
    const dir = tempDir()
    let clock = 0
    const store = sqliteQuotaStore(dir, { clock: () => clock, flushMs: 1000 })
    expect(store.role()).toBe('owner')
    expect((await store.consume('nina', plan, 3, T0)).remaining).toBe(17)
    expect(fileRows(dir)).toEqual([])
    clock = 999
    await store.consume('nina', plan, 2, T0)
    expect(fileRows(dir)).toEqual([])
    // A full interval since the last write: this consume first adds the 5 held, then spends in memory.
    clock = 1000
    expect((await store.consume('nina', plan, 4, T0)).remaining).toBe(11)
    expect(fileRows(dir)).toEqual([{ subject: 'nina', window_start: 1_700_000_100, used: 5 }])
    // Refunds are written behind too, as negative deltas.
    await store.refund('nina', plan, 6, T0)
    store.tick()
    expect(fileRows(dir)).toEqual([{ subject: 'nina', window_start: 1_700_000_100, used: 3 }])
    await store.close()
  })

  test('a crash (reopened without close) loses only what was spent since the last write; a close loses nothing', async () => {
    const dir = tempDir()
    const clock = 0
    const crashed = sqliteQuotaStore(dir, { clock: () => clock })
    await crashed.consume('omar', plan, 5, T0)
    crashed.tick()
    await crashed.consume('omar', plan, 3, T0)
    // What a process opening the file after a SIGKILL reads (test/scale-out/sqlite-quota-processes.test.ts kills one).
    expect(fileRows(dir)).toEqual([{ subject: 'omar', window_start: 1_700_000_100, used: 5 }])
    await crashed.close()
    const reopened = sqliteQuotaStore(dir)
    expect((await reopened.peek('omar', plan, T0)).remaining).toBe(12)
    await reopened.close()
  })

  test('a second store on the file waits for the owner to hand over, then both share it exactly: 20 consumes of 3 → 6', async () => {
    const dir = tempDir()
    const a = sqliteQuotaStore(dir, { clock: () => 0 })
    const b = sqliteQuotaStore(dir, { clock: () => 0 })
    expect([a.role(), b.role()]).toEqual(['owner', 'waiting'])
    // The owner spends some first: held in its memory only, until the hand-over writes them.
    expect((await a.consume('pat', plan, 3, T0)).allowed).toBe(true)
    const answers = Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).consume('pat', plan, 3, T0))
    a.tick()
    const results = [await a.consume('pat', plan, 0, T0), ...(await Promise.all(answers))]
    expect(results.slice(1).filter((r) => r.allowed).length).toBe(5)
    expect([a.role(), b.role()]).toEqual(['shared', 'shared'])
    expect((await b.peek('pat', plan, T0)).remaining).toBe(2)
    // b goes: a, alone again, takes the file back on its next tick and counts in memory from what the file holds.
    await b.close()
    a.tick()
    expect(a.role()).toBe('owner')
    expect((await a.consume('pat', plan, 3, T0)).allowed).toBe(false)
    expect((await a.consume('pat', plan, 2, T0)).remaining).toBe(0)
    await a.close()
    expect(fileRows(dir)).toEqual([{ subject: 'pat', window_start: 1_700_000_100, used: 20 }])
  })

  test('workers start as sharers: each consume is a transaction of its own, nothing held', async () => {
    const dir = tempDir()
    const a = sqliteQuotaStore(dir, { shared: true })
    const b = sqliteQuotaStore(dir, { shared: true })
    expect([a.role(), b.role()]).toEqual(['shared', 'shared'])
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).consume('quentin', plan, 3, T0)))
    expect(results.filter((r) => r.allowed).length).toBe(6)
    expect(fileRows(dir)).toEqual([{ subject: 'quentin', window_start: 1_700_000_100, used: 18 }])
    await a.close()
    await b.close()
  })

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
    const keyPrefix = servers.prefix('shared')
    const a = redisQuotaStore(servers.single.url, { keyPrefix })
    const b = redisQuotaStore(servers.single.url, { keyPrefix })
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).consume('judy', plan, 1, T0)))
    expect(results.filter((r) => r.allowed).length).toBe(20)
    await a.close()
    await b.close()
  })

  test('the counter key expires after its window', async () => {
    const keyPrefix = servers.prefix('ttl')
    const store = redisQuotaStore(servers.single.url, { keyPrefix })
    const now = Date.now()
    await store.consume('ken', plan, 1, now)
    const window = Math.floor(now / 1000 / 60) * 60
    const probe = new Bun.RedisClient(servers.single.url)
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
