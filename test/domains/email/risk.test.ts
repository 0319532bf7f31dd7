/**
 * POST /email/risk and /email/risk/bulk through the real app, with a real DNS server and a real RDAP
 * server on loopback and the real built lists. Every scoring rule alone, then together (the cap), both
 * forms, dotted `fields`, quota per item, bulk independence, offline mode, bad input, and two callers'
 * shares of the DNS lookup slots against a resolver the test holds and releases. Domain ages are
 * computed against an injected clock. The list domains used are found in the upstream files themselves
 * (the oracle), not in our artifact.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { emailDomain } from '../../../src/domains/email/index.ts'
import { mailcheckerDomains } from '../../../src/domains/email/build.ts'
import { BareItemSchema, BareSchema, EnvelopedItemSchema, EnvelopedSchema } from '../../../src/domains/email/present.ts'
import { POINTS, score, tierOf } from '../../../src/domains/email/score.ts'
import { Value } from '@sinclair/typebox/value'
import { TEST_KEY, testApp, type TestApp } from '../../support/app.ts'
import { MIRROR } from '../../support/mirror.ts'
import { startRedis } from '../../support/redis.ts'
import { tempDirs } from '../../support/temp.ts'
import { startDnsServer, type DnsServer } from './dns-server.ts'
import { startRdapServer, type RdapFixture, type RdapZone } from './rdap-server.ts'

const NOW = Date.parse('2026-11-23T12:00:00Z')
const tempDir = tempDirs('almanac-email-risk-')
const ROOT = join(import.meta.dir, '../../..')

// The oracle: upstream files as published.
const mailchecker = new Set(mailcheckerDomains(readFileSync(join(ROOT, 'node_modules/mailchecker/platform/node/index.js'), 'utf8')))
const dispJs = new Set(
  JSON.parse(
    readFileSync(join(ROOT, 'node_modules/disposable-email-domains-js/dist/dict/disposable_email_blocklist.json'), 'utf8'),
  ) as string[],
)
const burner = new Set(
  readFileSync(join(ROOT, 'node_modules/burner-email-providers/emails.txt'), 'utf8')
    .split('\n')
    .map((s) => s.trim().toLowerCase()),
)
const free = new Set(JSON.parse(readFileSync(join(ROOT, 'node_modules/free-email-domains/domains.json'), 'utf8')) as string[])
const abuseFile = readFileSync(join(MIRROR, 'email/abuse-domains-blocklistproject-2026-07-20.txt'), 'utf8').split('\n')
const inAnyList = (d: string) => mailchecker.has(d) || dispJs.has(d) || burner.has(d) || free.has(d)
// Two-label abuse domains that no other list holds (so only the abuse rule fires).
const [ABUSE, ABUSE2] = abuseFile.filter((d) => /^[a-z0-9-]+\.com$/.test(d) && !inAnyList(d)).slice(0, 2) as [string, string]
const DISPOSABLE = 'mailinator.com'
const FREE = 'gmail.com'

/** Names the DNS server answers only when the test releases them (a slow resolver with no clock in it). */
const HELD = Array.from({ length: 10 }, (_, i) => `held${i}.test`)

let dns: DnsServer
let rdap: RdapFixture
let app: TestApp
const mx = (host: string) => ({ mx: [[10, `mx.${host}`]] as [number, string][] })
const OLD = { days: 4000 }

function env(extra: Record<string, string> = {}) {
  return {
    ALMANAC_EMAIL_DNS_SERVERS: dns.address,
    ALMANAC_EMAIL_DNS_TIMEOUT_MS: '400',
    ALMANAC_EMAIL_RDAP_URL: rdap.base,
    ALMANAC_EMAIL_RDAP_TIMEOUT_MS: '400',
    ALMANAC_STATE_DIR: tempDir(),
    ...extra,
  }
}

const rdapZones = (): Record<string, RdapZone> => ({
  [DISPOSABLE]: OLD,
  [FREE]: OLD,
  [ABUSE]: OLD,
  [ABUSE2]: { days: 2 },
  'nomx.test': OLD,
  'nullmx.test': OLD,
  'aonly.test': OLD,
  'young.test': { days: 3 },
  'seven.test': { days: 7 },
  'month.test': { days: 20 },
  'thirty.test': { days: 30 },
  'old.test': OLD,
  'slowdns.test': OLD,
  'slowrdap.test': { slow: true },
  // A registry answer pointing at the server's own loopback: refused, never followed.
  'redirected.test': { redirect: 'http://127.0.0.1:1/domain/redirected.test' },
})

beforeAll(async () => {
  dns = await startDnsServer({
    [DISPOSABLE]: mx(DISPOSABLE),
    [FREE]: mx(FREE),
    [ABUSE]: mx(ABUSE),
    'young.test': mx('young.test'),
    'seven.test': mx('seven.test'),
    'month.test': mx('month.test'),
    'thirty.test': mx('thirty.test'),
    'old.test': mx('old.test'),
    'aonly.test': { a: ['192.0.2.7'] },
    'nullmx.test': { mx: [[0, '']] },
    'slowdns.test': { slow: true },
    'slowrdap.test': mx('slowrdap.test'),
    'redirected.test': mx('redirected.test'),
    ...Object.fromEntries(HELD.map((name) => [name, { ...mx(name), held: true }])),
  })
  rdap = startRdapServer(rdapZones(), NOW)
  app = await testApp({ env: env(), domains: [emailDomain({ now: () => NOW })] })
  // The resolver's check at start asks the DNS server too: done before tests count its queries.
  await app.opened('email').service.resolver.first
})
afterAll(async () => {
  await app?.close()
  await rdap?.stop()
  await dns?.close()
})

const risk = async (email: string, form: 'enveloped' | 'bare' = 'enveloped', a = app) => {
  const { status, body } = await a.json('POST', '/api/v1/email/risk', { body: { email }, form })
  expect(status).toBe(200)
  return form === 'enveloped' ? body.data : body
}
const factors = (data: any) => data.risk_factors.map((f: any) => f.factor)

describe('each scoring rule alone', () => {
  test('the oracle found list domains for the tests', () => {
    expect(mailchecker.has(DISPOSABLE)).toBe(true)
    expect(free.has(FREE) && !mailchecker.has(FREE) && !dispJs.has(FREE) && !burner.has(FREE)).toBe(true)
    expect(ABUSE).toBeString()
    expect(ABUSE2).toBeString()
  })

  test('nothing: 0, low', async () => {
    const d = await risk('someone@old.test')
    expect(d).toMatchObject({ email: 'someone@old.test', risk_score: 0, risk_tier: 'low', risk_factors: [], unknown_checks: [] })
    expect(d.checks.mx_record).toEqual({
      valid: true,
      mx_hosts: ['mx.old.test'],
      implicit_mx: false,
      accepts_mail: true,
      domain_exists: true,
      reason: null,
    })
    expect(d.checks.domain_age).toEqual({
      domain: 'old.test',
      age_days: 4000,
      registered: new Date(NOW - 4000 * 86400_000).toISOString(),
      source: 'rdap',
      reason: null,
    })
  })

  test('no MX (NXDOMAIN): +30', async () => {
    const d = await risk('someone@nomx.test')
    expect(d.risk_score).toBe(POINTS.no_mx)
    expect(d.risk_tier).toBe('medium')
    expect(factors(d)).toEqual(['no_mx'])
    expect(d.checks.mx_record).toMatchObject({ valid: false, domain_exists: false, reason: 'nxdomain' })
  })

  test('a null MX is no MX: +30', async () => {
    const d = await risk('someone@nullmx.test')
    expect(factors(d)).toEqual(['no_mx'])
    expect(d.checks.mx_record).toMatchObject({ valid: false, accepts_mail: false, domain_exists: true, reason: 'null_mx' })
  })

  test('an A record alone (implicit MX) is still no MX records: +30, the fallback kept as detail, in both forms', async () => {
    const d = await risk('someone@aonly.test')
    expect(d).toMatchObject({ risk_score: POINTS.no_mx, risk_tier: 'medium', risk_factors: [{ factor: 'no_mx', points: 30 }] })
    expect(d.unknown_checks).toEqual([])
    expect(d.checks.mx_record).toEqual({
      valid: false,
      mx_hosts: [],
      implicit_mx: true,
      accepts_mail: true,
      domain_exists: true,
      reason: 'no_mx_address_only',
    })
    const b = await risk('someone@aonly.test', 'bare')
    expect(b).toMatchObject({ has_mx: false, domain_exists: true, risk_score: 0.3, risk_level: 'medium', unknown_checks: [] })
  })

  test('disposable: +35, naming the provider and its lists', async () => {
    const d = await risk(`someone@${DISPOSABLE}`)
    expect(d.risk_score).toBe(POINTS.disposable)
    expect(factors(d)).toEqual(['disposable'])
    expect(d.checks.disposable.is_disposable).toBe(true)
    expect(d.checks.disposable.provider).toBe(DISPOSABLE)
    const expected = [
      mailchecker.has(DISPOSABLE) && 'mailchecker',
      dispJs.has(DISPOSABLE) && 'disposable-email-domains-js',
      burner.has(DISPOSABLE) && 'burner-email-providers',
    ].filter(Boolean)
    expect(d.checks.disposable.lists).toEqual(expected)
  })

  test('a subdomain of a disposable domain matches', async () => {
    const d = await risk(`someone@inbox.${DISPOSABLE}`)
    expect(d.checks.disposable).toMatchObject({ is_disposable: true, provider: DISPOSABLE })
  })

  test('domain younger than 7 days: +30; 7 to 29 days: +20; 30 days: nothing', async () => {
    expect(await risk('a@young.test')).toMatchObject({
      risk_score: 30,
      risk_tier: 'medium',
      risk_factors: [{ factor: 'age_under_7_days', points: 30 }],
    })
    expect((await risk('a@young.test')).checks.domain_age.age_days).toBe(3)
    expect(await risk('a@seven.test')).toMatchObject({ risk_score: 20, risk_factors: [{ factor: 'age_under_30_days', points: 20 }] })
    expect(await risk('a@month.test')).toMatchObject({ risk_score: 20, risk_tier: 'low' })
    expect(await risk('a@thirty.test')).toMatchObject({ risk_score: 0, risk_factors: [] })
  })

  test('the registrable domain is asked, not the host', async () => {
    const d = await risk('a@mail.young.test')
    expect(d.checks.domain_age).toMatchObject({ domain: 'young.test', age_days: 3 })
  })

  test('abuse list: +25, named with its date', async () => {
    const d = await risk(`someone@${ABUSE}`)
    expect(d.risk_score).toBe(POINTS.abuse_list)
    expect(factors(d)).toEqual(['abuse_list'])
    expect(d.checks.abuse_list).toEqual({ listed: true, sources: ['blocklistproject-abuse:2026-07-20'] })
  })

  test('free provider: +5, and not disposable', async () => {
    const d = await risk(`someone@${FREE}`)
    expect(d).toMatchObject({ risk_score: 5, risk_tier: 'low' })
    expect(factors(d)).toEqual(['free_provider'])
    expect(d.checks.free_provider).toEqual({ is_free: true })
    expect(d.checks.disposable.is_disposable).toBe(false)
  })

  test('invalid syntax: 100, critical, no lookups', async () => {
    const dnsBefore = dns.queries.get('neverasked.test MX') ?? 0
    const d = await risk('a..b@neverasked.test')
    expect(d).toMatchObject({ risk_score: 100, risk_tier: 'critical', risk_factors: [{ factor: 'invalid_syntax', points: 100 }] })
    expect(d.checks.syntax).toEqual({ valid: false, reason: 'local_part_dot', normalized: null })
    expect(dns.queries.get('neverasked.test MX') ?? 0).toBe(dnsBefore)
    expect(rdap.requests.get('neverasked.test')).toBeUndefined()
  })

  test('a single-label domain is invalid syntax for an internet address: 100, its own reason, no lookups, in both forms', async () => {
    for (const email of ['postmaster@localhost', 'a@com', 'user@例子']) {
      const dnsBefore = [...dns.queries.values()].reduce((n, v) => n + v, 0)
      const d = await risk(email)
      expect(d).toMatchObject({ risk_score: 100, risk_tier: 'critical', risk_factors: [{ factor: 'invalid_syntax', points: 100 }] })
      expect(d.checks.syntax).toEqual({ valid: false, reason: 'single_label_domain', normalized: null })
      expect([...dns.queries.values()].reduce((n, v) => n + v, 0)).toBe(dnsBefore)
      expect(await risk(email, 'bare')).toMatchObject({ valid_syntax: false, risk_score: 1, risk_level: 'critical' })
    }
  })

  test('the total is capped at 100', async () => {
    const deny = join(tempDir(), 'deny.txt')
    writeFileSync(deny, `${ABUSE2}\n`)
    const capped = await testApp({ env: env({ ALMANAC_EMAIL_DENY_LISTS: deny }), domains: [emailDomain({ now: () => NOW })] })
    try {
      // operator deny (disposable) 35 + NXDOMAIN 30 + 2 days old 30 + abuse 25 = 120
      const d = await risk(`a@${ABUSE2}`, 'enveloped', capped)
      expect(factors(d).sort()).toEqual(['abuse_list', 'age_under_7_days', 'disposable', 'no_mx'])
      expect(d).toMatchObject({ risk_score: 100, risk_tier: 'critical' })
      expect(d.checks.disposable).toMatchObject({ is_disposable: true, provider: ABUSE2, lists: ['operator:deny.txt'] })
    } finally {
      await capped.close()
    }
  })

  test('tier boundaries', () => {
    expect([0, 25, 26, 50, 51, 75, 76, 100].map(tierOf)).toEqual(['low', 'low', 'medium', 'medium', 'high', 'high', 'critical', 'critical'])
    const base = { validSyntax: true, mx: true, disposable: false, ageDays: null, abuse: false, free: false }
    expect(score({ ...base, ageDays: 6 }).score).toBe(30)
    expect(score({ ...base, ageDays: 7 }).score).toBe(20)
    expect(score({ ...base, ageDays: 29 }).score).toBe(20)
    expect(score({ ...base, ageDays: 30 }).score).toBe(0)
    expect(score({ ...base, mx: null }).score).toBe(0)
    expect(score({ ...base, disposable: true, free: true, abuse: true })).toMatchObject({ score: 65, tier: 'high' })
  })
})

test('with a Redis quota store, instances share the RDAP cache', async () => {
  const redis = await startRedis()
  const apps: TestApp[] = []
  try {
    for (let i = 0; i < 2; i++)
      apps.push(await testApp({ env: env({ ALMANAC_QUOTA_STORE: redis.url }), domains: [emailDomain({ now: () => NOW })] }))
    const before = rdap.requests.get('month.test') ?? 0
    expect((await risk('a@month.test', 'enveloped', apps[0])).checks.domain_age.age_days).toBe(20)
    expect((await risk('b@month.test', 'enveloped', apps[1])).checks.domain_age.age_days).toBe(20)
    expect(rdap.requests.get('month.test')).toBe(before + 1)
  } finally {
    for (const a of apps) await a.close()
    await redis.close()
  }
})

describe('unknown is not "no"', () => {
  test('a DNS server that never answers: mx_record unknown, no points, within the deadline', async () => {
    const t0 = performance.now()
    const d = await risk('a@slowdns.test')
    expect(performance.now() - t0).toBeLessThan(3000) // a bound on a hang (deadline 400 ms)
    expect(d.checks.mx_record).toMatchObject({ valid: null, domain_exists: null, reason: 'dns_timeout' })
    expect(d.risk_score).toBe(0)
    expect(d.unknown_checks).toEqual(['mx_record'])
  })

  test('an RDAP server that never answers: age unknown, no points', async () => {
    const d = await risk('a@slowrdap.test')
    expect(d.checks.domain_age).toMatchObject({ domain: 'slowrdap.test', age_days: null, source: null, reason: 'rdap_timeout' })
    expect(d.unknown_checks).toContain('domain_age')
  })

  test('an RDAP redirect to loopback is refused: age unknown and listed, in both forms', async () => {
    const a = await risk('a@redirected.test')
    expect(a.checks.domain_age).toEqual({
      domain: 'redirected.test',
      age_days: null,
      registered: null,
      source: null,
      reason: 'rdap_redirect_refused',
    })
    expect(a).toMatchObject({ risk_score: 0, risk_factors: [], unknown_checks: ['domain_age'] })
    const b = await risk('b@redirected.test', 'bare')
    expect(b).toMatchObject({ domain_age_days: null, risk_score: 0, unknown_checks: ['domain_age'] })
  })

  test('offline mode: no lookups at all, lists still apply', async () => {
    const offline = await testApp({ env: env({ ALMANAC_EMAIL_OFFLINE: '1' }), domains: [emailDomain({ now: () => NOW })] })
    try {
      const dnsBefore = dns.queries.get(`${DISPOSABLE} MX`) ?? 0
      const rdapBefore = rdap.requests.get(DISPOSABLE) ?? 0
      const d = await risk(`a@${DISPOSABLE}`, 'enveloped', offline)
      expect(d.checks.mx_record).toMatchObject({ valid: null, reason: 'offline' })
      expect(d.checks.domain_age).toMatchObject({ age_days: null, reason: 'offline' })
      expect(d.unknown_checks).toEqual(['mx_record', 'domain_age'])
      expect(d.risk_score).toBe(35)
      expect(dns.queries.get(`${DISPOSABLE} MX`) ?? 0).toBe(dnsBefore)
      expect(rdap.requests.get(DISPOSABLE) ?? 0).toBe(rdapBefore)
      const b = await risk('a@old.test', 'bare', offline)
      expect(b).toMatchObject({ domain_exists: null, has_mx: null, domain_age_days: null, unknown_checks: ['mx_record', 'domain_age'] })
    } finally {
      await offline.close()
    }
  })
})

describe('forms and fields', () => {
  test('Form B: flat, score / 100, risk_level', async () => {
    expect(await risk(`someone@${DISPOSABLE}`, 'bare')).toEqual({
      email: `someone@${DISPOSABLE}`,
      valid_syntax: true,
      domain_exists: true,
      disposable: true,
      free_provider: false,
      risk_score: 0.35,
      risk_level: 'medium',
      has_mx: true,
      domain_age_days: 4000,
      abuse_listed: false,
      unknown_checks: [],
    })
    expect(await risk('nope', 'bare')).toMatchObject({ valid_syntax: false, risk_score: 1, risk_level: 'critical', domain_exists: null })
  })

  test('dotted fields (checks.disposable) in both forms', async () => {
    const { body } = await app.json('POST', '/api/v1/email/risk?fields=email,checks.disposable', { body: { email: `a@${DISPOSABLE}` } })
    expect(body).toEqual({
      status: 'ok',
      data: { email: `a@${DISPOSABLE}`, checks: { disposable: expect.objectContaining({ is_disposable: true }) } },
      error: null,
    })
    const deeper = await app.json('POST', '/api/v1/email/risk?fields=checks.disposable.is_disposable,risk_score', {
      body: { email: `a@${DISPOSABLE}` },
    })
    expect(deeper.body.data).toEqual({ risk_score: 35, checks: { disposable: { is_disposable: true } } })
    const bare = await app.json('POST', '/api/v1/email/risk?fields=disposable,risk_level', {
      body: { email: `a@${DISPOSABLE}` },
      form: 'bare',
    })
    expect(bare.body).toEqual({ disposable: true, risk_level: 'medium' })
  })

  test('an unknown field is a 400 naming it', async () => {
    const { status, body } = await app.json('POST', '/api/v1/email/risk?fields=checks.nope', { body: { email: 'a@old.test' } })
    expect(status).toBe(400)
    expect(body.error.detail).toContain('checks.nope')
  })

  test('IDN addresses are checked on their A-label domain', async () => {
    const d = await risk('δοκιμή@παράδειγμα.δοκιμή')
    expect(d.checks.syntax).toEqual({ valid: true, reason: null, normalized: 'δοκιμή@xn--hxajbheg2az3al.xn--jxalpdlp' })
    expect(d.checks.mx_record.reason).toBe('nxdomain')
  })
})

test('answers match the response schemas published in the OpenAPI document', async () => {
  const emails = [
    'a@old.test',
    'bad',
    `b@${DISPOSABLE}`,
    'c@slowdns.test',
    'user@[192.0.2.1]',
    `d@${ABUSE}`,
    `e@${FREE}`,
    'f@young.test',
    'δοκιμή@παράδειγμα.δοκιμή',
    'g@nullmx.test',
  ]
  for (const email of emails) {
    expect(Value.Errors(EnvelopedSchema, await risk(email)).First()).toBeUndefined()
    expect(Value.Errors(BareSchema, await risk(email, 'bare')).First()).toBeUndefined()
  }
  const a = await app.json('POST', '/api/v1/email/risk/bulk', { body: { emails } })
  for (const item of a.body.data) expect(Value.Check(EnvelopedItemSchema, item)).toBe(true)
  const b = await app.json('POST', '/api/v1/email/risk/bulk', { body: { emails }, form: 'bare' })
  for (const item of b.body.results) expect(Value.Check(BareItemSchema, item)).toBe(true)
})

describe('bulk', () => {
  test('Form A {status, total, data}; Form B {results}; one credit per address', async () => {
    const emails = ['a@old.test', 'bad', `b@${DISPOSABLE}`]
    const r = await app.request('POST', '/api/v1/email/risk/bulk', { body: { emails } })
    const body = (await r.json()) as any
    expect(body.status).toBe('ok')
    expect(body.total).toBe(3)
    expect(body.data.map((d: any) => d.risk_score)).toEqual([0, 100, 35])
    const again = await app.request('POST', '/api/v1/email/risk/bulk', { body: { emails } })
    expect(Number(r.headers.get('x-quota-remaining')) - Number(again.headers.get('x-quota-remaining'))).toBe(3)
    const bare = await app.json('POST', '/api/v1/email/risk/bulk?fields=email,risk_level', { body: { emails }, form: 'bare' })
    expect(bare.body).toEqual({
      results: [
        { email: 'a@old.test', risk_level: 'low' },
        { email: 'bad', risk_level: 'critical' },
        { email: `b@${DISPOSABLE}`, risk_level: 'medium' },
      ],
    })
  })

  test('items are independent and concurrent: slow ones do not hold or spoil the others', async () => {
    const emails = [
      'a@slowdns.test',
      'b@slowrdap.test',
      'c@young.test',
      'd@old.test',
      'e@nomx.test',
      'x',
      `f@${FREE}`,
      'g@month.test',
      'h@aonly.test',
      'i@nullmx.test',
    ]
    // An RDAP server that holds each answer 100 ms: items looked up one after another never overlap there.
    const held = startRdapServer(rdapZones(), NOW, { delayMs: 100 })
    const fresh = await testApp({ env: env({ ALMANAC_EMAIL_RDAP_URL: held.base }), domains: [emailDomain({ now: () => NOW })] })
    try {
      const { body } = await fresh.json('POST', '/api/v1/email/risk/bulk', { body: { emails } })
      expect(held.maxInFlight).toBeGreaterThan(1)
      const scores = body.data.map((d: any) => d.risk_score)
      expect(scores).toEqual([0, 0, 30, 0, 30, 100, 5, 20, 30, 30])
      expect(body.data[0].unknown_checks).toEqual(['mx_record'])
      expect(body.data[1].unknown_checks).toEqual(['domain_age'])
      expect(body.data[2].unknown_checks).toEqual([])
    } finally {
      await fresh.close()
      await held.stop()
    }
  })

  for (const form of ['enveloped', 'bare'] as const)
    test(`${form}: a bad item gets its own error in its place, the others their answers, one credit each (SPEC rule 5)`, async () => {
      const long = 'a'.repeat(1025)
      const emails = ['a@gmail.com', 5, null, { email: 'x@old.test' }, long, `b@${DISPOSABLE}`]
      const first = await app.request('POST', '/api/v1/email/risk/bulk', { body: { emails }, form })
      const { status, body } = { status: first.status, body: (await first.json()) as any }
      expect(status).toBe(200)
      const items = form === 'enveloped' ? body.data : body.results
      if (form === 'enveloped') expect(body.total).toBe(6)
      expect(items).toHaveLength(6)
      expect(items[0]).toMatchObject({ email: 'a@gmail.com', [form === 'enveloped' ? 'risk_tier' : 'risk_level']: 'low' })
      expect(items[1]).toEqual({
        email: 5,
        error: { field: 'emails.1', message: 'expected a string holding an email address, got number' },
      })
      expect(items[2]).toEqual({
        email: null,
        error: { field: 'emails.2', message: 'expected a string holding an email address, got null' },
      })
      expect(items[3]).toEqual({
        email: { email: 'x@old.test' },
        error: { field: 'emails.3', message: 'expected a string holding an email address, got object' },
      })
      expect(items[4]).toEqual({
        email: long.slice(0, 1024),
        error: { field: 'emails.4', message: 'expected at most 1024 characters, got 1025' },
      })
      expect(items[5]).toMatchObject({ email: `b@${DISPOSABLE}`, risk_score: form === 'enveloped' ? 35 : 0.35 })
      for (const item of items) expect(Value.Check(form === 'enveloped' ? EnvelopedItemSchema : BareItemSchema, item)).toBe(true)
      const again = await app.request('POST', '/api/v1/email/risk/bulk', { body: { emails }, form })
      expect(Number(first.headers.get('x-quota-remaining')) - Number(again.headers.get('x-quota-remaining'))).toBe(6)
    })

  test('11 addresses, none, or no array: 422 naming emails', async () => {
    for (const b of [{ emails: Array(11).fill('a@old.test') }, { emails: [] }, {}, { emails: 'a@old.test' }]) {
      const { status, body } = await app.json('POST', '/api/v1/email/risk/bulk', { body: b })
      expect(status).toBe(422)
      expect(body.error.errors[0].field).toStartWith('emails')
    }
  })
})

describe('bad input', () => {
  test('missing, wrong type or over-long email: 422 naming email', async () => {
    for (const b of [{}, { email: 5 }, { email: null }, { email: ['a@b.c'] }, { email: 'a'.repeat(1025) }]) {
      const { status, body } = await app.json('POST', '/api/v1/email/risk', { body: b })
      expect(status).toBe(422)
      expect(body.error.errors[0].field).toBe('email')
    }
  })

  test('malformed JSON: 400', async () => {
    const { status } = await app.json('POST', '/api/v1/email/risk', { body: '{"email":' })
    expect(status).toBe(400)
  })

  test('hostile but schema-valid strings are scored, not errors', async () => {
    for (const email of [
      'constructor@__proto__',
      '__proto__@constructor.com',
      '"\\"@x.y',
      '\u0000@a.b',
      'a@' + '.'.repeat(1000),
      '\ud83d@a.b',
      'é'.repeat(1024),
    ]) {
      const d = await risk(email)
      expect(d.risk_tier).toBeString()
    }
  })
})

describe('callers share the DNS lookup slots', () => {
  const OTHER_KEY = 'other-key-0123456789'
  // Eight slots, four per caller (the default share of eight); the deadline is only a bound.
  const fairApp = () =>
    testApp({
      env: env({
        ALMANAC_API_KEYS: `${TEST_KEY}:test,${OTHER_KEY}:test`,
        ALMANAC_EMAIL_DNS_SLOTS: '8',
        ALMANAC_EMAIL_DNS_TIMEOUT_MS: '20000',
      }),
      domains: [emailDomain({ now: () => NOW })],
    })
  const heldQueries = () => HELD.reduce((n, name) => n + (dns.queries.get(`${name} MX`) ?? 0), 0)

  for (const form of ['enveloped', 'bare'] as const) {
    test(`${form}: a bulk takes its caller's share; another caller's MX is answered; busy checks are unknown and add nothing`, async () => {
      const fair = await fairApp()
      try {
        const queriesBefore = heldQueries()
        const bulk = fair.json('POST', '/api/v1/email/risk/bulk', { body: { emails: HELD.map((d) => `a@${d}`) }, form })
        await dns.whenHeld(4)
        // The other caller, while the bulk's lookups are held: its MX check runs and is answered.
        const other = await fair.json('POST', '/api/v1/email/risk', { body: { email: 'b@old.test' }, form, key: OTHER_KEY })
        expect(other.status).toBe(200)
        const mine = form === 'enveloped' ? other.body.data : other.body
        if (form === 'enveloped') expect(mine.checks.mx_record).toMatchObject({ valid: true, reason: null, mx_hosts: ['mx.old.test'] })
        else expect(mine).toMatchObject({ has_mx: true, domain_exists: true })
        expect(mine.unknown_checks).toEqual([])
        dns.release()
        const { status, body } = await bulk
        expect(status).toBe(200)
        // Only the bulk caller's share of queries reached the resolver.
        expect(heldQueries() - queriesBefore).toBe(4)
        const items: any[] = form === 'enveloped' ? body.data : body.results
        const busy = items.filter((d) => d.unknown_checks.includes('mx_record'))
        const answered = items.filter((d) => !d.unknown_checks.includes('mx_record'))
        expect([busy.length, answered.length]).toEqual([6, 4])
        for (const d of busy) {
          // Unknown, not valid and not "no MX": no points, listed.
          if (form === 'enveloped') {
            expect(d.checks.mx_record).toEqual({
              valid: null,
              mx_hosts: [],
              implicit_mx: false,
              accepts_mail: null,
              domain_exists: null,
              reason: 'dns_busy',
            })
            expect(d.risk_factors).toEqual([])
          } else expect(d).toMatchObject({ has_mx: null, domain_exists: null })
          expect(d.risk_score).toBe(0)
          expect(d.unknown_checks).toEqual(['mx_record'])
        }
        for (const d of answered) {
          if (form === 'enveloped') expect(d.checks.mx_record).toMatchObject({ valid: true, reason: null })
          else expect(d).toMatchObject({ has_mx: true, domain_exists: true })
        }
      } finally {
        await fair.close()
      }
    })
  }
})
