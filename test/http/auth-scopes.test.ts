/**
 * Key scopes and expiry, and the JWT `scope` and `plan` claims, through the real app over the real
 * datasets: a key or token limited to some domains gets a 403 problem naming its scopes elsewhere; an
 * expired key a 401. The key database is the SQLite store; the app's clock is moved by the test.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SignJWT, type JWTPayload } from 'jose'
import { openDataDir } from '../../src/data/open.ts'
import { domains } from '../../src/domains/index.ts'
import { createAuthenticator } from '../../src/http/admission/auth.ts'
import { ownerResolver } from '../../src/http/routing/route-table.ts'
import { createApp } from '../../src/server.ts'
import { openDomains } from '../../src/domains/mount.ts'
import { memoryQuotaStore } from '../../src/stores/quota.ts'
import { openKeyStore, type KeyStore } from '../../src/stores/keys.ts'
import { testConfig } from '../support/app.ts'
import { tempDirs } from '../support/temp.ts'

const SECRET = 'an-hs256-secret-of-at-least-32-bytes!!'
const clock = { ms: Date.parse('2026-06-01T00:00:00Z') }
let keys: KeyStore
let handle: (req: Request) => Promise<Response>
let close: () => Promise<void>

beforeAll(async () => {
  const config = testConfig({
    ALMANAC_PLANS: 'test:1000/1d,gold:5000/1h',
    ALMANAC_JWT_SECRET: SECRET,
    ALMANAC_STATE_DIR: tempDirs('almanac-scopes-')(),
  })
  const data = openDataDir(config.dataDir)
  const mounted = await openDomains(config, data, domains, () => {})
  keys = openKeyStore(config.stateDir)
  const quota = memoryQuotaStore()
  const authenticator = createAuthenticator(config, { keys, clock: () => clock.ms })
  const app = createApp(config, { data, domains, authenticator, quota, clock: () => clock.ms }, mounted)
  handle = (req) => app.handle(req)
  close = async () => {
    for (const m of mounted) if (m.service !== undefined) await m.domain.close?.(m.service)
    keys.close()
  }
})
afterAll(() => close())

const get = async (path: string, headers: Record<string, string>) => {
  // Form B: a problem is the body itself.
  const res = await handle(new Request(`http://localhost${path}`, { headers: { 'x-response-form': 'bare', ...headers } }))
  return { status: res.status, body: (await res.json()) as any, headers: res.headers }
}
const token = (claims: JWTPayload) =>
  new SignJWT({ exp: Math.floor(Date.now() / 1000) + 60, ...claims })
    .setProtectedHeader({ alg: 'HS256' })
    .sign(new TextEncoder().encode(SECRET))

describe('key scopes', () => {
  let key = ''
  beforeAll(async () => {
    key = (await keys.create({ name: 'geo', plan: null, scopes: ['countries', 'timezones'] })).key
  })

  test('inside its scopes a key is answered, on every prefix of a scoped domain', async () => {
    expect((await get('/api/v1/countries/FR', { 'x-api-key': key })).status).toBe(200)
    // /subdivisions belongs to the countries domain.
    expect((await get('/api/v1/subdivisions/FR-IDF', { 'x-api-key': key })).status).toBe(200)
    expect((await get('/api/v1/timezones/Europe%2FParis', { 'x-api-key': key })).status).toBe(200)
  })

  test('outside them it is a 403 problem naming the scopes and the domain', async () => {
    const { status, body } = await get('/api/v1/postal/FR/75001', { 'x-api-key': key })
    expect(status).toBe(403)
    expect(body).toMatchObject({
      status: 403,
      title: 'Forbidden',
      scopes: ['countries', 'timezones'],
      domain: 'postal',
    })
    expect(body.detail).toBe('This API key may call only the domains countries, timezones (its scopes); this path belongs to postal.')
    // A path the router would normalise to another domain is judged by the same path.
    expect((await get('/api/v1/countries/../postal/FR/75001', { 'x-api-key': key })).status).toBe(403)
    // A body is never read: the refusal comes first, whatever the method.
    const post = await handle(
      new Request('http://localhost/api/v1/email/check', { method: 'POST', headers: { 'x-api-key': key }, body: '{"broken' }),
    )
    expect(post.status).toBe(403)
  })

  test('a refusal spends nothing', async () => {
    const before = (await get('/api/v1/countries/FR', { 'x-api-key': key })).headers.get('x-quota-remaining')
    expect((await get('/api/v1/postal/FR/75001', { 'x-api-key': key })).status).toBe(403)
    const after = await get('/api/v1/countries/FR', { 'x-api-key': key })
    expect(Number(after.headers.get('x-quota-remaining'))).toBe(Number(before) - 1)
  })

  test('paths of no domain (meta) are open to every key', async () => {
    expect((await get('/api/v1/meta/datasets', { 'x-api-key': key })).status).toBe(200)
  })

  test('every domain resolves from its prefixes; other paths belong to none', () => {
    const ownerOf = ownerResolver(domains.map((domain) => ({ state: 'opening', domain })))
    const domainOf = (path: string) => ownerOf(path)?.domain.name
    for (const d of domains)
      for (const p of d.prefixes) expect([d.name, domainOf(`/api/v1${p}`), domainOf(`/api/v1${p}/x/y`)]).toEqual([d.name, d.name, d.name])
    expect(domainOf('/api/v1/meta/datasets')).toBeUndefined()
    expect(domainOf('/api/v1/countriesX')).toBeUndefined()
    expect(domainOf('/api/v1/constructor')).toBeUndefined()
    expect(domainOf('/healthz')).toBeUndefined()
  })
})

describe('key expiry', () => {
  test('a key works until its expiry, then is a 401 saying when it expired', async () => {
    const { key } = await keys.create({ name: 'temp', plan: null, expires: '2026-06-02' })
    expect((await get('/api/v1/countries/FR', { 'x-api-key': key })).status).toBe(200)
    clock.ms = Date.parse('2026-06-01T23:59:59.999Z')
    expect((await get('/api/v1/countries/FR', { 'x-api-key': key })).status).toBe(200)
    clock.ms = Date.parse('2026-06-02T00:00:00Z')
    const refused = await get('/api/v1/countries/FR', { 'x-api-key': key })
    expect(refused.status).toBe(401)
    expect(refused.body.detail).toBe('The API key expired at 2026-06-02T00:00:00.000Z.')
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"')
    clock.ms = Date.parse('2026-06-01T00:00:00Z')
  })
})

describe('JWT scope and plan claims', () => {
  test('scope (space separated) limits the domains; plan picks the plan', async () => {
    const jwt = await token({ sub: 'app-1', scope: 'countries  ip', plan: 'gold' })
    const ok = await get('/api/v1/countries/FR', { authorization: `Bearer ${jwt}` })
    expect(ok.status).toBe(200)
    expect(ok.headers.get('x-quota-limit')).toBe('5000')
    const refused = await get('/api/v1/timezones/Europe%2FParis', { authorization: `Bearer ${jwt}` })
    expect(refused.status).toBe(403)
    expect(refused.body).toMatchObject({ scopes: ['countries', 'ip'], domain: 'timezones' })
    expect(refused.body.detail).toBe('This token may call only the domains countries, ip (its scopes); this path belongs to timezones.')
    expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="almanac", error="insufficient_scope", scope="timezones"')
  })

  test('without scope a token may call every domain; an empty scope none', async () => {
    expect((await get('/api/v1/timezones/Europe%2FParis', { authorization: `Bearer ${await token({ sub: 'app-2' })}` })).status).toBe(200)
    const none = await get('/api/v1/countries/FR', { authorization: `Bearer ${await token({ sub: 'app-3', scope: '' })}` })
    expect(none.status).toBe(403)
    expect(none.body.detail).toBe('This token may call only no domain (its scope names none); this path belongs to countries.')
  })

  test('a scope or plan claim of the wrong type is a 401 naming the claim', async () => {
    for (const [claims, words] of [
      [{ scope: ['countries'] }, "The token's scope claim must be a string"],
      [{ scope: 'x'.repeat(3000) }, "The token's scope claim must be a string"],
      [{ plan: 5 }, "The token's plan claim must be a string"],
    ] as const) {
      const { status, body } = await get('/api/v1/countries/FR', { authorization: `Bearer ${await token({ sub: 'app-4', ...claims })}` })
      expect({ status, detail: body.detail }).toEqual({ status: 401, detail: expect.stringContaining(words) })
    }
    const unknownPlan = await get('/api/v1/countries/FR', { authorization: `Bearer ${await token({ sub: 'app-5', plan: 'platinum' })}` })
    expect(unknownPlan.status).toBe(403)
  })
})
