/**
 * The shared behaviours every domain gets from the framework (SPEC shared behaviours, Errors), over the
 * sample domain through the real app: fields, limit/offset, both response forms, JSON everywhere, and one
 * problem shape for every failure — malformed JSON, schema violations, unknown routes, wrong methods,
 * oversized bodies, internal errors — with authentication decided before the body is looked at.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Elysia, t } from 'elysia'
import { defineDomain } from '../../src/domains/types.ts'
import { requestContext } from '../../src/http/routing/context.ts'
import { one } from '../../src/http/reply/reply.ts'
import { testApp, type TestApp } from '../support/app.ts'
import { PLANETS, sampleDomain } from '../support/sample-domain.ts'

const SECRET = 'db-password-hunter2'
/** A domain whose route fails the way a bug would, to check nothing internal leaks. */
const broken = defineDomain({
  name: 'broken',
  prefixes: ['/broken'],
  datasets: [],
  open: () => null,
  routes: ({ config }) =>
    new Elysia({ prefix: '/broken' })
      .use(requestContext(config.responseForm))
      .get('/', () => {
        throw new Error(`connect failed: ${SECRET} at /srv/almanac/secret.ts`)
      })
      .post('/echo', ({ body }) => one(body), {
        body: t.Object({ n: t.Integer({ minimum: 1, maximum: 9 }), s: t.Optional(t.String({ maxLength: 3 })) }),
      }),
})

let app: TestApp
let bare: TestApp
let small: TestApp
beforeAll(async () => {
  app = await testApp({ domains: [sampleDomain(), broken] })
  bare = await testApp({ domains: [sampleDomain()], env: { ALMANAC_RESPONSE_FORM: 'bare' } })
  small = await testApp({ domains: [sampleDomain(), broken], env: { ALMANAC_MAX_LIMIT: '5', ALMANAC_BODY_LIMIT: '2048' } })
})
afterAll(async () => {
  await app.close()
  await bare.close()
  await small.close()
})

describe('fields', () => {
  test("keeps only the named top-level fields, in the caller's form", async () => {
    const b = await app.json('GET', '/api/v1/planets/mars?fields=name,order', { form: 'bare' })
    expect(b.body).toEqual({ name: 'mars', order: 4 })
    const a = await app.json('GET', '/api/v1/planets/mars?fields=planet_name', { form: 'enveloped' })
    expect(a.body).toEqual({ status: 'ok', data: { planet_name: 'mars' }, error: null })
  })

  test('dotted paths select inside objects', async () => {
    const r = await app.json('GET', '/api/v1/planets/jupiter?fields=name,orbit.moons', { form: 'bare' })
    expect(r.body).toEqual({ name: 'jupiter', orbit: { moons: 95 } })
  })

  test('applies to each item of a list, not to the wrapper', async () => {
    const b = await app.json('GET', '/api/v1/planets?fields=name', { form: 'bare' })
    expect(b.body.count).toBe(8)
    expect(b.body.results).toEqual(PLANETS.map((p) => ({ name: p.name })))
    const a = await app.json('GET', '/api/v1/planets?fields=orbit.days&limit=2', { form: 'enveloped' })
    expect(a.body).toEqual({ status: 'ok', data: [{ orbit: { days: 88 } }, { orbit: { days: 225 } }], error: null, total: 8 })
  })

  test('an unknown name is a 400 that lists the valid ones', async () => {
    for (const form of ['bare', 'enveloped'] as const) {
      const r = await app.json('GET', '/api/v1/planets/mars?fields=name,colour', { form })
      expect(r.status).toBe(400)
      const problem = form === 'bare' ? r.body : r.body.error
      expect(problem.detail).toContain('colour')
      const valid = form === 'bare' ? ['name', 'orbit', 'order'] : ['orbit', 'order', 'planet_name']
      expect(problem.valid_fields).toEqual(valid)
      for (const name of valid) expect(problem.detail).toContain(name)
      expect(problem.errors).toContainEqual(expect.objectContaining({ in: 'query', field: 'fields' }))
      expect(JSON.stringify(problem.errors)).toContain('colour')
    }
    const nested = await app.json('GET', '/api/v1/planets?fields=orbit.rings', { form: 'bare' })
    expect(nested.status).toBe(400)
    expect(nested.body.detail).toContain('orbit.rings')
  })
})

describe('limit and offset', () => {
  test('page through a list; the total counts every match', async () => {
    const r = await app.json('GET', '/api/v1/planets?limit=2&offset=3', { form: 'bare' })
    expect(r.body).toEqual({ count: 8, results: PLANETS.slice(3, 5).map((p) => ({ name: p.name, order: p.order, orbit: p.orbit })) })
    const past = await app.json('GET', '/api/v1/planets?offset=100', { form: 'bare' })
    expect(past.body).toEqual({ count: 8, results: [] })
  })

  test('limit is 1..max (1000 unless configured) and offset >= 0, each a 422 naming the member', async () => {
    for (const [query, field] of [
      ['limit=0', 'limit'],
      ['limit=1001', 'limit'],
      ['limit=-3', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=2.5', 'limit'],
      ['offset=-1', 'offset'],
      ['offset=x', 'offset'],
    ]) {
      const r = await app.json('GET', `/api/v1/planets?${query}`, { form: 'bare' })
      expect(r.status, query).toBe(422)
      expect(
        r.body.errors.map((e: any) => e.field),
        query,
      ).toContain(field)
      expect(r.body.errors[0].in).toBe('query')
    }
    expect((await app.json('GET', '/api/v1/planets?limit=1000')).status).toBe(200)
    expect((await app.json('GET', '/api/v1/planets?limit=1&offset=0')).status).toBe(200)
    // ALMANAC_MAX_LIMIT=5
    expect((await small.json('GET', '/api/v1/planets?limit=5')).status).toBe(200)
    const over = await small.json('GET', '/api/v1/planets?limit=6', { form: 'bare' })
    expect(over.status).toBe(422)
    expect(over.body.errors[0]).toEqual(expect.objectContaining({ in: 'query', field: 'limit' }))
    expect(over.body.errors[0].message).toContain('1 to 5')
  })
})

describe('response forms', () => {
  test('the deployment chooses the default form', async () => {
    const a = await app.json('GET', '/api/v1/planets/earth')
    expect(a.body).toEqual({ status: 'ok', data: { planet_name: 'earth', order: 3, orbit: { days: 365, moons: 1 } }, error: null })
    const b = await bare.json('GET', '/api/v1/planets/earth')
    expect(b.body).toEqual({ name: 'earth', order: 3, orbit: { days: 365, moons: 1 } })
  })

  test('X-Response-Form overrides it per request, both ways; an unknown value is a 400 naming both forms', async () => {
    expect((await bare.json('GET', '/api/v1/planets/earth', { form: 'enveloped' })).body.status).toBe('ok')
    expect((await app.json('GET', '/api/v1/planets/earth', { form: 'bare' })).body.name).toBe('earth')
    expect((await app.json('GET', '/api/v1/planets/earth', { headers: { 'x-response-form': ' BARE ' } })).body.name).toBe('earth')
    for (const [server, form] of [
      [bare, 'bare'],
      [app, 'enveloped'],
    ] as const) {
      const xml = await server.json('GET', '/api/v1/planets/earth', { headers: { 'x-response-form': 'xml' } })
      expect(xml.status).toBe(400)
      // Told in the server's default form, since the asked one does not exist.
      const problem = form === 'bare' ? xml.body : xml.body.error
      expect(problem.detail).toBe('X-Response-Form must be enveloped or bare; got "xml".')
      expect(problem.errors).toEqual([{ in: 'header', field: 'X-Response-Form', message: 'expected enveloped or bare' }])
    }
    // An empty value is no value: the default form.
    expect((await bare.json('GET', '/api/v1/planets/earth', { headers: { 'x-response-form': '' } })).body.name).toBe('earth')
  })

  test('lists: Form A data + total, Form B count + results; batch results have no count', async () => {
    const a = await app.json('GET', '/api/v1/planets?limit=1')
    expect(Object.keys(a.body).sort()).toEqual(['data', 'error', 'status', 'total'])
    const b = await bare.json('GET', '/api/v1/planets?limit=1')
    expect(Object.keys(b.body).sort()).toEqual(['count', 'results'])
    const batch = await bare.json('POST', '/api/v1/planets/bulk', { body: { names: ['venus', 'pluto'] } })
    expect(batch.body).toEqual({ results: [{ name: 'venus', order: 2, orbit: { days: 225, moons: 0 } }] })
    const batchA = await app.json('POST', '/api/v1/planets/bulk', { body: { names: ['venus'] } })
    expect(batchA.body).toEqual({ status: 'ok', data: [{ planet_name: 'venus', order: 2, orbit: { days: 225, moons: 0 } }], error: null })
  })
})

describe('problems', () => {
  const problemOf = (body: any, form: 'bare' | 'enveloped') => {
    if (form === 'bare') return body
    expect(body.status).toBe('error')
    expect(body.data).toBeNull()
    expect(Object.keys(body).sort()).toEqual(['data', 'error', 'status'])
    return body.error
  }
  const expectProblem = (p: any, status: number, kind: string, instance: string) => {
    expect(p.type).toBe(`urn:almanac:problem:${kind}`)
    expect(p.status).toBe(status)
    expect(typeof p.title).toBe('string')
    expect(p.detail.length).toBeGreaterThan(5)
    expect(p.instance).toBe(instance)
  }

  for (const form of ['bare', 'enveloped'] as const) {
    test(`malformed JSON is a 400 (${form})`, async () => {
      const r = await app.json('POST', '/api/v1/planets/bulk', { body: '{"names": [', form })
      expect(r.status).toBe(400)
      expectProblem(problemOf(r.body, form), 400, 'bad-request', '/api/v1/planets/bulk')
    })

    test(`a schema violation is a 422 naming each bad field (${form})`, async () => {
      const r = await app.json('POST', '/api/v1/broken/echo', { body: { n: 42, s: 'toolong' }, form })
      expect(r.status).toBe(422)
      const p = problemOf(r.body, form)
      expectProblem(p, 422, 'invalid', '/api/v1/broken/echo')
      expect(p.errors.map((e: any) => `${e.in}:${e.field}`).sort()).toEqual(['body:n', 'body:s'])
      const missing = await app.json('POST', '/api/v1/planets/bulk', { body: {}, form })
      expect(missing.status).toBe(422)
      expect(problemOf(missing.body, form).errors[0].field).toBe('names')
    })

    test(`an unknown route or resource is a 404 (${form})`, async () => {
      const route = await app.json('GET', '/api/v1/no/such/route', { form })
      expect(route.status).toBe(404)
      expectProblem(problemOf(route.body, form), 404, 'not-found', '/api/v1/no/such/route')
      const resource = await app.json('GET', '/api/v1/planets/pluto', { form })
      expect(resource.status).toBe(404)
      expect(problemOf(resource.body, form).detail).toContain('pluto')
      const outside = await app.json('GET', '/nowhere', { form })
      expect(outside.status).toBe(404)
    })

    test(`a wrong method is a 405 with Allow (${form})`, async () => {
      const r = await app.json('DELETE', '/api/v1/planets/mars', { form })
      expect(r.status).toBe(405)
      expect(r.headers.get('allow')).toBe('GET')
      expectProblem(problemOf(r.body, form), 405, 'method', '/api/v1/planets/mars')
      const post = await app.json('GET', '/api/v1/planets/bulk', { form })
      // GET /planets/bulk is the item route (a planet named "bulk"), so it is a 404, not a 405.
      expect(post.status).toBe(404)
      const put = await app.json('PUT', '/api/v1/planets/bulk', { form, body: { names: ['mars'] } })
      expect(put.status).toBe(405)
      expect(put.headers.get('allow')!.split(', ')).toContain('POST')
      // A list route registered as `/planets/` answers `/planets` too, so a wrong method there is a 405 as well.
      for (const path of ['/api/v1/planets', '/api/v1/planets/']) {
        const del = await app.json('DELETE', path, { form })
        expect({ path, status: del.status, allow: del.headers.get('allow') }).toEqual({ path, status: 405, allow: 'GET' })
      }
    })

    test(`a body over the limit is a 413, declared or not (${form})`, async () => {
      const big = JSON.stringify({ names: ['x'.repeat(3000)] })
      const declared = await small.json('POST', '/api/v1/planets/bulk', {
        body: big,
        form,
        headers: { 'content-length': String(big.length) },
      })
      expect(declared.status).toBe(413)
      expectProblem(problemOf(declared.body, form), 413, 'too-large', '/api/v1/planets/bulk')
      expect(problemOf(declared.body, form).detail).toContain('2048')
      const undeclared = await small.json('POST', '/api/v1/planets/bulk', { body: big, form })
      expect(undeclared.status).toBe(413)
      const fits = await small.json('POST', '/api/v1/planets/bulk', {
        body: JSON.stringify({ names: ['mars', 'y'.repeat(1900)] }),
        form,
      })
      expect(fits.status).toBe(200)
    })

    test(`an internal error is a 500 that leaks no message or stack (${form})`, async () => {
      const res = await app.request('GET', '/api/v1/broken', { form })
      const text = await res.text()
      expect(res.status).toBe(500)
      expect(text).not.toContain(SECRET)
      expect(text).not.toContain('secret.ts')
      expect(text).not.toContain('connect failed')
      expect(text).not.toMatch(/\bat \S+:\d+/)
      expectProblem(problemOf(JSON.parse(text), form), 500, 'internal', '/api/v1/broken')
    })
  }

  test('authentication is decided before the body: no key is a 401 whatever the body holds', async () => {
    for (const body of ['{"names": [', JSON.stringify({ names: 'x' }), JSON.stringify({ names: ['x'.repeat(5000)] })]) {
      const r = await small.json('POST', '/api/v1/planets/bulk', { body, key: null, form: 'bare' })
      expect(r.status).toBe(401)
      expect(r.body.type).toBe('urn:almanac:problem:unauthorized')
      expect(r.headers.get('www-authenticate')).toBeTruthy()
    }
    const badKey = await app.json('POST', '/api/v1/planets/bulk', { body: '{oops', key: 'not-a-real-key-123', form: 'bare' })
    expect(badKey.status).toBe(401)
  })
})

test('every response is application/json: successes, problems, operations', async () => {
  const cases: [string, string, Parameters<TestApp['request']>[2]?][] = [
    ['GET', '/api/v1/planets'],
    ['GET', '/api/v1/planets/mars?fields=name'],
    ['POST', '/api/v1/planets/bulk', { body: { names: ['mars'] } }],
    ['GET', '/api/v1/planets/mars?fields=zzz'],
    ['GET', '/api/v1/planets?limit=0'],
    ['POST', '/api/v1/planets/bulk', { body: '{' }],
    ['GET', '/api/v1/planets', { key: null }],
    ['GET', '/api/v1/nope'],
    ['PATCH', '/api/v1/planets'],
    ['GET', '/api/v1/broken'],
    ['GET', '/healthz'],
    ['GET', '/readyz'],
    ['GET', '/openapi.json'],
    ['GET', '/nope'],
  ]
  for (const [method, path, init] of cases) {
    const r = await app.request(method, path, init)
    expect(r.headers.get('content-type'), `${method} ${path}`).toMatch(/^application\/json/)
    JSON.parse(await r.text())
  }
  for (const [method, path, init] of [['POST', '/api/v1/planets/bulk', { body: 'x'.repeat(4096) }]] as const) {
    const r = await small.request(method, path, init)
    expect(r.status).toBe(413)
    expect(r.headers.get('content-type')).toMatch(/^application\/json/)
  }
})
