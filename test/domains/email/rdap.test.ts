/**
 * Domain age over RDAP against a real HTTP server on loopback (rdap-server.ts): young, month-old and old
 * domains, a 404, a record without a registration event, a server error and one that never answers; the
 * 7-day cache in the state SQLite (it survives a new client) and in Redis; all on an injected clock.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { loadBootstrap, parseBootstrap, rdapBaseFor } from '../../../src/domains/email/rdap-bootstrap.ts'
import { FOUND_TTL_MS, NOT_FOUND_TTL_MS, rdapClient, registrationDate } from '../../../src/domains/email/rdap.ts'
import { redisRdapStore, sqliteRdapStore, type RdapStore } from '../../../src/domains/email/rdap-store.ts'
import { startRedis } from '../../support/redis.ts'
import { tempDirs } from '../../support/temp.ts'
import { startRdapServer, type RdapFixture } from './rdap-server.ts'

/** Whose share of the lookup slots the checks take. */
const CALLER = 'key:test'

const NOW = Date.parse('2026-11-23T12:00:00Z')
const DAY = 86400_000
const tempDir = tempDirs('almanac-email-rdap-')
let rdap: RdapFixture
beforeAll(() => {
  rdap = startRdapServer(
    {
      'young.test': { days: 3 },
      'month.test': { days: 20 },
      'old.test': { days: 3650 },
      'bare.test': { noEvent: true },
      'slow.test': { slow: true },
      'broken.test': { broken: true },
      'huge.test': { huge: true },
      'html.test': { notJson: true },
    },
    NOW,
  )
})
afterAll(() => rdap.stop())

const clock = () => {
  let t = NOW
  return { now: () => t, advance: (ms: number) => (t += ms) }
}
const client = (store: RdapStore, now = () => NOW, timeoutMs = 1000) =>
  rdapClient({ baseUrl: rdap.base, bootstrap: loadBootstrap(undefined), timeoutMs, store, now, log: () => {} })

test('registration dates of young, month-old and old domains', async () => {
  const c = client(sqliteRdapStore(tempDir(), () => {}))
  expect(await c.lookup('young.test', CALLER)).toEqual({ status: 'found', registered: new Date(NOW - 3 * DAY).toISOString(), reason: null })
  expect((await c.lookup('month.test', CALLER)).registered).toBe(new Date(NOW - 20 * DAY).toISOString())
  expect((await c.lookup('old.test', CALLER)).registered).toBe(new Date(NOW - 3650 * DAY).toISOString())
})

test('404 is "not registered"; a record without a registration event says so', async () => {
  const c = client(sqliteRdapStore(tempDir(), () => {}))
  expect(await c.lookup('unknown.test', CALLER)).toEqual({ status: 'not_found', registered: null, reason: 'not_registered' })
  expect(await c.lookup('bare.test', CALLER)).toEqual({ status: 'found', registered: null, reason: 'no_registration_event' })
})

test('a server error and a server that never answers are unknown; the wait ends at the timeout', async () => {
  const c = client(
    sqliteRdapStore(tempDir(), () => {}),
    () => NOW,
    300,
  )
  expect(await c.lookup('broken.test', CALLER)).toEqual({ status: 'unknown', registered: null, reason: 'rdap_server_error' })
  const t0 = performance.now()
  expect(await c.lookup('slow.test', CALLER)).toEqual({ status: 'unknown', registered: null, reason: 'rdap_timeout' })
  // A bound on a hang, not a speed target.
  expect(performance.now() - t0).toBeLessThan(2000)
})

test('an endless or non-JSON body is a bad answer, read no further than 512 KiB', async () => {
  const c = client(sqliteRdapStore(tempDir(), () => {}))
  expect(await c.lookup('huge.test', CALLER)).toEqual({ status: 'unknown', registered: null, reason: 'rdap_bad_answer' })
  expect(await c.lookup('html.test', CALLER)).toEqual({ status: 'unknown', registered: null, reason: 'rdap_bad_answer' })
})

test('too many lookups at once: the rest are unknown (rdap_busy)', async () => {
  const c = rdapClient({
    baseUrl: rdap.base,
    bootstrap: loadBootstrap(undefined),
    timeoutMs: 300,
    store: sqliteRdapStore(tempDir(), () => {}),
    now: () => NOW,
    log: () => {},
    maxInflight: 1,
  })
  const [slow, other] = await Promise.all([c.lookup('slow.test', CALLER), c.lookup('old.test', CALLER)])
  expect(slow.reason).toBe('rdap_timeout')
  expect(other.reason).toBe('rdap_busy')
})

test('an unreachable server is unknown', async () => {
  const c = rdapClient({
    baseUrl: 'http://127.0.0.1:1/',
    bootstrap: loadBootstrap(undefined),
    timeoutMs: 500,
    store: sqliteRdapStore(tempDir(), () => {}),
    now: () => NOW,
    log: () => {},
  })
  expect(await c.lookup('old.test', CALLER)).toMatchObject({ status: 'unknown', reason: 'rdap_unreachable' })
})

test('answers are kept 7 days in the state SQLite, across clients (a restart)', async () => {
  const dir = tempDir()
  const c1 = clock()
  const first = client(
    sqliteRdapStore(dir, () => {}),
    c1.now,
  )
  const before = rdap.requests.get('old.test') ?? 0
  await first.lookup('old.test', CALLER)
  expect(rdap.requests.get('old.test')).toBe(before + 1)
  // A new client (new memory cache) over the same state directory: no new request.
  const second = client(
    sqliteRdapStore(dir, () => {}),
    c1.now,
  )
  expect((await second.lookup('old.test', CALLER)).status).toBe('found')
  expect(rdap.requests.get('old.test')).toBe(before + 1)
  // 7 days later, a fresh client asks again.
  c1.advance(FOUND_TTL_MS + 1000)
  const third = client(
    sqliteRdapStore(dir, () => {}),
    c1.now,
  )
  await third.lookup('old.test', CALLER)
  expect(rdap.requests.get('old.test')).toBe(before + 2)
})

test('"not registered" is kept an hour only; failures are not stored', async () => {
  const dir = tempDir()
  const c1 = clock()
  const before = rdap.requests.get('later.test') ?? 0
  await client(
    sqliteRdapStore(dir, () => {}),
    c1.now,
  ).lookup('later.test', CALLER)
  await client(
    sqliteRdapStore(dir, () => {}),
    c1.now,
  ).lookup('later.test', CALLER)
  expect(rdap.requests.get('later.test')).toBe(before + 1)
  c1.advance(NOT_FOUND_TTL_MS + 1000)
  await client(
    sqliteRdapStore(dir, () => {}),
    c1.now,
  ).lookup('later.test', CALLER)
  expect(rdap.requests.get('later.test')).toBe(before + 2)

  const brokenBefore = rdap.requests.get('broken.test') ?? 0
  await client(
    sqliteRdapStore(dir, () => {}),
    c1.now,
  ).lookup('broken.test', CALLER)
  await client(
    sqliteRdapStore(dir, () => {}),
    c1.now,
  ).lookup('broken.test', CALLER)
  expect(rdap.requests.get('broken.test')).toBe(brokenBefore + 2)
})

test('concurrent lookups of one domain make one request', async () => {
  const c = client(sqliteRdapStore(tempDir(), () => {}))
  const before = rdap.requests.get('month.test') ?? 0
  await Promise.all(Array.from({ length: 10 }, () => c.lookup('month.test', CALLER)))
  expect(rdap.requests.get('month.test')).toBe(before + 1)
})

test('with a Redis quota store, answers are kept in Redis with their expiry', async () => {
  const redis = await startRedis()
  try {
    const store = redisRdapStore(redis.url, () => {})
    const before = rdap.requests.get('young.test') ?? 0
    await client(store).lookup('young.test', CALLER)
    // Another instance (new client, new connection) finds it in Redis.
    const other = redisRdapStore(redis.url, () => {})
    expect(await client(other).lookup('young.test', CALLER)).toMatchObject({
      status: 'found',
      registered: new Date(NOW - 3 * DAY).toISOString(),
    })
    expect(rdap.requests.get('young.test')).toBe(before + 1)
    // The key expires with the entry: about 7 days.
    const probe = new Bun.RedisClient(redis.url)
    const ttl = await probe.send('PTTL', ['almanac:email:rdap:young.test'])
    probe.close()
    expect(Number(ttl)).toBeGreaterThan(FOUND_TTL_MS - 60_000)
    expect(Number(ttl)).toBeLessThanOrEqual(FOUND_TTL_MS)
    // Redis down: lookups still work, straight from RDAP.
    await redis.stop()
    const down = redisRdapStore(redis.url, () => {})
    expect((await client(down).lookup('old.test', CALLER)).status).toBe('found')
    store.close()
    other.close()
    down.close()
  } finally {
    await redis.close()
  }
})

test('registration event parsing (RFC 9083 events)', () => {
  expect(
    registrationDate({
      events: [
        { eventAction: 'expiration', eventDate: '2030-01-01T00:00:00Z' },
        { eventAction: 'registration', eventDate: '1995-08-14T04:00:00Z' },
      ],
    }),
  ).toBe('1995-08-14T04:00:00.000Z')
  expect(registrationDate({ events: [{ eventAction: 'Registration', eventDate: '2020-02-29' }] })).toBe('2020-02-29T00:00:00.000Z')
  expect(registrationDate({ events: [{ eventAction: 'registration', eventDate: 'yesterday' }] })).toBeNull()
  expect(registrationDate({ events: 'none' })).toBeNull()
  expect(registrationDate(null)).toBeNull()
  expect(registrationDate({ events: [null, 1, { eventAction: 'registration' }] })).toBeNull()
})

test('bootstrap: the shipped file, https preferred, TLD lookup', () => {
  const shipped = loadBootstrap(undefined)
  expect(shipped.publication).toMatch(/^\d{4}-\d\d-\d\d/)
  expect(rdapBaseFor(shipped, 'example.com')).toBe('https://rdap.verisign.com/com/v1/')
  expect(rdapBaseFor(shipped, 'example.invalid')).toBeNull()
  const b = parseBootstrap(
    {
      services: [
        [
          ['Net', 'com'],
          ['http://a.example/rdap', 'https://b.example/rdap'],
        ],
        'junk',
        [[1], []],
      ],
    },
    'test',
  )
  expect(rdapBaseFor(b, 'x.net')).toBe('https://b.example/rdap/')
  expect(() => parseBootstrap({ nope: 1 }, 'test')).toThrow('not an RDAP bootstrap file')
})
