/**
 * Admission before work (issue 21, findings 1, 5 and 8): through the real app over the real datasets, a
 * request is judged on its request line and headers before a byte of its body is read. Bodies here are
 * streams that record whether the server ever pulled them (highWaterMark 0: nothing is read ahead), so
 * "never read" is observed, not inferred from timing. Credits are read from the quota headers and from a
 * later request on a 20-credit plan, on the memory, sqlite and a real Redis store.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Domain } from '../../src/domains/types.ts'
import type { QuotaStore } from '../../src/stores/quota.ts'
import { testApp, TEST_KEY, type TestApp } from '../support/app.ts'
import { quotaStores } from '../support/quota-stores.ts'
import { brokenDomain, sampleDomain } from '../support/sample-domain.ts'

const TINY = { ALMANAC_PLANS: 'test:1000000/1d,tiny:20/1h', ALMANAC_API_KEYS: `${TEST_KEY}:tiny` }
/** Every app counts at 12:30 UTC, whatever the wall clock says. */
const clock = () => Date.UTC(2026, 10, 23, 12, 30, 0)
const MB = 1_000_000

/** A request body that records whether the server asked for any of it. */
function watched(bytes: Uint8Array | string) {
  let pulled = false
  const data = typeof bytes === 'string' ? new TextEncoder().encode(bytes) : bytes
  const body = new ReadableStream(
    {
      pull(c) {
        pulled = true
        c.enqueue(data)
        c.close()
      },
    },
    { highWaterMark: 0 },
  )
  return { body, pulled: () => pulled }
}

const post = (path: string, body: ReadableStream, headers: Record<string, string>) =>
  new Request(`http://localhost${path}`, {
    method: 'POST',
    headers: { 'x-api-key': TEST_KEY, 'x-response-form': 'bare', ...headers },
    body,
    duplex: 'half',
  } as RequestInit)

const remaining = (res: Response) => Number(res.headers.get('x-quota-remaining'))

/** A 1 MB text/plain body: the body of finding 1. */
const megabyteOfText = () => 'x'.repeat(MB)

/** A ~0.9 MB JSON polygon: the body of finding 5. */
const largePolygon = () => {
  const ring = Array.from({ length: 9_999 }, (_, i) => [
    13 + (i % 100) / 1000 + 0.000123456789012,
    52 + Math.floor(i / 100) / 1000 + 0.000987654321098,
  ])
  ring.push(ring[0]!)
  return JSON.stringify({ geometry: { type: 'Polygon', coordinates: [ring] }, limit: 10 }, null, 3)
}

const stores = quotaStores('admission')

describe('a JSON route answers 415 to any other content type, before reading the body', () => {
  let app: TestApp
  beforeAll(async () => {
    app = await testApp({ clock, env: TINY })
  })
  afterAll(() => app.close())

  for (const path of ['/api/v1/postal/DE/within', '/api/v1/qr/text', '/api/v1/hash/sha256'])
    test(`1 MB of text/plain to ${path}: 415 naming both types, body unread, no credit spent`, async () => {
      const before = remaining(await app.request('GET', '/api/v1/countries/US'))
      for (const declared of [true, false]) {
        const text = watched(megabyteOfText())
        const res = await app.handle(
          post(path, text.body, { 'content-type': 'text/plain', ...(declared ? { 'content-length': String(MB) } : {}) }),
        )
        const problem: any = await res.json()
        expect({ declared, status: res.status, pulled: text.pulled() }).toEqual({ declared, status: 415, pulled: false })
        expect(problem).toMatchObject({
          type: 'urn:almanac:problem:unsupported-type',
          status: 415,
          accepted: ['application/json'],
          received: 'text/plain',
        })
        expect(problem.detail).toContain('application/json')
        expect(problem.detail).toContain('"text/plain"')
        expect(remaining(res)).toBe(before)
      }
      expect(remaining(await app.request('GET', '/api/v1/countries/US'))).toBe(before - 1)
    })

  test('a form, a body without Content-Type, and other types: 415; JSON with parameters or a +json type: accepted', async () => {
    const before = remaining(await app.request('GET', '/api/v1/countries/US'))
    for (const type of ['application/x-www-form-urlencoded', 'multipart/form-data; boundary=zz', 'application/xml', 'text/json', null]) {
      const form = watched('input=hello')
      const res = await app.handle(post('/api/v1/hash/md5', form.body, type ? { 'content-type': type } : {}))
      const problem: any = await res.json()
      expect({ type, status: res.status, pulled: form.pulled(), received: problem.received }).toEqual({
        type,
        status: 415,
        pulled: false,
        received: type?.split(';')[0] ?? null,
      })
      if (type === null) expect(problem.detail).toContain('missing')
    }
    expect(remaining(await app.request('GET', '/api/v1/countries/US'))).toBe(before - 1)
    for (const type of ['application/json; charset=utf-8', 'Application/JSON', 'application/vnd.api+json']) {
      const json = watched('{"input":"hello"}')
      const res = await app.handle(post('/api/v1/hash/md5', json.body, { 'content-type': type }))
      expect({ type, status: res.status, pulled: json.pulled() }).toEqual({ type, status: 200, pulled: true })
      expect(((await res.json()) as any).hash).toBe('5d41402abc4b2a76b9719d911017c592')
    }
  })

  test('a route without a body schema is not judged on its content type; a JSON route with no body goes to validation (422)', async () => {
    const get = await app.request('GET', '/api/v1/countries/US', { headers: { 'content-type': 'text/plain' } })
    expect(get.status).toBe(200)
    const empty = await app.request('POST', '/api/v1/hash/md5', { headers: { 'content-length': '0' } })
    expect(empty.status).toBe(422)
  })
})

describe('body limits per route, before reading', () => {
  let app: TestApp
  beforeAll(async () => {
    app = await testApp({ clock, env: TINY })
  })
  afterAll(() => app.close())

  test("a declared Content-Length over the route's limit is a 413 naming it; the body is not read and nothing is spent", async () => {
    const before = remaining(await app.request('GET', '/api/v1/countries/US'))
    // 20 KB is within the 1 MiB ceiling but over an IP lookup's 16 KiB.
    const body = watched(JSON.stringify({ ip: 'x'.repeat(20_000) }))
    const res = await app.handle(post('/api/v1/ip', body.body, { 'content-type': 'application/json', 'content-length': '20012' }))
    const problem: any = await res.json()
    expect({ status: res.status, pulled: body.pulled() }).toEqual({ status: 413, pulled: false })
    expect(problem.detail).toBe('The request body is over the limit of 16384 bytes for /ip.')
    expect(remaining(res)).toBe(before)
    // The same size is fine where the route needs it (100 codes of a batch), and the ceiling still holds.
    const codes = { codes: Array.from({ length: 100 }, () => 'US'.padEnd(60, ' ')) }
    expect(
      (await app.request('POST', '/api/v1/countries/validate', { body: codes, key: null, headers: { 'x-api-key': TEST_KEY } })).status,
    ).not.toBe(413)
    const overCeiling = watched('{}')
    const huge = await app.handle(
      post('/api/v1/postal/DE/within', overCeiling.body, { 'content-type': 'application/json', 'content-length': String(2 * MB) }),
    )
    expect({ status: huge.status, pulled: overCeiling.pulled() }).toEqual({ status: 413, pulled: false })
    expect(((await huge.json()) as any).detail).toBe(
      'The request body is over the limit of 1048576 bytes for /postal/:country_code/within.',
    )
  })

  test("a chunked body is counted while it is read and cut off at the route's limit", async () => {
    const body = watched(JSON.stringify({ ip: 'x'.repeat(20_000) }))
    const res = await app.handle(post('/api/v1/ip', body.body, { 'content-type': 'application/json' }))
    expect(res.status).toBe(413)
    expect(((await res.json()) as any).detail).toContain('16384 bytes')
  })

  test('the OpenAPI document shows each body route its limit', async () => {
    const doc = (await app.json('GET', '/openapi.json', { key: null })).body
    expect(doc.paths['/api/v1/ip'].post['x-body-limit']).toBe(16 * 1024)
    expect(doc.paths['/api/v1/postal/{country_code}/within'].post['x-body-limit']).toBe(1024 * 1024)
    expect(doc.paths['/api/v1/hash/sha256'].post['x-body-limit']).toBe(528 * 1024)
    expect(doc.paths['/api/v1/qr/text'].post.responses['415']).toBeDefined()
  })
})

describe.each(stores)('credits at admission on the %s store', (_, makeStore) => {
  const opened: { app: TestApp; store: QuotaStore }[] = []
  const app = async (domains?: Domain[]) => {
    const store = makeStore()
    const made = await testApp({ clock, env: TINY, quota: store, domains })
    opened.push({ app: made, store })
    return made
  }
  afterAll(async () => {
    for (const { app, store } of opened) {
      await app.close()
      await store.close()
    }
  })

  test('over quota: a 0.9 MB JSON body is never read; the 429 comes from the headers', async () => {
    const a = await app()
    for (let i = 0; i < 20; i++) expect((await a.request('GET', '/api/v1/countries/US')).status).toBe(200)
    const polygon = largePolygon()
    expect(polygon.length).toBeGreaterThan(850_000)
    expect(polygon.length).toBeLessThan(1024 * 1024)
    for (const declared of [true, false]) {
      const body = watched(polygon)
      const headers: Record<string, string> = { 'content-type': 'application/json' }
      if (declared) headers['content-length'] = String(polygon.length)
      const res = await a.handle(post('/api/v1/postal/DE/within', body.body, headers))
      expect({ declared, status: res.status, pulled: body.pulled() }).toEqual({ declared, status: 429, pulled: false })
      expect(((await res.json()) as any).cost).toBe(1)
      expect(remaining(res)).toBe(0)
    }
  })

  test('the same body with credits left is read (the watch sees reads)', async () => {
    const a = await app()
    const body = watched(largePolygon())
    const res = await a.handle(post('/api/v1/postal/DE/within', body.body, { 'content-type': 'application/json' }))
    expect({ status: res.status, pulled: body.pulled() }).toEqual({ status: 200, pulled: true })
    expect(remaining(res)).toBe(19)
  })

  test('a bulk request that does not fit is refused whole and spends nothing (1 taken at admission, given back)', async () => {
    const a = await app()
    const ips = (n: number) => ({ ips: Array.from({ length: n }, (_, i) => `8.8.${i}.8`) })
    expect(remaining(await a.request('POST', '/api/v1/ip/bulk', { body: ips(17) }))).toBe(3)
    const refused = await a.json('POST', '/api/v1/ip/bulk', { body: ips(5), form: 'bare' })
    expect(refused.status).toBe(429)
    expect(refused.body).toMatchObject({ cost: 5, remaining: 3 })
    expect(refused.body.detail).toMatch(/costs 5 credits and 3 remain/)
    expect(remaining({ headers: refused.headers } as Response)).toBe(3)
    // More than the whole plan: refused whole too, with the plan's size in the detail.
    const tooMany = await a.json('POST', '/api/v1/ip/bulk', { body: ips(21), form: 'bare' })
    expect(tooMany.status).toBe(429)
    expect(tooMany.body.detail).toMatch(/send at most 20 items/)
    const fits = await a.request('POST', '/api/v1/ip/bulk', { body: ips(3) })
    expect(fits.status).toBe(200)
    expect(remaining(fits)).toBe(0)
  })

  test('a 503 gives its credit back: 25 requests to a disabled domain, then all 20 credits still buy answers', async () => {
    const broken = brokenDomain()
    const a = await app([sampleDomain(), broken])
    for (let i = 0; i < 25; i++) {
      const res = await a.json('POST', '/api/v1/broken/anything', { body: { x: i }, form: 'bare' })
      expect(res.status).toBe(503)
      expect(res.body.type).toBe('urn:almanac:problem:unavailable')
      expect(remaining({ headers: res.headers } as Response)).toBe(20)
    }
    const statuses: number[] = []
    for (let i = 0; i < 21; i++) statuses.push((await a.request('GET', '/api/v1/planets/earth')).status)
    expect(statuses).toEqual([...Array(20).fill(200), 429])
  })

  test('raced: 20 bulks of 3 and 10 validations of 4 for 20 credits admit exactly as many as fit (6, then 5)', async () => {
    // A per-item request is charged its whole cost at once after parsing: concurrent callers cannot fill the
    // window with first credits and be refused while the plan still has credits (issue 44, found 1).
    const a = await app()
    const bulks = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        a.request('POST', '/api/v1/ip/bulk', { body: { ips: [`8.8.${i}.1`, `8.8.${i}.2`, `8.8.${i}.3`] } }),
      ),
    )
    const bulkStatuses = bulks.map((r) => r.status)
    expect([bulkStatuses.filter((s) => s === 200).length, bulkStatuses.filter((s) => s === 429).length]).toEqual([6, 14])
    await Promise.all(bulks.map((r) => r.arrayBuffer()))
    // 2 credits were left: nothing refused took any (this lookup spends one of them).
    expect(remaining(await a.request('GET', '/api/v1/countries/US'))).toBe(1)

    const b = await app()
    const codes = [
      { country_code: 'DE', postal_code: '10115' },
      { country_code: 'US', postal_code: '90210' },
      { country_code: 'FR', postal_code: '75001' },
      { country_code: 'GB', postal_code: 'SW1A 1AA' },
    ]
    const validations = await Promise.all(
      Array.from({ length: 10 }, () => b.request('POST', '/api/v1/postal/validate', { body: { codes } })),
    )
    const validStatuses = validations.map((r) => r.status)
    expect([validStatuses.filter((s) => s === 200).length, validStatuses.filter((s) => s === 429).length]).toEqual([5, 5])
    await Promise.all(validations.map((r) => r.arrayBuffer()))
    expect(remaining(await b.request('GET', '/api/v1/countries/US'))).toBe(0)
  })

  test('raced: refusals at admission (a disabled domain, no credentials) spend nothing while 30 lookups race for 20 credits', async () => {
    const broken = brokenDomain()
    const a = await app([sampleDomain(), broken])
    const kinds = Array.from({ length: 90 }, (_, i) => (['disabled', 'anonymous', 'planet'] as const)[i % 3]!)
    const answers = await Promise.all(
      kinds.map((kind) =>
        kind === 'disabled'
          ? a.request('POST', '/api/v1/broken/anything', { body: { x: 1 } })
          : a.request('GET', '/api/v1/planets/earth', kind === 'anonymous' ? { key: null } : {}),
      ),
    )
    const seen = (kind: string) => answers.filter((_, i) => kinds[i] === kind)
    expect(seen('disabled').map((r) => r.status)).toEqual(Array(30).fill(503))
    // No caller, no credits: the SPEC's headers at zero, whatever ran beside them.
    expect(seen('anonymous').map((r) => [r.status, r.headers.get('x-quota-limit'), r.headers.get('x-quota-remaining')])).toEqual(
      Array(30).fill([401, '0', '0']),
    )
    const planets = seen('planet').map((r) => r.status)
    expect([planets.filter((s) => s === 200).length, planets.filter((s) => s === 429).length]).toEqual([20, 10])
    await Promise.all(answers.map((r) => r.arrayBuffer()))
    expect(remaining(await a.request('POST', '/api/v1/broken/anything', { body: { x: 2 } }))).toBe(0)
  })
})
