/**
 * The operator API through the real app (SQLite key store in a temp state dir, the real datasets): the
 * operator credential and nothing else opens it; keys are issued, changed, rotated and revoked with effect
 * on the next /api/v1 request; customers share a pool; every change is in the audit log under the
 * credential's name; the ledger, plans, datasets and metrics read back; its own OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createUsageMeter, type UsageMeter } from '../../src/http/edge/usage-meter.ts'
import { memoryQuotaStore } from '../../src/stores/quota.ts'
import { memoryUsageStore } from '../../src/stores/usage.ts'
import { testApp, TEST_KEY, type TestApp } from '../support/app.ts'
import { tempDirs } from '../support/temp.ts'

const TOKEN = 'o'.repeat(24) + '-operator-token-0123'
const tempDir = tempDirs('almanac-admin-')
const PLANS = { ALMANAC_PLANS: 'small:5/1d,big:50/1d,test:1000/1d', ALMANAC_DEFAULT_PLAN: 'small', ALMANAC_API_KEYS: `${TEST_KEY}:test` }

let app: TestApp
let meter: UsageMeter
beforeAll(async () => {
  meter = createUsageMeter(memoryUsageStore(), { intervalMs: 3_600_000 })
  app = await testApp({
    env: { ...PLANS, ALMANAC_ADMIN_TOKENS: `ops:${TOKEN}`, ALMANAC_STATE_DIR: tempDir() },
    quota: memoryQuotaStore(),
    usage: meter,
  })
})
afterAll(async () => {
  await app.close()
  await meter.close()
})

/** An operator call: bare problems, the credential unless `token` says otherwise. */
const admin = (method: string, path: string, body?: unknown, token: string | null = TOKEN) =>
  app.json(method, `/admin/v1${path}`, {
    body,
    key: null,
    form: 'bare',
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
  })
const api = (key: string) => app.request('GET', '/api/v1/countries/FR', { key })

describe('the operator credential', () => {
  test('none, a wrong one, or a customer key: 401 with a Bearer challenge, and nothing else said', async () => {
    for (const attempt of [
      await admin('GET', '/keys', undefined, null),
      await admin('GET', '/keys', undefined, TOKEN.slice(0, -1) + 'x'),
      await app.json('GET', '/admin/v1/keys', { key: TEST_KEY, form: 'bare' }),
    ]) {
      expect(attempt.status).toBe(401)
      expect(attempt.headers.get('www-authenticate')).toBe('Bearer realm="almanac-admin"')
      expect(attempt.body.keys).toBeUndefined()
    }
    expect((await admin('GET', '/whoami')).body).toEqual({ operator: 'ops' })
  })

  test('answers are never cached', async () => {
    expect((await admin('GET', '/plans')).headers.get('cache-control')).toBe('no-store')
  })
})

describe('keys from issue to revocation, effective on the next request', () => {
  test('create, use, change plan, rotate with a grace, revoke', async () => {
    const made = await admin('POST', '/keys', { name: 'shop', plan: 'small' })
    expect(made.status).toBe(201)
    const { key, record } = made.body
    expect(key).toMatch(/^alm_/)
    expect(record).toMatchObject({ name: 'shop', plan: 'small', customer: null, revoked: null })
    expect((await api(key)).headers.get('x-quota-limit')).toBe('5')

    const changed = await admin('PATCH', `/keys/${record.id}`, { plan: 'big' })
    expect(changed.body.plan).toBe('big')
    expect((await api(key)).headers.get('x-quota-limit')).toBe('50')

    const rotated = await admin('POST', `/keys/${record.id}/rotate`, { grace_seconds: 3600 })
    expect(rotated.body.key).not.toBe(key)
    expect(Date.parse(rotated.body.previous_until)).toBeGreaterThan(Date.now())
    expect([(await api(key)).status, (await api(rotated.body.key)).status]).toEqual([200, 200])

    expect((await admin('POST', `/keys/${record.id}/revoke`)).body.revoked).not.toBeNull()
    expect([(await api(key)).status, (await api(rotated.body.key)).status]).toEqual([401, 401])
    expect((await admin('POST', `/keys/${record.id}/revoke`)).status).toBe(409)

    const listed = (await admin('GET', '/keys')).body.keys
    expect(listed.find((k: any) => k.id === record.id).revoked).not.toBeNull()
    expect(JSON.stringify(listed)).not.toContain(key)
  })

  test('clear refusals: an unknown plan, scope or member, a past expiry, a taken name, an unknown key', async () => {
    const cases: [string, string, unknown, number, RegExp][] = [
      ['POST', '/keys', { name: 'a', plan: 'gold' }, 422, /plan "gold" is not offered \(plans: small, big, test\)/],
      ['POST', '/keys', { name: 'a', scopes: ['nope'] }, 422, /"nope" is not a domain/],
      ['POST', '/keys', { name: 'a', expires: '2001-01-01' }, 422, /has passed/],
      ['POST', '/keys', { name: 'a', colour: 'red' }, 422, /colour/],
      ['PATCH', '/keys/key_00000000000', { plan: 'big' }, 404, /no key has the id or active name/],
      ['PATCH', '/keys/key_00000000000', {}, 422, /./],
    ]
    for (const [method, path, body, status, detail] of cases) {
      const res = await admin(method, path, body)
      expect({ path, body, status: res.status }).toEqual({ path, body, status })
      expect(String(res.body.detail)).toMatch(detail)
    }
    await admin('POST', '/keys', { name: 'twice' })
    const again = await admin('POST', '/keys', { name: 'twice' })
    expect([again.status, again.body.detail]).toEqual([409, expect.stringContaining('already named "twice"')])
  })
})

describe('customers, usage and the audit log', () => {
  test("two keys of one customer spend one pool of the customer's plan", async () => {
    const customer = (await admin('POST', '/customers', { name: 'acme', plan: 'small' })).body
    expect(customer.id).toMatch(/^cus_/)
    const a = (await admin('POST', '/keys', { name: 'acme-a', customer: 'acme' })).body.key
    const b = (await admin('POST', '/keys', { name: 'acme-b', customer: customer.id, plan: 'big' })).body.key
    const remaining = [api(a), api(b), api(a)].map(async (r) => (await r).headers.get('x-quota-remaining'))
    expect((await Promise.all(remaining)).sort()).toEqual(['2', '3', '4'])
    await admin('PATCH', `/customers/${customer.id}`, { plan: 'big' })
    expect((await api(b)).headers.get('x-quota-limit')).toBe('50')
  })

  test('the usage ledger: per key and route, and refusals by reason', async () => {
    const key = (await admin('POST', '/keys', { name: 'metered', plan: 'small' })).body
    for (let i = 0; i < 6; i++) await api(key.key)
    const usage = await admin('GET', `/usage?key=${key.record.id}&by=day`)
    expect(usage.status).toBe(200)
    expect(usage.body.rows.map((r: any) => [r.route, r.requests, r.answered, r.refused, r.credits])).toEqual([
      ['GET /api/v1/countries/:code', 6, 5, 1, 5],
    ])
    expect(usage.body.outcomes).toEqual([
      { outcome: '2xx', requests: 5 },
      { outcome: '429:quota', requests: 1 },
    ])
    expect((await admin('GET', '/usage?by=week')).status).toBe(422)
  })

  test('every change is in the audit log under the credential, newest first, never a secret', async () => {
    const made = (await admin('POST', '/keys', { name: 'audited' })).body
    await admin('PATCH', `/keys/${made.record.id}`, { name: 'audited-2' })
    const { entries } = (await admin('GET', '/audit?limit=2')).body
    expect(entries.map((e: any) => [e.actor, e.action, e.target])).toEqual([
      ['admin:ops', 'key.update', made.record.id],
      ['admin:ops', 'key.create', made.record.id],
    ])
    expect(entries[0].changes.name).toEqual({ from: 'audited', to: 'audited-2' })
    expect(JSON.stringify(entries)).not.toContain(made.key)
  })
})

describe('what an operator reads', () => {
  test('plans, datasets and metrics', async () => {
    expect((await admin('GET', '/plans')).body).toEqual({
      default_plan: 'small',
      plans: [
        { name: 'small', credits: 5, window_seconds: 86_400, calendar: null },
        { name: 'big', credits: 50, window_seconds: 86_400, calendar: null },
        { name: 'test', credits: 1000, window_seconds: 86_400, calendar: null },
      ],
    })
    const datasets = (await admin('GET', '/datasets')).body.datasets
    expect(datasets.find((d: any) => d.id === 'countries')).toMatchObject({ status: 'open', domain: 'countries' })
    const metrics = await app.request('GET', '/admin/v1/metrics', { key: null, headers: { authorization: `Bearer ${TOKEN}` } })
    expect(metrics.headers.get('content-type')).toContain('text/plain')
    expect(await metrics.text()).toContain('almanac_http_requests_total{')
  })

  test('its own OpenAPI document: every operation with its response schema and the operator scheme; none in /openapi.json', async () => {
    const doc = (await app.json('GET', '/admin/openapi.json', { key: null })).body
    expect(doc.info.title).toBe('Almanac operator API')
    const operations = Object.entries<any>(doc.paths).flatMap(([path, item]) => Object.entries<any>(item).map(([m, op]) => [m, path, op]))
    expect(operations.length).toBeGreaterThanOrEqual(15)
    for (const [method, path, op] of operations) {
      expect({ method, path, security: op.security }).toEqual({ method, path, security: [{ operator: [] }] })
      const success = op.responses['200'] ?? op.responses['201']
      expect({ method, path, schema: Boolean(success?.content) }).toEqual({ method, path, schema: true })
    }
    expect(doc.components.securitySchemes.operator).toMatchObject({ type: 'http', scheme: 'bearer' })
    const publicDoc = (await app.json('GET', '/openapi.json', { key: null })).body
    expect(Object.keys(publicDoc.paths).filter((p) => p.startsWith('/admin'))).toEqual([])
  })
})

describe('without ALMANAC_ADMIN_TOKENS', () => {
  test('/admin and /console answer 404 saying how to turn them on', async () => {
    const off = await testApp({ env: PLANS })
    try {
      for (const path of ['/admin/v1/keys', '/console']) {
        const res = await off.json('GET', path, { headers: { authorization: `Bearer ${TOKEN}` }, form: 'bare' })
        expect([res.status, res.body.detail]).toEqual([404, expect.stringContaining('ALMANAC_ADMIN_TOKENS')])
      }
    } finally {
      await off.close()
    }
  })
})
