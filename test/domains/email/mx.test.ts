/**
 * The MX check against a real DNS server on loopback (test/domains/email/dns-server.ts): MX, A-only
 * (implicit MX), null MX, NXDOMAIN, SERVFAIL, a zone that never answers, TTL caching on an injected
 * clock, one lookup for concurrent checks, a second server tried when the first fails, and the lookup
 * slots shared between callers against a resolver the test holds and releases.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createSocket } from 'node:dgram'
import { mxChecker, type MxResult } from '../../../src/domains/email/mx.ts'
import { parseServer } from '../../../src/domains/email/dns.ts'
import { decodeAnswer, DnsError } from '../../../src/domains/email/dns-message.ts'
import { rng } from '../../support/random.ts'
import { startDnsServer, type DnsServer } from './dns-server.ts'

/** Whose share of the lookup slots the checks take. */
const CALLER = 'key:test'

/** Ten names the server answers only when the test releases them: a slow resolver with no clock in it. */
const HELD = Array.from({ length: 10 }, (_, i) => `held${i}.mx-fair.test`)
const HELD_ZONES = Object.fromEntries(HELD.map((name) => [name, { held: true, mx: [[10, `mx.${name}`]] as [number, string][] }]))
const heldQueries = () => HELD.reduce((n, name) => n + (dns.queries.get(`${name} MX`) ?? 0), 0)

let dns: DnsServer
beforeAll(async () => {
  dns = await startDnsServer({
    'mx.test': {
      mx: [
        [20, 'backup.mx.test'],
        [10, 'mail.mx.test'],
      ],
      ttl: 120,
    },
    'aonly.test': { a: ['192.0.2.1'], ttl: 60 },
    'v6only.test': { aaaa: ['2001:db8::25'] },
    'nullmx.test': { mx: [[0, '']] },
    'empty.test': {},
    'slow.test': { slow: true },
    'fail.test': { servfail: true },
    'garbage.test': { garbage: true },
    'oldserver.test': { noEdns: true, mx: [[5, 'mx.oldserver.test']] },
    'big.test': { truncate: true, mx: Array.from({ length: 30 }, (_, i) => [i, `mx${i}.big.test`] as [number, string]) },
    ...HELD_ZONES,
  })
})
afterAll(() => dns.close())

const clock = () => {
  let t = Date.parse('2026-11-23T12:00:00Z')
  return { now: () => t, advance: (ms: number) => (t += ms) }
}
const checker = (timeoutMs = 1000, c = clock()) => mxChecker({ servers: [parseServer(dns.address)], timeoutMs, now: c.now })

test('MX records, by preference', async () => {
  expect(await checker().check('mx.test', CALLER)).toEqual({
    valid: true,
    hosts: ['mail.mx.test', 'backup.mx.test'],
    implicit: false,
    acceptsMail: true,
    domainExists: true,
    reason: null,
  })
})

test('no MX but an A or AAAA record: deliverable as implicit MX (RFC 5321 §5.1), yet no MX records (SPEC +30)', async () => {
  const implicit: MxResult = {
    valid: false,
    hosts: [],
    implicit: true,
    acceptsMail: true,
    domainExists: true,
    reason: 'no_mx_address_only',
  }
  expect(await checker().check('aonly.test', CALLER)).toEqual(implicit)
  expect(await checker().check('v6only.test', CALLER)).toEqual(implicit)
})

test('a null MX accepts no mail (RFC 7505)', async () => {
  expect(await checker().check('nullmx.test', CALLER)).toEqual({
    valid: false,
    hosts: [],
    implicit: false,
    acceptsMail: false,
    domainExists: true,
    reason: 'null_mx',
  })
})

test('NXDOMAIN: the domain does not exist', async () => {
  expect(await checker().check('nope.test', CALLER)).toMatchObject({
    valid: false,
    domainExists: false,
    acceptsMail: false,
    reason: 'nxdomain',
  })
})

test('a name with no MX and no address accepts no mail, but exists', async () => {
  expect(await checker().check('empty.test', CALLER)).toMatchObject({ valid: false, domainExists: true, reason: 'no_mx_no_address' })
})

test('SERVFAIL and silence are unknown, never "no MX"; silence ends at the deadline', async () => {
  expect(await checker().check('fail.test', CALLER)).toEqual({
    valid: null,
    hosts: [],
    implicit: false,
    acceptsMail: null,
    domainExists: null,
    reason: 'dns_servfail',
  })
  const t0 = performance.now()
  expect(await checker(300).check('slow.test', CALLER)).toMatchObject({ valid: null, domainExists: null, reason: 'dns_timeout' })
  // A bound on a hang, not a speed target: the 300 ms deadline holds with a wide margin.
  expect(performance.now() - t0).toBeLessThan(2000)
})

test('an unreachable server is unknown', async () => {
  // A port nobody listens on: the kernel's ICMP "port unreachable" ends the wait early, or the deadline does.
  const socket = createSocket('udp4')
  await new Promise<void>((r) => socket.bind(0, '127.0.0.1', r))
  const port = socket.address().port
  socket.close()
  const r = await mxChecker({ servers: [parseServer(`127.0.0.1:${port}`)], timeoutMs: 300, now: Date.now }).check('mx.test', CALLER)
  expect(r.valid).toBeNull()
  expect(['dns_unreachable', 'dns_timeout']).toContain(r.reason!)
})

test('the next server is asked when the first fails', async () => {
  const socket = createSocket('udp4')
  await new Promise<void>((r) => socket.bind(0, '127.0.0.1', r))
  const dead = `127.0.0.1:${socket.address().port}`
  socket.close()
  const r = await mxChecker({ servers: [parseServer(dead), parseServer(dns.address)], timeoutMs: 1000, now: Date.now }).check(
    'mx.test',
    CALLER,
  )
  expect(r.valid).toBe(true)
})

test('answers are cached for their TTL (injected clock), failures are not', async () => {
  const c = clock()
  const mx = checker(1000, c)
  const before = dns.queries.get('mx.test MX') ?? 0
  await mx.check('mx.test', CALLER)
  await mx.check('mx.test', CALLER)
  expect(dns.queries.get('mx.test MX')).toBe(before + 1)
  c.advance(119_000)
  await mx.check('mx.test', CALLER)
  expect(dns.queries.get('mx.test MX')).toBe(before + 1)
  c.advance(2_000) // past the 120 s TTL
  await mx.check('mx.test', CALLER)
  expect(dns.queries.get('mx.test MX')).toBe(before + 2)

  const failBefore = dns.queries.get('fail.test MX') ?? 0
  await mx.check('fail.test', CALLER)
  await mx.check('fail.test', CALLER)
  expect(dns.queries.get('fail.test MX')).toBe(failBefore + 2)
})

test('concurrent checks of one domain share one lookup', async () => {
  const mx = checker()
  const before = dns.queries.get('aonly.test MX') ?? 0
  const results = await Promise.all(Array.from({ length: 20 }, () => mx.check('aonly.test', CALLER)))
  expect(results.every((r) => r.implicit && r.acceptsMail === true)).toBe(true)
  expect(dns.queries.get('aonly.test MX')).toBe(before + 1)
})

test('the cache is bounded in entries', async () => {
  const mx = mxChecker({ servers: [parseServer(dns.address)], timeoutMs: 1000, now: Date.now, cacheEntries: 2 })
  await mx.check('mx.test', CALLER)
  await mx.check('aonly.test', CALLER)
  await mx.check('nullmx.test', CALLER) // pushes mx.test out
  const before = dns.queries.get('mx.test MX')!
  await mx.check('mx.test', CALLER)
  expect(dns.queries.get('mx.test MX')).toBe(before + 1)
})

test('an unreadable answer is unknown (dns_bad_answer)', async () => {
  expect(await checker().check('garbage.test', CALLER)).toMatchObject({ valid: null, reason: 'dns_bad_answer' })
})

test('too many domains at once: the rest are unknown (dns_busy), not queued without bound', async () => {
  const mx = mxChecker({ servers: [parseServer(dns.address)], timeoutMs: 300, now: Date.now, maxInflight: 1 })
  const [slow, other] = await Promise.all([mx.check('slow.test', CALLER), mx.check('mx.test', CALLER)])
  expect(slow.reason).toBe('dns_timeout')
  expect(other).toMatchObject({ valid: null, reason: 'dns_busy' })
  expect((await mx.check('mx.test', CALLER)).valid).toBe(true)
})

test('the answer decoder never throws anything but DnsError on random bytes', () => {
  const random = rng(53)
  const question = [0, 1, 0, 0, 0, 0, 0, 0, 1, 97, 4, 116, 101, 115, 116, 0, 0, 15, 0, 1]
  for (let i = 0; i < 20_000; i++) {
    const tail = Array.from({ length: Math.floor(random() * 120) }, () => Math.floor(random() * 256))
    // A valid header and question (id 0x1234, one question `a.test MX`, random counts), then random records.
    const counts = [Math.floor(random() * 4), Math.floor(random() * 4)]
    const msg = Buffer.from([0x12, 0x34, 0x84, 0x00, 0, 1, 0, counts[0]!, 0, counts[1]!, 0, 0, ...question.slice(8), ...tail])
    try {
      decodeAnswer(msg, 0x1234, 'a.test', 15)
    } catch (e) {
      expect(e).toBeInstanceOf(DnsError)
    }
  }
})

test('a truncated UDP answer is asked again over TCP', async () => {
  const r = await checker().check('big.test', CALLER)
  expect(r.valid).toBe(true)
  expect(r.hosts).toEqual(Array.from({ length: 10 }, (_, i) => `mx${i}.big.test`))
  expect(dns.queries.get('big.test MX')).toBe(1)
  expect(dns.queries.get('big.test MX tcp')).toBe(1)
})

test('a server that refuses EDNS (FORMERR) is asked again without it', async () => {
  expect(await checker().check('oldserver.test', CALLER)).toMatchObject({ valid: true, hosts: ['mx.oldserver.test'] })
  expect(dns.queries.get('oldserver.test MX')).toBe(2)
})

describe('lookup slots are shared between callers', () => {
  // Eight slots, four per caller (the default share: an eighth, at least 4). The deadline is only a bound:
  // the held queries are released by the test long before it.
  const fairChecker = () => mxChecker({ servers: [parseServer(dns.address)], timeoutMs: 20_000, now: Date.now, maxInflight: 8 })

  test("one caller's bulk takes its share only; another caller's checks still run", async () => {
    const mx = fairChecker()
    expect(mx.slots).toMatchObject({ total: 8, perCaller: 4 })
    const queriesBefore = heldQueries()
    const bulk = Promise.all(HELD.map((name) => mx.check(name, 'key:bulk')))
    await dns.whenHeld(4)
    expect(mx.slots.held('key:bulk')).toBe(4)
    expect(mx.slots.refused.share).toBe(6)
    // The other caller's lookup is made and answered while the bulk's are still held.
    expect(await mx.check('mx.test', 'key:other')).toMatchObject({ valid: true, reason: null })
    expect(mx.slots.held('key:other')).toBe(0)
    dns.release()
    const results = await bulk
    expect(results.filter((r) => r.valid === true)).toHaveLength(4)
    expect(results.filter((r) => r.reason === 'dns_busy')).toHaveLength(6)
    expect(results.filter((r) => r.reason === 'dns_busy').every((r) => r.valid === null && r.domainExists === null)).toBe(true)
    // Only the share reached the resolver; the slots are all given back.
    expect(heldQueries() - queriesBefore).toBe(4)
    expect(mx.slots.held()).toBe(0)
  })

  test('the pool is still bounded: once every slot is held, a new caller is busy too', async () => {
    const mx = fairChecker()
    const first = Promise.all(HELD.slice(0, 4).map((name) => mx.check(name, 'key:a')))
    const second = Promise.all(HELD.slice(4, 8).map((name) => mx.check(name, 'key:b')))
    await dns.whenHeld(8)
    expect(mx.slots.held()).toBe(8)
    expect(await mx.check('aonly.test', 'key:c')).toMatchObject({ valid: null, reason: 'dns_busy' })
    expect(mx.slots.refused).toEqual({ share: 0, full: 1 })
    dns.release()
    expect((await Promise.all([first, second])).flat().every((r) => r.valid === true)).toBe(true)
    expect(mx.slots.held()).toBe(0)
  })

  test('joining a lookup under way takes no slot of the joiner', async () => {
    const mx = mxChecker({ servers: [parseServer(dns.address)], timeoutMs: 20_000, now: Date.now, maxInflight: 4, maxInflightPerCaller: 1 })
    const first = mx.check(HELD[9]!, 'key:a')
    await dns.whenHeld(1)
    const joined = mx.check(HELD[9]!, 'key:b')
    expect(mx.slots.held('key:b')).toBe(0)
    expect(await mx.check('mx.test', 'key:b')).toMatchObject({ valid: true })
    dns.release()
    expect(await first).toMatchObject({ valid: true })
    expect(await joined).toMatchObject({ valid: true })
  })
})
