/**
 * The DNS resolver's health, through the real app with a real DNS server on loopback: a resolver that
 * answers NXDOMAIN to everything (as a filtered host's does) is found at start, said once in the log and
 * in /readyz (the domain stays ready), and while it lasts the MX check is unknown instead of "the domain
 * does not exist"; once the resolver answers the well-known names again, the next check clears it all,
 * and no NXDOMAIN it told meanwhile is served from the cache. The check itself is also driven against
 * SERVFAIL, timeouts, empty answers and an unreachable server.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import emailDomainDefault, { emailDomain } from '../../../src/domains/email/index.ts'
import { parseServer } from '../../../src/domains/email/dns.ts'
import { resolverHealth } from '../../../src/domains/email/resolver-health.ts'
import type { EmailService } from '../../../src/domains/email/service.ts'
import { DEFAULT_DNS_CHECK_NAMES } from '../../../src/domains/email/settings.ts'
import { testApp, type TestApp } from '../../support/app.ts'
import { tempDirs } from '../../support/temp.ts'
import { startDnsServer, type DnsServer } from './dns-server.ts'
import { startRdapServer, type RdapFixture } from './rdap-server.ts'

const NOW = Date.parse('2026-11-23T12:00:00Z')
const tempDir = tempDirs('almanac-email-resolver-')

let dns: DnsServer
let rdap: RdapFixture
let app: TestApp
const lines: Record<string, any>[] = []
const service = () => app.opened<{ service: EmailService }>('email').service
const risk = async (email: string, form: 'enveloped' | 'bare' = 'enveloped') => {
  const { status, body } = await app.json('POST', '/api/v1/email/risk', { body: { email }, form })
  expect(status).toBe(200)
  return form === 'enveloped' ? body.data : body
}
const readyz = async () => {
  const { status, body } = await app.json('GET', '/readyz', { key: null })
  return { status, body }
}
const resolverLines = () => lines.filter((l) => /DNS resolver/.test(String(l.msg)))

beforeAll(async () => {
  // Starts as the filtered host's resolver: NXDOMAIN for every name, the well-known ones included.
  dns = await startDnsServer(
    { 'gmail.com': { mx: [[5, 'gmail-smtp-in.l.google.com']], a: ['192.0.2.25'] }, 'old.test': { mx: [[10, 'mx.old.test']] } },
    { nxdomainForAll: true },
  )
  rdap = startRdapServer({ 'gmail.com': { days: 8000 }, 'old.test': { days: 4000 } }, NOW)
  app = await testApp({
    env: {
      ALMANAC_EMAIL_DNS_SERVERS: dns.address,
      ALMANAC_EMAIL_DNS_TIMEOUT_MS: '400',
      ALMANAC_EMAIL_RDAP_URL: rdap.base,
      ALMANAC_STATE_DIR: tempDir(),
    },
    domains: [emailDomain({ now: () => NOW })],
    log: (line) => lines.push(JSON.parse(line)),
  })
  // The check made at start: the answers below are what follows it.
  await service().resolver.first
})
afterAll(async () => {
  await app?.close()
  await rdap?.stop()
  await dns?.close()
})

describe('a resolver that answers NXDOMAIN for everything', () => {
  test('is found at start: one warn line naming the names asked and the server, and a /readyz warning; still ready', async () => {
    expect(service().resolver.healthy).toBe(false)
    const warned = resolverLines()
    expect(warned).toHaveLength(1)
    expect(warned[0]).toMatchObject({ level: 'warn', domain: 'email' })
    for (const name of DEFAULT_DNS_CHECK_NAMES) expect(warned[0]!.msg).toContain(`${name}: NXDOMAIN`)
    expect(warned[0]!.msg).toContain(`Servers asked: ${dns.address}`)
    for (const name of DEFAULT_DNS_CHECK_NAMES) expect(dns.queries.get(`${name} A`)).toBeGreaterThanOrEqual(1)

    const { status, body } = await readyz()
    expect(status).toBe(200)
    expect(body.status).toBe('ready')
    expect(body.domains).toEqual([expect.objectContaining({ domain: 'email', ready: true })])
    expect(body.warnings).toEqual([{ domain: 'email', component: 'dns_resolver', problem: service().resolver.problem }])
    // The same words as the log, without the server's address (/readyz answers anyone).
    expect(warned[0]!.msg.startsWith(body.warnings[0].problem)).toBe(true)
    expect(body.warnings[0].problem).not.toContain(dns.address)
    expect(body.warnings[0].problem).toContain('ALMANAC_EMAIL_DNS_SERVERS')
  })

  test('gmail.com is not scored as a domain that does not exist: the MX check is unknown, named, and adds nothing', async () => {
    const before = dns.queries.get('gmail.com MX') ?? 0
    const a = await risk('someone@gmail.com')
    expect(a.checks.mx_record).toEqual({
      valid: null,
      mx_hosts: [],
      implicit_mx: false,
      accepts_mail: null,
      domain_exists: null,
      reason: 'dns_resolver_unhealthy',
    })
    expect(a.unknown_checks).toEqual(['mx_record'])
    // Only the free-provider list speaks: no `no_mx` +30.
    expect(a.risk_factors).toEqual([{ factor: 'free_provider', points: 5 }])
    expect(a.risk_score).toBe(5)
    const b = await risk('someone@gmail.com', 'bare')
    expect(b).toMatchObject({ domain_exists: null, has_mx: null, risk_score: 0.05, unknown_checks: ['mx_record'] })
    // Nothing is asked of a resolver whose answers are not believed.
    expect(dns.queries.get('gmail.com MX') ?? 0).toBe(before)
    // The checks that do not need the DNS still answer.
    expect(a.checks.domain_age).toMatchObject({ domain: 'gmail.com', age_days: 8000, source: 'rdap' })
  })
})

describe('the resolver recovers, then fails again', () => {
  test('the next check clears the warning (an info line) and MX is scored again', async () => {
    dns.nxdomainForAll = false
    await service().resolver.check()
    expect(service().resolver.healthy).toBe(true)
    expect(service().resolver.problem).toBeNull()
    const said = resolverLines()
    expect(said).toHaveLength(2)
    expect(said[1]).toMatchObject({ level: 'info', domain: 'email' })
    expect(said[1]!.msg).toContain('answers again')

    const { status, body } = await readyz()
    expect(status).toBe(200)
    expect(body.warnings).toBeUndefined()
    const a = await risk('someone@gmail.com')
    expect(a.checks.mx_record).toMatchObject({ valid: true, mx_hosts: ['gmail-smtp-in.l.google.com'], domain_exists: true, reason: null })
    expect(a.unknown_checks).toEqual([])
    expect(a.risk_score).toBe(5)
  })

  test('what the resolver said before a check caught it lying is not served once it answers again', async () => {
    // Between two checks a resolver may start lying: its NXDOMAIN is scored (nothing can tell it yet)…
    dns.nxdomainForAll = true
    const lied = await risk('someone@old.test')
    expect(lied.checks.mx_record.reason).toBe('nxdomain')
    // …until the next check finds it, and a warning again.
    await service().resolver.check()
    expect(service().resolver.healthy).toBe(false)
    expect((await readyz()).body.warnings).toEqual([expect.objectContaining({ domain: 'email', component: 'dns_resolver' })])
    expect((await risk('someone@old.test')).checks.mx_record.reason).toBe('dns_resolver_unhealthy')
    expect(resolverLines().map((l) => l.level)).toEqual(['warn', 'info', 'warn'])
    // Repaired: old.test is asked again, not answered from the lie's negative cache.
    dns.nxdomainForAll = false
    await service().resolver.check()
    const before = dns.queries.get('old.test MX') ?? 0
    const a = await risk('someone@old.test')
    expect(a.checks.mx_record).toMatchObject({ valid: true, mx_hosts: ['mx.old.test'], domain_exists: true })
    expect(a.risk_score).toBe(0)
    expect(dns.queries.get('old.test MX')).toBe(before + 1)
    expect((await readyz()).body.warnings).toBeUndefined()
  })
})

describe('the check', () => {
  const logged: { level: string; msg: string }[] = []
  const check = async (server: DnsServer | string, names: string[]) => {
    const health = resolverHealth({
      servers: [parseServer(typeof server === 'string' ? server : server.address)],
      names,
      timeoutMs: 200,
      log: (l) => logged.push(l),
    })
    await health.first
    health.stop()
    return health
  }

  test('SERVFAIL, a timeout and an empty answer for every name: unhealthy, each failure named', async () => {
    const bad = await startDnsServer(
      { 'iana.org': { servfail: true }, 'example.com': { slow: true }, 'gmail.com': { mx: [[5, 'mx.gmail.com']] } },
      { wellKnown: false },
    )
    try {
      const health = await check(bad, DEFAULT_DNS_CHECK_NAMES)
      expect(health.healthy).toBe(false)
      expect(health.problem).toContain('(iana.org: SERVFAIL, example.com: timeout, gmail.com: no address)')
    } finally {
      await bad.close()
    }
  })

  test('one name with an address is enough; the first healthy check says nothing', async () => {
    const partly = await startDnsServer({ 'iana.org': { servfail: true }, 'example.com': { a: ['192.0.2.1'] } }, { wellKnown: false })
    try {
      const before = logged.length
      const health = await check(partly, DEFAULT_DNS_CHECK_NAMES)
      expect(health.healthy).toBe(true)
      expect(health.problem).toBeNull()
      expect(logged.length).toBe(before)
    } finally {
      await partly.close()
    }
  })

  test('no server listening: unhealthy', async () => {
    // A port just freed: nothing answers there (an ICMP refusal, or the deadline).
    const gone = await startDnsServer({})
    const address = gone.address
    await gone.close()
    const health = await check(address, ['iana.org'])
    expect(health.healthy).toBe(false)
    expect(health.problem).toMatch(/iana\.org: (unreachable|timeout)/)
  })

  test('no names (`none`), or offline: no check, and the resolver is believed', async () => {
    const health = await check('127.0.0.1:9', [])
    expect(health.healthy).toBeNull()
    const offline = await testApp({
      env: { ALMANAC_EMAIL_OFFLINE: '1', ALMANAC_EMAIL_DNS_SERVERS: dns.address },
      domains: [emailDomainDefault],
    })
    try {
      const before = dns.queries.get('iana.org A')
      await offline.opened<{ service: EmailService }>('email').service.resolver.first
      expect(offline.opened<{ service: EmailService }>('email').service.resolver.healthy).toBeNull()
      expect(dns.queries.get('iana.org A')).toBe(before)
      expect((await offline.json('GET', '/readyz', { key: null })).body.warnings).toBeUndefined()
    } finally {
      await offline.close()
    }
  })
})
