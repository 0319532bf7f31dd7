/**
 * Domain age over RDAP against a real HTTP server on loopback (rdap-server.ts): young, month-old and old
 * domains, a 404, a record without a registration event, a server error and one that never answers; the
 * 7-day cache in the state SQLite (it survives a new client) and in Redis; all on an injected clock.
 * Redirects: followed within the configured server up to three, refused to http, loopback, private and
 * other non-public addresses, and never stored; the lookup slots shared between callers.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { parseIp, type IpAddress } from '../../../src/lib/ip-address.ts'
import { isPublicAddress } from '../../../src/lib/ip-reserved.ts'
import { openDataDir } from '../../../src/data/open.ts'
import { loadBootstrap, parseBootstrap, rdapBaseFor } from '../../../src/domains/email/rdap-bootstrap.ts'
import { RDAP_ARTIFACT } from '../../../src/domains/email/rdap-build.ts'
import { FOUND_TTL_MS, NOT_FOUND_TTL_MS, rdapClient, registrationDate } from '../../../src/domains/email/rdap.ts'
import { memoryRdapStore, redisRdapStore, sqliteRdapStore, type RdapStore } from '../../../src/domains/email/rdap-store.ts'
import { startRedis } from '../../support/redis.ts'
import { tempDirs } from '../../support/temp.ts'
import { startRdapServer, type RdapFixture } from './rdap-server.ts'

/** The bootstrap `data build` made (the email-rdap dataset). */
const BUILT = openDataDir().path(RDAP_ARTIFACT)

/** Whose share of the lookup slots the checks take. */
const CALLER = 'key:test'

const NOW = Date.parse('2026-11-23T12:00:00Z')
const DAY = 86400_000
const tempDir = tempDirs('almanac-email-rdap-')
let rdap: RdapFixture
/** Another server on loopback, answering records: where a refused redirect would have led. */
let elsewhere: RdapFixture
beforeAll(() => {
  elsewhere = startRdapServer({ 'to-loopback.test': { days: 1 }, 'to-localhost.test': { days: 1 } }, NOW)
  const port = new URL(elsewhere.base).port
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
      'hops3.test': { hops: 3, days: 100 },
      'hops4.test': { hops: 4, days: 100 },
      'to-loopback.test': { redirect: `${elsewhere.base}domain/to-loopback.test` },
      'to-https-loopback.test': { redirect: `https://127.0.0.1:${port}/domain/to-https-loopback.test` },
      'to-localhost.test': { redirect: `https://localhost:${port}/domain/to-localhost.test` },
      'to-v6-loopback.test': { redirect: `https://[::1]:${port}/domain/x.test` },
      'to-private.test': { redirect: 'https://10.20.30.40/domain/x.test' },
      'to-metadata.test': { redirect: 'https://169.254.169.254/latest/meta-data/' },
      'to-unique-local.test': { redirect: 'https://[fd00::1]/domain/x.test' },
      'to-mapped.test': { redirect: 'https://[::ffff:127.0.0.1]/domain/x.test' },
      'to-http-public.test': { redirect: 'http://8.8.8.8/domain/x.test' },
      'to-nowhere.test': { redirect: 'https://[not an address/' },
      'slow1.test': { slow: true },
      'slow2.test': { slow: true },
      'slow3.test': { slow: true },
      'slow4.test': { slow: true },
      'slow5.test': { slow: true },
      'slow6.test': { slow: true },
    },
    NOW,
  )
})
afterAll(async () => {
  await rdap.stop()
  await elsewhere.stop()
})

const clock = () => {
  let t = NOW
  return { now: () => t, advance: (ms: number) => (t += ms) }
}
const client = (store: RdapStore, now = () => NOW, timeoutMs = 1000) =>
  rdapClient({ baseUrl: rdap.base, bootstrap: loadBootstrap(undefined, BUILT), timeoutMs, store, now, log: () => {} })

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
    bootstrap: loadBootstrap(undefined, BUILT),
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
    bootstrap: loadBootstrap(undefined, BUILT),
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

test('ALMANAC_EMAIL_RDAP_CACHE=memory: answers are kept 7 days in this process, shared by its clients', async () => {
  const store = memoryRdapStore()
  const c1 = clock()
  const before = rdap.requests.get('month.test') ?? 0
  await client(store, c1.now).lookup('month.test', CALLER)
  expect((await client(store, c1.now).lookup('month.test', CALLER)).status).toBe('found')
  expect(rdap.requests.get('month.test')).toBe(before + 1)
  c1.advance(FOUND_TTL_MS + 1000)
  await client(store, c1.now).lookup('month.test', CALLER)
  expect(rdap.requests.get('month.test')).toBe(before + 2)
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

test('bootstrap: the built file, https preferred, TLD lookup', () => {
  const built = loadBootstrap(undefined, BUILT)
  expect(built.publication).toMatch(/^\d{4}-\d\d-\d\d/)
  expect(rdapBaseFor(built, 'example.com')).toBe('https://rdap.verisign.com/com/v1/')
  expect(rdapBaseFor(built, 'example.invalid')).toBeNull()
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

describe('redirects', () => {
  test('followed within the configured server, three at most', async () => {
    const c = client(sqliteRdapStore(tempDir(), () => {}))
    expect(await c.lookup('hops3.test', CALLER)).toEqual({
      status: 'found',
      registered: new Date(NOW - 100 * DAY).toISOString(),
      reason: null,
    })
    expect(rdap.requests.get('hops3.test')).toBe(4)
    expect(await c.lookup('hops4.test', CALLER)).toEqual({ status: 'unknown', registered: null, reason: 'rdap_redirect_refused' })
    // The fourth redirect is not followed: the first request and three redirects, no fifth.
    expect(rdap.requests.get('hops4.test')).toBe(4)
  })

  const refused = [
    'to-loopback.test', // http, to another server on loopback
    'to-https-loopback.test',
    'to-localhost.test', // a name that resolves to loopback
    'to-v6-loopback.test',
    'to-private.test',
    'to-metadata.test', // link-local: a cloud's metadata service
    'to-unique-local.test',
    'to-mapped.test', // IPv4-mapped IPv6 of 127.0.0.1
    'to-http-public.test', // a public address, but not https
    'to-nowhere.test', // a Location that is no URL
  ]

  test.each(refused)('%s: refused, the age unknown, nothing stored', async (domain) => {
    const dir = tempDir()
    const elsewhereBefore = elsewhere.requests.get(domain) ?? 0
    const before = rdap.requests.get(domain) ?? 0
    const logs: string[] = []
    const c = rdapClient({
      baseUrl: rdap.base,
      bootstrap: loadBootstrap(undefined, BUILT),
      timeoutMs: 2000,
      store: sqliteRdapStore(dir, () => {}),
      now: () => NOW,
      log: (l) => logs.push(l),
    })
    expect(await c.lookup(domain, CALLER)).toEqual({ status: 'unknown', registered: null, reason: 'rdap_redirect_refused' })
    expect(logs.join('\n')).toContain('rdap_redirect_refused')
    // The redirect's target was never asked.
    expect(elsewhere.requests.get(domain) ?? 0).toBe(elsewhereBefore)
    // Not stored as an answer: a new client over the same store asks the server again, and is refused again.
    const again = client(sqliteRdapStore(dir, () => {}))
    expect(await again.lookup(domain, CALLER)).toMatchObject({ status: 'unknown', reason: 'rdap_redirect_refused' })
    expect(rdap.requests.get(domain)).toBe(before + 2)
  })

  test('the public-address rule (lib/ip-reserved.ts)', () => {
    const ip = (text: string) => parseIp(text) as IpAddress
    for (const a of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e'])
      expect([a, isPublicAddress(ip(a))]).toEqual([a, true])
    for (const a of [
      '127.0.0.1',
      '127.255.0.9',
      '0.0.0.0',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.1.1',
      '100.64.0.1',
      '169.254.169.254',
      '224.0.0.251',
      '255.255.255.255',
      '::1',
      '::',
      '::127.0.0.1',
      '::ffff:10.0.0.1',
      'fe80::1',
      'fd12:3456::1',
      'ff02::1',
      '64:ff9b::7f00:1',
    ])
      expect([a, isPublicAddress(ip(a))]).toEqual([a, false])
  })
})

test("lookup slots: one caller's lookups take its share only; another caller's still run", async () => {
  const c = rdapClient({
    baseUrl: rdap.base,
    bootstrap: loadBootstrap(undefined, BUILT),
    timeoutMs: 20_000, // a bound only: the test releases the held requests
    store: sqliteRdapStore(tempDir(), () => {}),
    now: () => NOW,
    log: () => {},
    maxInflight: 8,
    maxInflightPerCaller: 4,
  })
  const slow = ['slow1.test', 'slow2.test', 'slow3.test', 'slow4.test', 'slow5.test', 'slow6.test']
  const before = slow.map((d) => rdap.requests.get(d) ?? 0)
  const bulk = Promise.all(slow.map((d) => c.lookup(d, 'key:bulk')))
  await rdap.whenHanging(4)
  expect(c.slots.held('key:bulk')).toBe(4)
  expect(await c.lookup('old.test', 'key:other')).toMatchObject({ status: 'found' })
  rdap.release()
  const results = await bulk
  expect(results.filter((r) => r.reason === 'rdap_busy')).toHaveLength(2)
  expect(results.filter((r) => r.reason === 'rdap_server_error')).toHaveLength(4)
  expect(slow.reduce((n, d, i) => n + (rdap.requests.get(d) ?? 0) - before[i]!, 0)).toBe(4)
  expect(c.slots.held()).toBe(0)
})
