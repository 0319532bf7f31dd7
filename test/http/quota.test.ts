/**
 * Quotas through the real app (`app.handle`) over the sample domain, on every store: the headers on
 * every /api/v1 response, 429 with Retry-After, bulk requests refused whole, the 50-against-20
 * concurrency case, and Redis going away (503 or fail-open) and coming back.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { memoryQuotaStore, type QuotaStore } from '../../src/stores/quota.ts'
import { redisQuotaStore } from '../../src/stores/quota-redis.ts'
import { sqliteQuotaStore } from '../../src/stores/quota-sqlite.ts'
import { testApp, TEST_KEY, type TestApp } from '../support/app.ts'
import { startRedis, type TestRedis } from '../support/redis.ts'
import { tempDirs } from '../support/temp.ts'
import { sampleDomain } from '../support/sample-domain.ts'

const TINY = { ALMANAC_PLANS: 'test:1000000/1d,tiny:20/1h', ALMANAC_API_KEYS: `${TEST_KEY}:tiny` }
const QUOTA_HEADERS = ['x-quota-limit', 'x-quota-remaining', 'x-quota-reset', 'ratelimit-policy', 'ratelimit']
/** Every app here counts at 12:30 UTC: half an hour into the tiny plan's window, whatever the wall clock says. */
const NOW_MS = Date.UTC(2026, 10, 23, 12, 30, 0)
const clock = () => NOW_MS
const HOUR_END = Date.UTC(2026, 10, 23, 13, 0, 0) / 1000
const DAY_END = Date.UTC(2026, 10, 24) / 1000

let redis: TestRedis
const tempDir = tempDirs('almanac-quota-http-')
let prefixes = 0

beforeAll(async () => {
  redis = await startRedis()
})
afterAll(() => redis.close())

/** Per store: a factory for a second "instance" sharing the first one's counters (same file / server). */
const stores: [string, () => () => QuotaStore][] = [
  [
    'memory',
    () => {
      const shared = memoryQuotaStore()
      return () => shared
    },
  ],
  [
    'sqlite',
    () => {
      const dir = tempDir()
      return () => sqliteQuotaStore(dir)
    },
  ],
  [
    'redis',
    () => {
      const keyPrefix = `http${++prefixes}:`
      return () => redisQuotaStore(redis.url, { keyPrefix })
    },
  ],
]

function expectQuotaHeaders(res: { headers: Headers; status: number }, limit: number, remaining: number, policy = 'tiny') {
  const h = res.headers
  for (const name of QUOTA_HEADERS)
    expect({ status: res.status, name, present: h.has(name) }).toEqual({ status: res.status, name, present: true })
  expect(h.get('x-quota-limit')).toBe(String(limit))
  expect(h.get('x-quota-remaining')).toBe(String(remaining))
  const reset = Number(h.get('x-quota-reset'))
  // Windows are aligned to the epoch: the hour-long one ends at 13:00, the day-long one at midnight.
  const expected = policy === 'tiny' ? HOUR_END : DAY_END
  expect(reset).toBe(expected)
  expect(h.get('ratelimit-policy')).toBe(`"${policy}";q=${limit};w=${policy === 'tiny' ? 3600 : 86400}`)
  expect(h.get('ratelimit')).toBe(`"${policy}";r=${remaining};t=${expected - NOW_MS / 1000}`)
}

describe.each(stores)('quotas on the %s store', (_, shared) => {
  const apps: TestApp[] = []
  const made: QuotaStore[] = []
  const app = async (env: Record<string, string> = {}) => {
    const store = factory()
    made.push(store)
    const a = await testApp({ clock, domains: [sampleDomain()], env: { ...TINY, ...env }, quota: store })
    apps.push(a)
    return a
  }
  let factory: () => QuotaStore
  beforeAll(() => {
    factory = shared()
  })
  afterAll(async () => {
    for (const a of apps) await a.close()
    for (const s of new Set(made)) await s.close()
  })

  test('every /api/v1 response carries the quota headers: success, 404, 405, 400, 422', async () => {
    factory = shared()
    const a = await app()
    expectQuotaHeaders(await a.json('GET', '/api/v1/planets/earth'), 20, 19)
    // A resource that does not exist was still looked up: it costs a credit.
    expectQuotaHeaders(await a.json('GET', '/api/v1/planets/pluto'), 20, 18)
    // No route, wrong method: nothing ran, nothing is spent.
    expectQuotaHeaders(await a.json('GET', '/api/v1/no-such-route'), 20, 18)
    const wrongMethod = await a.json('DELETE', '/api/v1/planets/earth')
    expect(wrongMethod.status).toBe(405)
    expectQuotaHeaders(wrongMethod, 20, 18)
    // An unreadable body was admitted (its credit taken from the headers), read and parsed: it costs 1.
    const malformed = await a.json('POST', '/api/v1/planets/bulk', { body: '{"names": [' })
    expect(malformed.status).toBe(400)
    expectQuotaHeaders(malformed, 20, 17)
    const invalid = await a.json('GET', '/api/v1/planets?limit=0')
    expect(invalid.status).toBe(422)
    expectQuotaHeaders(invalid, 20, 16)
  })

  test('a bulk request costs one credit per item and is refused whole when it does not fit', async () => {
    factory = shared()
    const a = await app()
    const five = { names: ['mercury', 'venus', 'earth', 'mars', 'jupiter'] }
    for (let i = 0; i < 3; i++) expect((await a.json('POST', '/api/v1/planets/bulk', { body: five })).status).toBe(200)
    expectQuotaHeaders(await a.json('GET', '/api/v1/planets/earth'), 20, 4)
    const refused = await a.json('POST', '/api/v1/planets/bulk', { body: five })
    expect(refused.status).toBe(429)
    expect(refused.body.error.detail).toMatch(/costs 5 credits and 4 remain/)
    expect(refused.body.error).toMatchObject({ status: 429, cost: 5, remaining: 4 })
    expectQuotaHeaders(refused, 20, 4)
    // Half an hour until the window ends at 13:00.
    expect(refused.headers.get('retry-after')).toBe('1800')
    // Nothing was spent by the refusal: four single items still fit, then the fifth does not.
    const four = await a.json('POST', '/api/v1/planets/bulk', { body: { names: five.names.slice(0, 4) } })
    expect(four.status).toBe(200)
    expectQuotaHeaders(four, 20, 0)
    const over = await a.json('GET', '/api/v1/planets/earth')
    expect(over.status).toBe(429)
    expectQuotaHeaders(over, 20, 0)
  })

  test('50 concurrent requests against a 20-credit plan, over two app instances: exactly 20 succeed', async () => {
    factory = shared()
    const [a, b] = [await app(), await app()]
    const responses = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).request('GET', '/api/v1/planets/earth')))
    const statuses = responses.map((r) => r.status)
    expect(statuses.filter((s) => s === 200).length).toBe(20)
    expect(statuses.filter((s) => s === 429).length).toBe(30)
    // Each success reports a distinct remaining count 19..0: no two requests took the same credit.
    const remaining = responses.filter((r) => r.status === 200).map((r) => Number(r.headers.get('x-quota-remaining')))
    expect(remaining.sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i))
    await Promise.all(responses.map((r) => r.arrayBuffer()))
  })
})

describe('quota headers without a caller', () => {
  test("a 401 carries the SPEC's quota headers at zero, in either form: a caller who is not known has no credits", async () => {
    const a = await testApp({ clock, domains: [sampleDomain()], env: { ...TINY, ALMANAC_DEFAULT_PLAN: 'tiny' } })
    try {
      for (const form of ['enveloped', 'bare'] as const)
        for (const key of [null, 'not-a-key-0123456789']) {
          const res = await a.json('GET', '/api/v1/planets/earth', { key, form })
          expect(res.status).toBe(401)
          const sent = Object.fromEntries(
            ['x-quota-limit', 'x-quota-remaining', 'x-quota-reset', 'ratelimit-policy', 'ratelimit'].map((h) => [h, res.headers.get(h)]),
          )
          // The reset is now, by the app's clock: nothing to wait for. The IETF pair names a plan: none here.
          const now = String(Math.floor(clock() / 1000))
          expect({ form, key, sent }).toEqual({
            form,
            key,
            sent: { 'x-quota-limit': '0', 'x-quota-remaining': '0', 'x-quota-reset': now, 'ratelimit-policy': null, ratelimit: null },
          })
        }
      // A known caller's refusals still report its quota (here a 404 of an unknown route).
      expectQuotaHeaders(await a.json('GET', '/api/v1/nowhere'), 20, 20)
      // Outside /api/v1 there is no quota.
      const health = await a.request('GET', '/healthz', { key: null })
      expect(health.headers.has('x-quota-limit')).toBe(false)
    } finally {
      await a.close()
    }
  })
})

describe('Redis outage', () => {
  let own: TestRedis
  beforeAll(async () => {
    own = await startRedis()
  })
  afterAll(async () => {
    await own.close()
  })

  test('Redis down: 503 with a clear problem and quota headers; back up: requests are counted again', async () => {
    const store = redisQuotaStore(own.url, { keyPrefix: 'down:', maxBackoffMs: 50 })
    const a = await testApp({ clock, domains: [sampleDomain()], env: TINY, quota: store })
    try {
      expect((await a.json('GET', '/api/v1/planets/earth')).status).toBe(200)
      await own.stop()
      for (let i = 0; i < 3; i++) {
        const res = await a.json('GET', '/api/v1/planets/earth')
        expect(res.status).toBe(503)
        expect(res.body.error.type).toBe('urn:almanac:problem:unavailable')
        expect(res.body.error.detail).toMatch(/quota store is unreachable.*Redis at redis:\/\/127\.0\.0\.1:\d+ is unreachable/)
        expect(res.headers.get('retry-after')).toBe('2')
        expect(res.headers.get('x-quota-limit')).toBe('20')
        expect(res.headers.get('x-quota-remaining')).toBe('0')
        expect(res.headers.get('ratelimit')).toMatch(/^"tiny";r=0;t=[12]$/)
      }
      // An unknown route while the store is down still gets quota headers (from the plan alone).
      const notFound = await a.json('GET', '/api/v1/nowhere')
      expect(notFound.status).toBe(404)
      expect(notFound.headers.get('x-quota-limit')).toBe('20')
      await own.start()
      let status = 0
      for (let i = 0; i < 100 && status !== 200; i++) {
        status = (await a.json('GET', '/api/v1/planets/earth')).status
        if (status !== 200) await Bun.sleep(50)
      }
      expect(status).toBe(200)
      // The restarted server has no persistence: counting started over.
      expectQuotaHeaders(await a.json('GET', '/api/v1/planets/earth'), 20, 18)
    } finally {
      await a.close()
      await store.close()
    }
  })

  test('fail-open: with Redis down requests are served, uncounted, with the plan in the headers', async () => {
    await own.start()
    const store = redisQuotaStore(own.url, { keyPrefix: 'open:' })
    const a = await testApp({ clock, domains: [sampleDomain()], env: { ...TINY, ALMANAC_QUOTA_FAIL_OPEN: 'true' }, quota: store })
    try {
      expect((await a.json('GET', '/api/v1/planets/earth')).status).toBe(200)
      await own.stop()
      for (let i = 0; i < 25; i++) {
        const res = await a.json('GET', '/api/v1/planets/earth')
        expect(res.status).toBe(200)
        expectQuotaHeaders(res, 20, 20)
      }
    } finally {
      await a.close()
      await store.close()
    }
  })

  test('the store chosen by ALMANAC_QUOTA_STORE: a redis:// URL nobody answers gives 503, not a crash', async () => {
    const { freePort } = await import('../support/ports.ts')
    const a = await testApp({ clock, domains: [sampleDomain()], env: { ...TINY, ALMANAC_QUOTA_STORE: `redis://127.0.0.1:${freePort()}` } })
    try {
      const res = await a.json('GET', '/api/v1/planets/earth')
      expect(res.status).toBe(503)
      expect(res.body.error.detail).toMatch(/quota store is unreachable/)
    } finally {
      await a.close()
    }
  })

  test('ALMANAC_QUOTA_STORE=sqlite keeps counting across a restart of the app', async () => {
    const stateDir = tempDir()
    const env = { ...TINY, ALMANAC_QUOTA_STORE: 'sqlite', ALMANAC_STATE_DIR: stateDir }
    const first = await testApp({ clock, domains: [sampleDomain()], env })
    await first.json('POST', '/api/v1/planets/bulk', { body: { names: ['earth', 'mars', 'venus'] } })
    await first.close()
    const second = await testApp({ clock, domains: [sampleDomain()], env })
    try {
      expectQuotaHeaders(await second.json('GET', '/api/v1/planets/earth'), 20, 16)
    } finally {
      await second.close()
    }
  })
})
