/**
 * /openapi.json: an OpenAPI 3.1 document with every route of the running app, security on every /api/v1
 * operation, the problem responses and quota headers, both response forms, and bulk costs — checked over
 * the real domains plus the sample domain, and for internal consistency (every $ref resolves, every path
 * parameter is declared, operation ids are unique).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Elysia, t } from 'elysia'
import { loadConfig } from '../../src/config.ts'
import { openDataDir } from '../../src/data/open.ts'
import { domains as allDomains } from '../../src/domains/index.ts'
import { createAuthenticator } from '../../src/http/admission/auth.ts'
import { createApp } from '../../src/server.ts'
import { openDomains } from '../../src/domains/mount.ts'
import { memoryQuotaStore } from '../../src/stores/quota.ts'
import { defineDomain } from '../../src/domains/types.ts'
import { requestContext } from '../../src/http/routing/context.ts'
import { routeDetail } from '../../src/http/routing/route-facts.ts'
import { fieldsQuery, pageQuery } from '../../src/http/routing/paging.ts'
import { list, one } from '../../src/http/reply/reply.ts'
import { testApp, type TestApp } from '../support/app.ts'
import { sampleDomain } from '../support/sample-domain.ts'

const Moon = t.Object({ name: t.String({ description: 'Moon name' }), radius_km: t.Number({ description: 'Mean radius' }) })
const MoonBare = t.Object({ moon: t.String(), radius: t.Number() })
const moons = defineDomain({
  name: 'moons',
  prefixes: ['/moons'],
  datasets: [],
  open: () => null,
  routes: ({ config }) =>
    new Elysia({ prefix: '/moons' })
      .use(requestContext(config.responseForm))
      .get('/', () => list([], { total: 0 }), {
        query: t.Object({ ...pageQuery(config.maxLimit, 20), ...fieldsQuery }),
        detail: routeDetail({ summary: 'Moons', response: { enveloped: Moon, bare: MoonBare, list: true } }),
      })
      .get('/:name', () => one({}), {
        params: t.Object({ name: t.String({ description: 'Moon name' }) }),
        detail: routeDetail({ summary: 'One moon', response: { enveloped: Moon, bare: MoonBare } }),
      })
      .post('/bulk', () => list([]), {
        body: t.Object({ names: t.Array(t.String(), { maxItems: 7 }) }),
        detail: routeDetail({ summary: 'Many moons', cost: { field: 'names', max: 7 } }),
      }),
})

let app: TestApp
let doc: any
const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options']

beforeAll(async () => {
  app = await testApp({ domains: [...allDomains, sampleDomain(), moons], env: { ALMANAC_MAX_LIMIT: '500' } })
  const res = await app.request('GET', '/openapi.json', { key: null })
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toContain('application/json')
  doc = await res.json()
})
afterAll(() => app.close())

const operations = () =>
  Object.entries(doc.paths).flatMap(([path, item]: [string, any]) =>
    Object.entries(item)
      .filter(([m]) => METHODS.includes(m))
      .map(([method, op]) => ({ path, method, op: op as any })),
  )
const api = () => operations().filter((o) => o.path.startsWith('/api/v1/'))

const resolve = (ref: string) =>
  ref
    .slice(2)
    .split('/')
    .reduce((o: any, k) => o?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc)

describe('document', () => {
  test('is OpenAPI 3.1 with both security schemes and the shared components', () => {
    expect(doc.openapi).toMatch(/^3\.1\./)
    expect(doc.info.title).toBeTruthy()
    expect(doc.components.securitySchemes.ApiKey).toEqual(expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }))
    expect(doc.components.securitySchemes.BearerJWT).toEqual(
      expect.objectContaining({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }),
    )
    for (const name of ['Problem', 'ProblemEnvelope', 'FieldError', 'Envelope', 'BareList'])
      expect(doc.components.schemas[name]).toBeDefined()
    expect(doc.components.schemas.Problem.required).toEqual(['type', 'title', 'status', 'detail'])
    expect(doc.components.schemas.ProblemEnvelope.properties.status).toEqual({ const: 'error' })
    for (const h of [
      'X-Quota-Limit',
      'X-Quota-Remaining',
      'X-Quota-Reset',
      'RateLimit-Policy',
      'RateLimit',
      'Retry-After',
      'Allow',
      'WWW-Authenticate',
    ])
      expect(doc.components.headers[h]).toBeDefined()
    const statuses = Object.values(doc.components.responses).map((r: any) => Number(r.description.slice(0, 3)))
    expect(statuses.sort()).toEqual([400, 401, 403, 404, 405, 413, 415, 422, 429, 500, 503])
    // Cacheable reference data declares its validators and the 304; a POST does not.
    const country = doc.paths['/api/v1/countries/{code}'].get.responses
    expect([country['304']?.headers?.ETag, country['200'].headers['Cache-Control']].every(Boolean)).toBe(true)
    expect(doc.paths['/api/v1/hash/md5'].post.responses['304']).toBeUndefined()
  })

  test('every $ref resolves', () => {
    const refs: string[] = []
    const walk = (v: any) => {
      if (Array.isArray(v)) v.forEach(walk)
      else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) k === '$ref' ? refs.push(x as string) : walk(x)
    }
    walk(doc)
    expect(refs.length).toBeGreaterThan(50)
    for (const ref of new Set(refs)) {
      expect(ref.startsWith('#/')).toBe(true)
      expect(resolve(ref), ref).toBeDefined()
    }
  })

  test('operation ids are unique and every path parameter is declared', () => {
    const ids = operations().map((o) => o.op.operationId)
    expect(new Set(ids).size).toBe(ids.length)
    for (const { path, op } of operations()) {
      const declared = (op.parameters ?? [])
        .filter((p: any) => p.in === 'path')
        .map((p: any) => p.name)
        .sort()
      const inPath = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort()
      expect(declared, path).toEqual(inPath)
    }
  })

  test('every route the app answers under /api/v1 is documented', async () => {
    const domains = [...allDomains, sampleDomain(), moons]
    const config = loadConfig({ env: {} })
    const data = openDataDir(config.dataDir)
    const built = createApp(
      config,
      { data, domains, authenticator: createAuthenticator(config), quota: memoryQuotaStore() },
      await openDomains(config, data, domains, () => {}),
    )
    const documented = new Set(operations().map((o) => `${o.method.toUpperCase()} ${o.path}`))
    const answered = built.routes
      .filter((r) => r.path.startsWith('/api/v1/') && r.method !== 'ALL' && !(r.hooks as any)?.detail?.hide)
      .map((r) => `${r.method} ${r.path.replace(/\/+$/, '').replace(/:([^/]+)/g, '{$1}')}`)
    expect(answered.length).toBeGreaterThan(6)
    // A wildcard tail is documented as one path parameter (`/timezones/*` -> `/timezones/{tz_name}`).
    const shown = (route: string) =>
      documented.has(route) ||
      (route.endsWith('/*') &&
        [...documented].some((d) => d.startsWith(route.slice(0, -1) + '{') && d.endsWith('}') && !d.slice(route.length - 1).includes('/')))
    for (const route of answered) expect(shown(route), route).toBe(true)
    for (const route of [
      'GET /api/v1/planets',
      'GET /api/v1/planets/{name}',
      'POST /api/v1/planets/bulk',
      'GET /api/v1/moons/{name}',
      'GET /api/v1/meta/datasets',
    ])
      expect(documented.has(route), route).toBe(true)
    for (const op of ['GET /healthz', 'GET /readyz', 'GET /metrics', 'GET /openapi.json']) expect(documented.has(op), op).toBe(true)
  })
})

describe('every /api/v1 operation', () => {
  test('requires an API key or a bearer JWT; operational endpoints need none', () => {
    expect(api().length).toBeGreaterThan(5)
    for (const { op, path } of api()) expect(op.security, path).toEqual([{ ApiKey: [] }, { BearerJWT: [] }])
    for (const path of ['/healthz', '/readyz', '/metrics', '/openapi.json']) expect(doc.paths[path].get.security).toEqual([])
  })

  test('documents the problem responses, 413 where there is a body, and the quota headers on success', () => {
    for (const { op, path, method } of api()) {
      const where = `${method} ${path}`
      for (const status of ['400', '401', '404', '422', '429', '500', '503'])
        expect(op.responses[status]?.$ref, `${where} ${status}`).toMatch(/^#\/components\/responses\//)
      expect(!!op.responses['413'], where).toBe(!!op.requestBody)
      for (const h of ['X-Quota-Limit', 'X-Quota-Remaining', 'X-Quota-Reset'])
        expect(op.responses['200'].headers[h], `${where} ${h}`).toBeDefined()
      expect(resolve(op.responses['429'].$ref).headers['Retry-After']).toBeDefined()
      expect(resolve(op.responses['401'].$ref).headers['WWW-Authenticate']).toBeDefined()
      const problem = resolve(op.responses['422'].$ref).content['application/json'].schema
      expect(problem.oneOf.map((s: any) => s.$ref)).toEqual(['#/components/schemas/Problem', '#/components/schemas/ProblemEnvelope'])
    }
  })

  test('takes X-Response-Form and shows both forms of the success body', () => {
    for (const { op, path } of api()) {
      expect(
        op.parameters.some((p: any) => p.in === 'header' && p.name === 'X-Response-Form'),
        path,
      ).toBe(true)
      const forms = op.responses['200'].content['application/json'].schema.oneOf
      expect(
        forms.map((f: any) => f.title),
        path,
      ).toEqual(['Form A (enveloped)', 'Form B (bare)'])
    }
  })

  test('request bodies are JSON only, with the route schema', () => {
    const bulk = doc.paths['/api/v1/planets/bulk'].post
    expect(Object.keys(bulk.requestBody.content)).toEqual(['application/json'])
    expect(bulk.requestBody.content['application/json'].schema.properties.names).toEqual(
      expect.objectContaining({ type: 'array', maxItems: 5 }),
    )
  })
})

describe('what domains declare', () => {
  test('response shapes become Form A and Form B schemas, for items and lists', () => {
    const [a, b] = doc.paths['/api/v1/moons/{name}'].get.responses['200'].content['application/json'].schema.oneOf
    expect(a.properties.status).toEqual({ const: 'ok' })
    expect(a.properties.data.properties.radius_km.description).toBe('Mean radius')
    expect(a.properties.error).toEqual({ type: 'null' })
    expect(Object.keys(b.properties)).toEqual(['moon', 'radius'])
    const [la, lb] = doc.paths['/api/v1/moons'].get.responses['200'].content['application/json'].schema.oneOf
    expect(la.properties.data.type).toBe('array')
    expect(la.properties.data.items.properties.name.description).toBe('Moon name')
    expect(la.properties.total.type).toBe('integer')
    expect(lb.required).toEqual(['count', 'results'])
    expect(lb.properties.count.type).toBe('integer')
    expect(Object.keys(lb.properties.results.items.properties)).toEqual(['moon', 'radius'])
    // The internal marker does not leak into the document.
    expect(JSON.stringify(doc)).not.toContain('x-almanac-response')
  })

  test('bulk routes show their per-item quota cost', () => {
    const bulk = doc.paths['/api/v1/moons/bulk'].post
    expect(bulk['x-quota-cost']).toEqual({ field: 'names', max: 7 })
    expect(bulk.description).toContain('1 credit per item of `names` (at most 7 per request)')
    expect(doc.paths['/api/v1/moons/{name}'].get.description).toContain('1 credit.')
  })

  test('limit/offset/fields are plain typed query parameters with the configured maximum', () => {
    const params = doc.paths['/api/v1/moons'].get.parameters
    const limit = params.find((p: any) => p.name === 'limit')
    expect(limit).toEqual(expect.objectContaining({ in: 'query', required: false }))
    expect(limit.schema).toEqual(expect.objectContaining({ type: 'integer', minimum: 1, maximum: 500 }))
    expect(limit.schema.anyOf).toBeUndefined()
    expect(limit.schema.error).toBeUndefined()
    expect(params.find((p: any) => p.name === 'offset').schema).toEqual(expect.objectContaining({ type: 'integer', minimum: 0 }))
    expect(params.find((p: any) => p.name === 'fields').schema.type).toBe('string')
  })

  test('X-Definitions-Updated is documented where the domain sends it', async () => {
    expect(doc.paths['/api/v1/planets/{name}'].get.responses['200'].headers['X-Definitions-Updated']).toBeDefined()
    expect(doc.paths['/api/v1/moons/{name}'].get.responses['200'].headers['X-Definitions-Updated']).toBeUndefined()
    const res = await app.request('GET', '/api/v1/planets/mars')
    expect(res.headers.get('x-definitions-updated')).toBe('2026-01-02')
  })
})
