/**
 * The OpenAPI document as a contract: every /api/v1 operation is called over a real loopback server with
 * the example request the document itself gives (path parameter, query and body examples), in both
 * response forms, and the answers are validated with ajv against the schemas the document declares for
 * their status: 200 bodies and the problems (401 without a key, 400 on an unknown `fields` name, 422 on an
 * empty body, 404/422 on an unknown path value). Objects are closed for the check (a member the document
 * does not list fails), so the document lists every field. Driven by the document: a new route is
 * covered without touching this file; one without a derivable example is skipped and listed.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020'
import { domains as allDomains } from '../../src/domains/index.ts'
import { TEST_KEY } from '../support/app.ts'
import { liveServer, type LiveServer } from './helpers.ts'

const METHODS = ['get', 'post', 'put', 'patch', 'delete']
/** Tags whose operations must all be exercised: every domain's (from its descriptor), and the meta routes'. */
const MUST_COVER = [...allDomains.map((d) => d.tag?.name ?? `(the ${d.name} domain declares no tag)`), 'meta']

let server: LiveServer
let doc: any
let ajv: Ajv2020

/** Every object schema that lists its properties and says nothing else is closed for the check. */
function closeObjects(schema: any): any {
  if (Array.isArray(schema)) return schema.map(closeObjects)
  if (!schema || typeof schema !== 'object') return schema
  const out: any = {}
  for (const [k, v] of Object.entries(schema)) out[k] = k === 'examples' || k === 'example' ? v : closeObjects(v)
  if (out.properties && out.additionalProperties === undefined) out.additionalProperties = false
  return out
}

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')

/** A key on a plan of one credit a day: after one request, every request is a 429. */
const SPENT_KEY = 'spent-key-0123456789'

beforeAll(async () => {
  // A small body limit (the examples are far below it) so that every body operation can be sent a 413.
  server = await liveServer({
    domains: allDomains,
    // Email checks answer from the lists alone: no DNS or RDAP traffic leaves the test.
    env: {
      ALMANAC_EMAIL_OFFLINE: 'true',
      ALMANAC_BODY_LIMIT: '1024',
      ALMANAC_PLANS: 'test:1000000/1d,spent:1/1d',
      ALMANAC_API_KEYS: `${TEST_KEY}:test,${SPENT_KEY}:spent`,
    },
  })
  doc = await (await fetch(`${server.url}/openapi.json`)).json()
  ajv = new Ajv2020({ strict: false, allErrors: true })
  ajv.addFormat('uri', /^[a-z][a-z0-9+.-]*:\S+$/i)
  ajv.addFormat('date', /^\d{4}-\d{2}-\d{2}$/)
  ajv.addFormat('date-time', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/)
  ajv.addSchema({ $id: 'almanac', ...closeObjects({ paths: doc.paths, components: doc.components }) })
})
afterAll(() => server.stop())

interface Operation {
  path: string
  method: string
  op: any
}
const operations = (): Operation[] =>
  Object.entries(doc.paths)
    .filter(([path]) => path.startsWith('/api/v1/'))
    .flatMap(([path, item]: [string, any]) =>
      Object.entries(item)
        .filter(([m]) => METHODS.includes(m))
        .map(([method, op]) => ({ path, method, op })),
    )

const exampleOf = (p: any) =>
  p.example ?? p.schema?.examples?.[0] ?? (Object.values(p.examples ?? {})[0] as any)?.value ?? p.schema?.default

/** The example request of an operation, or why there is none. */
function exampleRequest({ path, op }: Operation): { path: string; query: URLSearchParams; body?: unknown } | { missing: string } {
  let url = path
  const query = new URLSearchParams()
  for (const p of op.parameters ?? []) {
    if (p.in !== 'path' && p.in !== 'query') continue
    const value = exampleOf(p)
    if (value === undefined) {
      if (p.required) return { missing: `${p.in} parameter ${p.name}` }
      continue
    }
    if (p.in === 'path') url = url.replace(`{${p.name}}`, encodeURIComponent(String(value)))
    else query.set(p.name, String(value))
  }
  if (!op.requestBody) return { path: url, query }
  const schema = op.requestBody.content?.['application/json']?.schema
  const body = schema?.examples?.[0] ?? schema?.example
  if (body === undefined) return { missing: 'request body example' }
  return { path: url, query, body }
}

async function call(
  method: string,
  path: string,
  query: URLSearchParams,
  init: { body?: unknown; form: 'enveloped' | 'bare'; key?: boolean | string },
) {
  const headers: Record<string, string> = { 'x-response-form': init.form }
  if (init.key !== false) headers['x-api-key'] = typeof init.key === 'string' ? init.key : TEST_KEY
  if (init.body !== undefined) headers['content-type'] = 'application/json'
  const qs = query.toString()
  const res = await fetch(`${server.url}${path}${qs ? `?${qs}` : ''}`, {
    method: method.toUpperCase(),
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  })
  return { status: res.status, body: (await res.json()) as any }
}

/** The validator of the body an operation declares for a status (through a shared response's $ref). */
const validators = new Map<string, ValidateFunction>()
function validatorFor({ path, method, op }: Operation, status: number): ValidateFunction | undefined {
  const declared = op.responses?.[String(status)]
  if (!declared) return undefined
  const base = declared.$ref ? `almanac${declared.$ref}` : `almanac#/${pointer('paths', path, method, 'responses', String(status))}`
  const ref = `${base}/content/${pointer('application/json')}/schema`
  let v = validators.get(ref)
  if (!v) validators.set(ref, (v = ajv.compile({ $ref: ref })))
  return v
}

function expectValid(o: Operation, form: string, what: string, status: number, body: unknown) {
  const validate = validatorFor(o, status)
  const where = `${o.method.toUpperCase()} ${o.path} (${form}, ${what}): ${status}`
  expect(validate, `${where} is not a declared status`).toBeDefined()
  const ok = validate!(body)
  expect(
    ok ? [] : validate!.errors!.slice(0, 5).map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`),
    `${where}: ${JSON.stringify(body).slice(0, 300)}`,
  ).toEqual([])
  // The body is the form it was asked for, not just one of the two.
  const enveloped =
    typeof body === 'object' &&
    body !== null &&
    'data' in body &&
    'error' in body &&
    ((body as any).status === 'ok' || (body as any).status === 'error')
  expect(enveloped, where).toBe(form === 'enveloped')
}

describe('the document declares', () => {
  test('a typed 200 body in both forms for every operation', () => {
    for (const { path, method, op } of operations()) {
      const forms = op.responses['200']?.content?.['application/json']?.schema?.oneOf
      expect(forms?.length, `${method} ${path}`).toBe(2)
      const [a, b] = forms
      expect(
        a.properties?.data?.$ref ?? a.properties?.data?.items?.$ref ?? a.properties?.data?.type,
        `${method} ${path} Form A data`,
      ).toBeDefined()
      // A map keyed by the caller's input (the UA device catalog) declares patternProperties.
      expect(
        b.properties ?? b.allOf ?? b.anyOf ?? b.$ref ?? b.patternProperties ?? b.additionalProperties,
        `${method} ${path} Form B`,
      ).toBeDefined()
    }
  })

  test('tags with descriptions, in one spelling', () => {
    for (const tag of doc.tags) {
      expect(tag.name).toBe(tag.name.toLowerCase())
      expect(tag.description?.length).toBeGreaterThan(10)
    }
    for (const name of MUST_COVER) expect(doc.tags.map((t: any) => t.name)).toContain(name)
    // A domain's tag is described as its descriptor says, and every operation under its prefixes carries it.
    for (const domain of allDomains) {
      expect(doc.tags.find((t: any) => t.name === domain.tag?.name)?.description).toBe(domain.tag?.description)
      const prefixes = domain.prefixes.map((p) => `/api/v1${p}`)
      const its = operations().filter((o) => prefixes.some((p) => o.path === p || o.path.startsWith(`${p}/`)))
      expect(its.length).toBeGreaterThan(0)
      for (const o of its) expect(o.op.tags, `${o.method} ${o.path}`).toEqual([domain.tag?.name])
    }
  })

  test('path parameters only as parameters: no wildcard or colon in a documented path; identifier operation ids', () => {
    for (const { path, op } of operations()) {
      expect(path).not.toMatch(/[*:]/)
      const named = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1])
      expect(
        op.parameters
          .filter((p: any) => p.in === 'path')
          .map((p: any) => p.name)
          .sort(),
      ).toEqual(named.sort())
    }
    expect(doc.paths['/api/v1/timezones/{tz_name}']?.get).toBeDefined()
    // Operation ids are identifiers (clients name methods after them): `getApiV1TimezonesByTzName`.
    for (const { op } of operations()) expect(op.operationId).toMatch(/^[a-z]+[A-Za-z0-9]*$/)
    expect(doc.paths['/api/v1/timezones/{tz_name}'].get.operationId).toBe('getApiV1TimezonesByTzName')
  })
})

describe('real responses match the declared schemas', () => {
  const skipped: string[] = []

  test('success bodies of every operation, both forms', async () => {
    let checked = 0
    for (const o of operations()) {
      const req = exampleRequest(o)
      if ('missing' in req) {
        skipped.push(`${o.method.toUpperCase()} ${o.path}: no ${req.missing}`)
        continue
      }
      for (const form of ['enveloped', 'bare'] as const) {
        const res = await call(o.method, req.path, req.query, { body: req.body, form })
        expect(res.status, `${o.method} ${req.path} (${form}): ${JSON.stringify(res.body).slice(0, 300)}`).toBe(200)
        expectValid(o, form, 'example', res.status, res.body)
        checked++
      }
    }
    if (skipped.length) console.log(`contract: skipped (no example request):\n  ${skipped.join('\n  ')}`)
    expect(checked).toBeGreaterThan(40)
    const mine = operations().filter((o) => o.op.tags.some((t: string) => MUST_COVER.includes(t)))
    expect(skipped.filter((s) => mine.some((o) => s.startsWith(`${o.method.toUpperCase()} ${o.path}:`)))).toEqual([])
  }, 120_000)

  test('problems of every operation, both forms: no key, over quota, body too large, unknown fields, empty body, unknown path ' +
    'value', async () => {
    for (const o of operations()) {
      const req = exampleRequest(o)
      if ('missing' in req) continue
      for (const form of ['enveloped', 'bare'] as const) {
        const noKey = await call(o.method, req.path, req.query, { body: req.body, form, key: false })
        expect(noKey.status).toBe(401)
        expectValid(o, form, 'no key', 401, noKey.body)

        // The second request on a one-credit plan (the first may still fit when the day's window turns).
        await call(o.method, req.path, req.query, { body: req.body, form, key: SPENT_KEY })
        const spent = await call(o.method, req.path, req.query, { body: req.body, form, key: SPENT_KEY })
        // A route that costs nothing (`x-quota-cost: 0`, a caller's own usage) answers with no credit left.
        const free = o.op['x-quota-cost'] === 0
        expect(spent.status, `${o.method} ${o.path} over quota`).toBe(free ? 200 : 429)
        if (!free) expectValid(o, form, 'over quota', 429, spent.body)

        if (o.op.requestBody) {
          const res = await call(o.method, req.path, req.query, { body: { padding: 'x'.repeat(2048) }, form })
          expect(res.status, `${o.method} ${o.path} body too large`).toBe(413)
          expectValid(o, form, 'body too large', 413, res.body)
        }

        if (o.op.parameters.some((p: any) => p.name === 'fields')) {
          const q = new URLSearchParams(req.query)
          q.set('fields', 'no_such_field_anywhere')
          const res = await call(o.method, req.path, q, { body: req.body, form })
          expect(res.status, `${o.method} ${o.path} fields`).toBe(400)
          expectValid(o, form, 'unknown fields', 400, res.body)
          expect(res.body.valid_fields ?? res.body.error?.valid_fields).toBeArray()
        }
        if (o.op.requestBody) {
          const res = await call(o.method, req.path, req.query, { body: {}, form })
          expect(res.status, `${o.method} ${o.path} empty body`).toBe(422)
          expectValid(o, form, 'empty body', 422, res.body)
        }
        const param = o.op.parameters.find((p: any) => p.in === 'path')
        if (param) {
          const path = o.path
            .replace(`{${param.name}}`, 'QQ-NO-SUCH-9')
            .replace(/\{[^}]+\}/g, (m) => encodeURIComponent(String(exampleOf(o.op.parameters.find((p: any) => `{${p.name}}` === m)))))
          const res = await call(o.method, path, req.query, { body: req.body, form })
          // SPEC Errors: an unknown country in a validate request is not an error but `valid: false`.
          const expected = o.path === '/api/v1/postal/{country_code}/validate/{postal_code}' ? [200] : [404, 422]
          expect(expected, `${o.method} ${path}: ${res.status}`).toContain(res.status)
          expectValid(o, form, 'unknown path value', res.status, res.body)
        }
      }
    }
  }, 120_000)

  test('every operation names an unknown query parameter and an unknown body member (with the nearest known name) in a 422, both ' +
    'forms', async () => {
    let checked = 0
    for (const o of operations()) {
      const req = exampleRequest(o)
      if ('missing' in req) continue
      const known: string[] = o.op.parameters.filter((p: any) => p.in === 'query').map((p: any) => p.name)
      for (const form of ['enveloped', 'bare'] as const) {
        // A typo of a known parameter is answered with it; a stranger on a route that takes none, plainly.
        const typo = known.length ? `${known[0]}x` : 'regoin'
        const q = new URLSearchParams(req.query)
        q.set(typo, '1')
        const res = await call(o.method, req.path, q, { body: req.body, form })
        const where = `${o.method.toUpperCase()} ${o.path} ?${typo} (${form})`
        expect(res.status, `${where}: ${JSON.stringify(res.body).slice(0, 300)}`).toBe(422)
        expectValid(o, form, 'unknown query parameter', 422, res.body)
        const problem = form === 'bare' ? res.body : res.body.error
        expect(problem.errors, where).toEqual([
          {
            in: 'query',
            field: typo,
            message: known.length
              ? `unknown query parameter (did you mean ${known[0]}?)`
              : 'unknown query parameter: this route takes no query parameters',
          },
        ])
        // The cache-buster every route ignores by design (README, "Nothing is dropped") changes nothing.
        const busted = new URLSearchParams(req.query)
        busted.set('_', '1700000000000')
        expect((await call(o.method, req.path, busted, { body: req.body, form })).status, `${where} with _`).toBe(200)

        const body = req.body
        if (body && typeof body === 'object' && !Array.isArray(body)) {
          const members = Object.keys(body)
          const stranger = members.length ? `${members[0]}s` : 'extra'
          const res = await call(o.method, req.path, req.query, { body: { ...body, [stranger]: 1 }, form })
          const where = `${o.method.toUpperCase()} ${o.path} {${stranger}} (${form})`
          expect(res.status, `${where}: ${JSON.stringify(res.body).slice(0, 300)}`).toBe(422)
          expectValid(o, form, 'unknown body member', 422, res.body)
          const problem = form === 'bare' ? res.body : res.body.error
          expect(
            problem.errors.map((e: any) => [e.in, e.field]),
            where,
          ).toEqual([['body', stranger]])
          expect(problem.errors[0].message, where).toStartWith('unknown member')
        }
        checked++
      }
    }
    expect(checked).toBeGreaterThan(80)
  }, 120_000)

  test('the document shows every request body object closed (additionalProperties: false)', () => {
    const open: string[] = []
    const walk = (schema: any, where: string) => {
      if (!schema || typeof schema !== 'object') return
      if (schema.type === 'object' && schema.properties && schema.additionalProperties !== false) open.push(where)
      for (const [k, v] of Object.entries(schema)) if (k !== 'examples' && k !== 'example') walk(v, `${where}/${k}`)
    }
    for (const o of operations()) if (o.op.requestBody) walk(o.op.requestBody, `${o.method} ${o.path}`)
    expect(open).toEqual([])
  })

  test('a body member that is an object with its own toString (valid JSON) is a 422, not a 500', async () => {
    // Elysia 1.4 formats a wrong value with a template literal; `{"toString": "x"}` made that throw.
    const evil = { toString: 'x', valueOf: 'y' }
    const replaceStrings = (v: unknown): unknown =>
      typeof v === 'string'
        ? evil
        : Array.isArray(v)
          ? v.map(replaceStrings)
          : v && typeof v === 'object'
            ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, replaceStrings(x)]))
            : v
    let checked = 0
    for (const o of operations()) {
      const req = exampleRequest(o)
      if ('missing' in req || req.body === undefined) continue
      const body = replaceStrings(req.body)
      if (JSON.stringify(body) === JSON.stringify(req.body)) continue // no string member (postal nearby)
      for (const form of ['enveloped', 'bare'] as const) {
        const res = await call(o.method, req.path, req.query, { body, form })
        expect(res.status, `${o.method} ${o.path}`).toBeLessThan(500)
        if (!o.op.tags.some((t: string) => MUST_COVER.includes(t))) continue
        expect(res.status, `${o.method} ${o.path}`).toBe(422)
        expectValid(o, form, 'toString member', 422, res.body)
        checked++
      }
    }
    expect(checked).toBeGreaterThan(20)
  }, 60_000)
})
