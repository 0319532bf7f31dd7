/**
 * The request checks the shared layers must pass on real routes, sent over HTTP to a running server:
 * range checks on query integers, 405 with Allow, 413, `fields`, both response forms, malformed JSON,
 * a missing key, and complete problems. The same table runs against the source tree
 * (`request-checks.test.ts`, `bun src/main.ts serve`) and the compiled executable
 * (`executable.test.ts`): a build step that changes behaviour (a minifier renaming the class Elysia
 * matches by name once turned every 422 here into a 200 with 3 MB) fails both the same way, whatever
 * route it hits first.
 *
 * Expected answers come from the SPEC's rules and independent facts (FIPS 180-2's SHA-256 of "abc",
 * ISO 3166's France), not from this server's own output.
 */
import { expect } from 'bun:test'

export interface RequestCheck {
  name: string
  method: string
  path: string
  form?: 'bare' | 'enveloped'
  /** Omitted headers: the key is sent. `key: false` sends none. */
  key?: boolean
  contentType?: string
  body?: () => string
  check(res: Response, body: any): void
}

const PROBLEM_MEMBERS = ['type', 'title', 'status', 'detail', 'instance', 'request_id']

/** A complete RFC 9457 problem with our members, in Form B as the body and in Form A under `error`. */
function problem(body: any, form: 'bare' | 'enveloped', status: number, field?: string) {
  const p = form === 'bare' ? body : body.error
  if (form === 'enveloped') expect({ status: body.status, data: body.data }).toEqual({ status: 'error', data: null })
  for (const m of PROBLEM_MEMBERS) expect(p[m], m).toBeDefined()
  expect(p.status).toBe(status)
  expect(p.type).toStartWith('urn:almanac:problem:')
  if (field) expect(p.errors.map((e: { field: string }) => e.field)).toContain(field)
  return p
}

const bounds = (path: string, field: string): RequestCheck[] =>
  (['bare', 'enveloped'] as const).map((form) => ({
    name: `${path} is refused naming ${field} (${form})`,
    method: 'GET',
    path,
    form,
    check: (res, body) => {
      expect(res.status).toBe(422)
      problem(body, form, 422, field)
    },
  }))

export const REQUEST_CHECKS: RequestCheck[] = [
  // Range checks on query integers: the class of bug the executable once had.
  ...bounds('/api/v1/postal/US/codes?limit=100000', 'limit'),
  ...bounds('/api/v1/countries?limit=0', 'limit'),
  ...bounds('/api/v1/countries?limit=1001', 'limit'),
  ...bounds('/api/v1/countries?offset=-1', 'offset'),
  ...bounds('/api/v1/countries?limit=1.5', 'limit'),
  ...bounds('/api/v1/countries?limit=abc', 'limit'),
  {
    name: 'paging within bounds answers that page',
    method: 'GET',
    path: '/api/v1/countries?limit=2&offset=1',
    form: 'bare',
    check: (res, body) => {
      expect(res.status).toBe(200)
      expect(JSON.stringify(body).length).toBeLessThan(20_000)
      const items = Array.isArray(body) ? body : (body.results ?? body.data)
      expect(items).toHaveLength(2)
    },
  },
  {
    name: 'a method a path does not answer is 405 with Allow',
    method: 'DELETE',
    path: '/api/v1/countries/FR',
    form: 'bare',
    check: (res, body) => {
      expect(res.status).toBe(405)
      expect(res.headers.get('allow')).toBe('GET')
      problem(body, 'bare', 405)
    },
  },
  {
    name: 'a body over the limit is 413 before it is parsed',
    method: 'POST',
    path: '/api/v1/countries/validate',
    form: 'enveloped',
    contentType: 'application/json',
    body: () => JSON.stringify({ codes: Array.from({ length: 200_000 }, () => 'FRA') }),
    check: (res, body) => {
      expect(res.status).toBe(413)
      problem(body, 'enveloped', 413)
    },
  },
  {
    name: 'malformed JSON is 400',
    method: 'POST',
    path: '/api/v1/countries/validate',
    form: 'bare',
    contentType: 'application/json',
    body: () => '{"codes":',
    check: (res, body) => {
      expect(res.status).toBe(400)
      problem(body, 'bare', 400)
    },
  },
  {
    name: 'fields selects members (Form B)',
    method: 'GET',
    path: '/api/v1/countries/FR?fields=name',
    form: 'bare',
    check: (res, body) => {
      expect(res.status).toBe(200)
      expect(body).toEqual({ name: 'France' })
    },
  },
  {
    name: 'fields selects members (Form A, in the envelope)',
    method: 'GET',
    path: '/api/v1/countries/FR?fields=name',
    form: 'enveloped',
    check: (res, body) => {
      expect(res.status).toBe(200)
      expect(body).toEqual({ status: 'ok', data: { name: 'France' }, error: null })
      expect(res.headers.get('vary')).toContain('X-Response-Form')
    },
  },
  {
    name: 'an unknown field is refused naming fields',
    method: 'GET',
    path: '/api/v1/countries/FR?fields=nosuch',
    form: 'bare',
    check: (res, body) => {
      expect(res.status).toBe(400)
      problem(body, 'bare', 400, 'fields')
    },
  },
  ...(['bare', 'enveloped'] as const).map(
    (form): RequestCheck => ({
      name: `a JSON body is parsed and answered (${form})`,
      method: 'POST',
      path: '/api/v1/hash/sha256',
      form,
      contentType: 'application/json',
      body: () => JSON.stringify({ input: 'abc' }),
      check: (res, body) => {
        expect(res.status).toBe(200)
        expect(JSON.stringify(body)).toContain('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
        if (form === 'enveloped') expect(body.status).toBe('ok')
        expect(Number(res.headers.get('x-quota-remaining'))).toBeGreaterThan(0)
      },
    }),
  ),
  ...(['bare', 'enveloped'] as const).map(
    (form): RequestCheck => ({
      name: `an unknown resource is a complete 404 problem (${form})`,
      method: 'GET',
      path: '/api/v1/countries/XX',
      form,
      check: (res, body) => {
        expect(res.status).toBe(404)
        const p = problem(body, form, 404)
        expect(p.instance).toBe('/api/v1/countries/XX')
        expect(p.request_id).toBe(res.headers.get('x-request-id'))
      },
    }),
  ),
  {
    name: 'no key is 401 with a challenge',
    method: 'GET',
    path: '/api/v1/countries/FR',
    form: 'bare',
    key: false,
    check: (res, body) => {
      expect(res.status).toBe(401)
      expect(res.headers.get('www-authenticate')).toContain('ApiKey')
      problem(body, 'bare', 401)
    },
  },
  {
    name: 'an unknown path under /api/v1 is 404',
    method: 'GET',
    path: '/api/v1/no-such-thing',
    form: 'bare',
    check: (res, body) => {
      expect(res.status).toBe(404)
      problem(body, 'bare', 404)
    },
  },
]

/** Sends one check to the server at `base` with `key`; the answer is checked by the caller's expect. */
export async function sendCheck(base: string, key: string, c: RequestCheck): Promise<{ res: Response; body: any }> {
  const headers: Record<string, string> = { 'x-response-form': c.form ?? 'enveloped' }
  if (c.key !== false) headers['x-api-key'] = key
  if (c.contentType) headers['content-type'] = c.contentType
  const res = await fetch(base + c.path, { method: c.method, headers, body: c.body?.() })
  const text = await res.text()
  let body: unknown = null
  try {
    body = text ? JSON.parse(text) : null
  } catch {
    throw new Error(`${c.method} ${c.path}: not JSON (${res.status}): ${text.slice(0, 200)}`)
  }
  return { res, body }
}
