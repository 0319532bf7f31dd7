/**
 * The usage ledger as a caller and an operator see it, through the real app over the real datasets, on the
 * memory, SQLite and Redis stores: what was sent is what the ledger holds, to the request (per route and
 * outcome, credits spent and given back, bytes); `GET /api/v1/usage` reports the window and the day, in
 * both forms, and costs nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { domains as allDomains } from '../../src/domains/index.ts'
import { createUsageMeter, type UsageMeter } from '../../src/http/edge/usage-meter.ts'
import { memoryQuotaStore, type QuotaStore } from '../../src/stores/quota.ts'
import { redisQuotaStore } from '../../src/stores/quota-redis.ts'
import { sqliteQuotaStore } from '../../src/stores/quota-sqlite.ts'
import { memoryUsageStore, type UsageRow, type UsageStore } from '../../src/stores/usage.ts'
import { redisUsageStore } from '../../src/stores/usage-redis.ts'
import { sqliteUsageStore } from '../../src/stores/usage-sqlite.ts'
import { testApp, TEST_KEY, type TestApp } from '../support/app.ts'
import { startRedis, type TestRedis } from '../support/redis.ts'
import { brokenDomain } from '../support/sample-domain.ts'
import { tempDirs } from '../support/temp.ts'

const TINY = { ALMANAC_PLANS: 'tiny:20/1d', ALMANAC_DEFAULT_PLAN: 'tiny', ALMANAC_API_KEYS: `${TEST_KEY}:tiny` }
/** Every request counts at 2026-11-29 10:30 UTC, whatever the wall clock says. */
const NOW = Date.UTC(2026, 10, 29, 10, 30)
const clock = () => NOW
const TODAY = Date.UTC(2026, 10, 29) / 1000

let redis: TestRedis
const tempDir = tempDirs('almanac-usage-http-')
let prefixes = 0
beforeAll(async () => {
  redis = await startRedis()
})
afterAll(() => redis.close())

const stores: [string, () => [QuotaStore, UsageStore]][] = [
  ['memory', () => [memoryQuotaStore(), memoryUsageStore()]],
  [
    'sqlite',
    () => {
      const dir = tempDir()
      return [sqliteQuotaStore(dir), sqliteUsageStore(dir)]
    },
  ],
  [
    'redis',
    () => {
      const p = `uh${++prefixes}:`
      return [redisQuotaStore(redis.url, { keyPrefix: `${p}q:` }), redisUsageStore(redis.url, { keyPrefix: `${p}u:`, now: clock })]
    },
  ],
]

const broken = brokenDomain()

const summary = (rows: UsageRow[]) => rows.map((r) => [r.domain, r.route, r.outcome, r.requests, r.credits, r.refunded])

describe.each(stores)('the usage ledger on the %s store', (_, make) => {
  let app: TestApp
  let meter: UsageMeter
  let quota: QuotaStore
  let usage: UsageStore
  beforeAll(async () => {
    ;[quota, usage] = make()
    // A long interval: the test writes with flush(), never waits for the timer.
    meter = createUsageMeter(usage, { clock, intervalMs: 3_600_000 })
    app = await testApp({ clock, env: TINY, quota, usage: meter, domains: [...allDomains, broken] })
  })
  afterAll(async () => {
    await app.close()
    await meter.close()
    await quota.close()
    await usage.close()
  })

  test('what was sent is what the ledger holds: per route and outcome, credits spent and given back', async () => {
    const sent = await Promise.all([
      ...Array.from({ length: 5 }, () => app.request('GET', '/api/v1/countries/FR')),
      app.request('GET', '/api/v1/countries/XX'),
      app.request('POST', '/api/v1/ip/bulk', { body: { ips: ['8.8.8.8', '1.1.1.1', '9.9.9.9'] } }),
      app.request('POST', '/api/v1/broken/anything', { body: { x: 1 } }),
      app.request('GET', '/api/v1/countries/FR', { key: null }),
      // Reaches GET /ip/:ip, which refuses it: its credit is given back.
      app.request('GET', '/api/v1/ip/bulk'),
    ])
    expect(sent.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 404, 200, 503, 401, 405])
    const bytes = await Promise.all(sent.map(async (r) => (await r.arrayBuffer()).byteLength))
    // 20 - 5 - 1 - 3 = 11 left: spend them, then one more is refused.
    for (let i = 0; i < 11; i++) expect((await app.request('GET', '/api/v1/countries/DE')).status).toBe(200)
    expect((await app.request('GET', '/api/v1/countries/DE')).status).toBe(429)

    await meter.flush()
    const rows = await usage.read({ grain: 'hour', since: TODAY })
    expect(rows.every((r) => r.caller === rows[0]!.caller && r.caller.startsWith('key:cfg_') && r.period === TODAY + 10 * 3600)).toBe(true)
    expect(summary(rows)).toEqual([
      // Refused at admission (its domain is disabled): nothing was taken, so nothing given back.
      ['broken', 'POST /api/v1/broken/*', '5xx:unavailable', 1, 0, 0],
      ['countries', 'GET /api/v1/countries/:code', '2xx', 16, 16, 0],
      ['countries', 'GET /api/v1/countries/:code', '429:quota', 1, 0, 0],
      ['countries', 'GET /api/v1/countries/:code', '4xx:not-found', 1, 1, 0],
      ['ip', 'GET /api/v1/ip/:ip', '4xx:method', 1, 0, 1],
      ['ip', 'POST /api/v1/ip/bulk', '2xx', 1, 3, 0],
    ])
    // Bytes as received here (no Accept-Encoding: sent as made).
    const lookups = rows.find((r) => r.outcome === '2xx' && r.domain === 'countries')!
    expect(lookups.bytes).toBeGreaterThanOrEqual(bytes[0]! * 5)
    expect(rows.find((r) => r.route === 'POST /api/v1/ip/bulk')!.bytes).toBe(bytes[6]!)
    expect(lookups.latency.reduce((s, n) => s + n, 0)).toBe(16)
    expect(rows.find((r) => r.outcome === '429:quota')!.bytes).toBeGreaterThan(100)
    // The day holds the same.
    expect(summary(await usage.read({ grain: 'day', since: TODAY }))).toEqual(summary(rows))
  })

  test('GET /api/v1/usage: the window now and the day per domain, in both forms, for no credit', async () => {
    const before = await app.request('GET', '/api/v1/countries/DE')
    const bare = await app.json('GET', '/api/v1/usage?days=3', { form: 'bare' })
    expect(bare.status).toBe(200)
    // It spends nothing: the headers say what the last refusal said.
    expect(bare.headers.get('x-quota-remaining')).toBe(before.headers.get('x-quota-remaining'))
    expect(bare.body.plan).toBe('tiny')
    expect(bare.body.window).toEqual({ limit: 20, remaining: 0, used: 20, reset: TODAY + 86_400, window_seconds: 86_400 })
    expect(bare.body.days.map((d: any) => d.date)).toEqual(['2026-11-27', '2026-11-28', '2026-11-29'])
    expect(bare.body.days[0]).toEqual({ date: '2026-11-27', requests: 0, credits: 0, refunded: 0, refused: 0, domains: [] })
    const today = bare.body.days[2]
    // The first test's 21 requests of a known caller, the refusal just before this one, nothing of this one yet.
    expect([today.requests, today.credits, today.refunded, today.refused]).toEqual([22, 20, 1, 2])
    expect(today.domains.map((d: any) => [d.domain, d.requests, d.credits, d.refunded, d.refused])).toEqual([
      ['broken', 1, 0, 0, 0],
      ['countries', 19, 17, 0, 2],
      ['ip', 2, 3, 1, 0],
    ])
    const enveloped = await app.json('GET', '/api/v1/usage?days=3', { form: 'enveloped' })
    expect(enveloped.body.data.days.length).toBe(3)
    expect(enveloped.body.data.caller).toBe(bare.body.caller)
    // Its own request is in the ledger now, as costing nothing.
    await meter.flush()
    const own = (await usage.read({ grain: 'day', since: TODAY })).filter((r) => r.route === 'GET /api/v1/usage')
    expect(own.map((r) => [r.outcome, r.requests, r.credits])).toEqual([['2xx', 2, 0]])
  })

  test('bad days: a problem naming the parameter and its range', async () => {
    for (const days of ['0', '91', 'x']) {
      const res = await app.json('GET', `/api/v1/usage?days=${days}`, { form: 'bare' })
      expect(res.status).toBeGreaterThanOrEqual(400)
      expect(res.status).toBeLessThan(500)
      expect(JSON.stringify(res.body)).toContain('days: expected an integer from 1 to 90')
    }
  })
})

/**
 * A real store under the meter, its writes counted, with a write's reply or a read's answer held back on
 * demand: `reached` says the held call got there (the batch is in the store; the store has answered).
 */
function heldStore(store: UsageStore) {
  let writes = 0
  const holds = { write: [] as PromiseWithResolvers<void>[], read: [] as PromiseWithResolvers<void>[] }
  const reached = { write: Promise.withResolvers<void>(), read: Promise.withResolvers<void>() }
  const pause = async (kind: 'write' | 'read') => {
    const hold = holds[kind].shift()
    if (!hold) return
    reached[kind].resolve()
    await hold.promise
  }
  const held: UsageStore = {
    ...store,
    async write(batch) {
      await store.write(batch)
      writes++
      await pause('write')
    },
    async read(query) {
      const rows = await store.read(query)
      await pause('read')
      return rows
    },
  }
  /** Holds the next call of `kind` once it is done at the store, until `release`. */
  const hold = (kind: 'write' | 'read') => {
    const held = Promise.withResolvers<void>()
    holds[kind].push(held)
    reached[kind] = Promise.withResolvers<void>()
    return { reached: reached[kind].promise, release: () => held.resolve() }
  }
  return { store: held, writes: () => writes, hold }
}

describe.each(stores)('GET /api/v1/usage writes nothing, on the %s store', (_, make) => {
  let app: TestApp
  let meter: UsageMeter
  let quota: QuotaStore
  let usage: UsageStore
  let held: ReturnType<typeof heldStore>
  const ROOMY = { ALMANAC_PLANS: 'roomy:1000/1d', ALMANAC_DEFAULT_PLAN: 'roomy', ALMANAC_API_KEYS: `${TEST_KEY}:roomy` }
  beforeAll(async () => {
    ;[quota, usage] = make()
    held = heldStore(usage)
    meter = createUsageMeter(held.store, { clock, intervalMs: 3_600_000 })
    app = await testApp({ clock, env: ROOMY, quota, usage: meter, domains: allDomains })
  })
  afterAll(async () => {
    await app.close()
    await meter.close()
    await quota.close()
    await usage.close()
  })

  const lookup = async () => expect((await app.request('GET', '/api/v1/countries/FR')).status).toBe(200)
  /** Today's totals as the route answers them: all requests, and the lookups (the countries domain). */
  const polled = async () => {
    const { status, body } = await app.json('GET', '/api/v1/usage?days=1', { form: 'bare' })
    expect(status).toBe(200)
    const today = body.days[0]
    return { requests: today.requests, lookups: today.domains.find((d: any) => d.domain === 'countries')?.requests ?? 0 }
  }

  test('polling it writes no batch, and every answer holds the requests just made', async () => {
    const writes = held.writes()
    for (let i = 1; i <= 40; i++) {
      await lookup()
      // The i lookups and the i - 1 polls before this one (a request is counted once it is answered).
      expect(await polled()).toEqual({ requests: 2 * i - 1, lookups: i })
    }
    expect(held.writes()).toBe(writes)
    expect(meter.metrics()).toMatch(/almanac_usage_pending_rows [1-9]/)
    // What the reads added is what the store adds: once written, the store alone answers the same rows.
    const read = await meter.read({ grain: 'hour', since: TODAY })
    await meter.flush()
    expect(held.writes()).toBe(writes + 1)
    expect(await usage.read({ grain: 'hour', since: TODAY })).toEqual(read)
    expect(summary(read)).toEqual([
      ['', 'GET /api/v1/usage', '2xx', 40, 0, 0],
      ['countries', 'GET /api/v1/countries/:code', '2xx', 40, 40, 0],
    ])
  })

  test('a read while a batch is in the store and its reply not yet back counts that batch once', async () => {
    await meter.flush()
    const before = await polled()
    for (let i = 0; i < 3; i++) await lookup()
    const write = held.hold('write')
    const flushing = meter.flush()
    await write.reached
    for (let i = 0; i < 2; i++) await lookup()
    const reading = polled()
    // A turn of the event loop: a read that did not wait for the write would be at the store by now (the memory and
    // SQLite stores answer at once) and find the batch both there and still this process's own.
    await new Promise((turn) => setImmediate(turn))
    write.release()
    await flushing
    expect((await reading).lookups).toBe(before.lookups + 5)
  })

  test('a write waits for a read under way, and reads asked meanwhile wait for the write: each row counts once', async () => {
    await meter.flush()
    const before = await polled()
    for (let i = 0; i < 3; i++) await lookup()
    const read = held.hold('read')
    const first = polled()
    // The store has answered without the 3 lookups; they are still this process's own.
    await read.reached
    const writes = held.writes()
    const flushing = meter.flush()
    const second = polled()
    read.release()
    await flushing
    expect(held.writes()).toBe(writes + 1)
    expect([(await first).lookups, (await second).lookups]).toEqual([before.lookups + 3, before.lookups + 3])
  })
})
