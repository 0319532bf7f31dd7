/**
 * Single requests that used to hurt the whole process, each answered now with a problem naming what is
 * wrong: deeply nested or huge JSON, oversized `fields`, and floods of distinct paths or selections that
 * grew the caches without bound.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import countries from '../../src/domains/countries/index.ts'
import hash from '../../src/domains/hash/index.ts'
import ip from '../../src/domains/ip/index.ts'
import { JSON_LIMITS } from '../../src/http/admission/json-shape.ts'
import { FIELDS_LIMITS } from '../../src/http/reply/reply.ts'
import { testApp, type TestApp } from '../support/app.ts'

let app: TestApp
beforeAll(async () => {
  app = await testApp({ domains: [hash, countries, ip] })
})
afterAll(() => app.close())

const nested = (depth: number, open: string, close: string, inner = '1') => open.repeat(depth) + inner + close.repeat(depth)

describe('JSON bodies are limited in depth and size before validation', () => {
  const cases: [string, string, string][] = [
    ['/api/v1/hash/md5', 'input', nested(10_000, '[', ']')],
    ['/api/v1/hash/md5', 'input', nested(10_000, '{"a":', '}')],
    // 10 KB: under these routes' 16 KiB body limit (admission.ts), so the depth check is what refuses it.
    ['/api/v1/ip', 'ip', nested(5_000, '[', ']')],
    ['/api/v1/ip/bulk', 'ips', nested(5_000, '[', ']')],
    ['/api/v1/countries/validate', 'codes', nested(10_000, '[', ']')],
  ]
  for (const [path, member, value] of cases) {
    test(`${path}: ${member} nested ${value.slice(0, 5)}… thousands deep is a 400 naming the depth`, async () => {
      const res = await app.json('POST', path, { body: `{"${member}":${value}}`, form: 'bare' })
      expect(res.status).toBe(400)
      expect(res.body.detail).toContain(`deeper than ${JSON_LIMITS.depth} levels`)
      expect(res.headers.get('content-type')).toBe('application/json')
    })
  }

  test('depth up to the limit passes on to the schema (a 422 naming the member)', async () => {
    const res = await app.json('POST', '/api/v1/hash/md5', { body: `{"input":${nested(JSON_LIMITS.depth - 1, '[', ']')}}`, form: 'bare' })
    expect(res.status).toBe(422)
    expect(res.body.errors[0].field).toBe('input')
  })

  test('more values than the limit is a 400; brackets inside strings do not count', async () => {
    // 100 KB: a route whose body limit holds it (hash input), so the value count is what refuses it.
    const wide = await app.json('POST', '/api/v1/hash/md5', { body: `{"input":[${'0,'.repeat(JSON_LIMITS.values)}0]}`, form: 'bare' })
    expect(wide.status).toBe(400)
    expect(wide.body.detail).toContain(`more than ${JSON_LIMITS.values} values`)
    const quoted = await app.json('POST', '/api/v1/hash/md5', {
      body: JSON.stringify({ input: '[{'.repeat(5000) + ',\\"'.repeat(100) }),
      form: 'bare',
    })
    expect(quoted.status).toBe(200)
  })

  test('member names that break string conversion or pollute merges are a 422 naming where (an own toString gave a 500)', async () => {
    for (const [body, field] of [
      ['{"input":{"toString":"x"}}', 'input.toString'],
      ['{"input":{"\\u0074oString":"x"}}', 'input.toString'],
      ['{"input":"abc","__proto__":{"polluted":true}}', '__proto__'],
      ['{"ips":["8.8.8.8",{"valueOf":1}]}', 'ips.1.valueOf'],
    ] as const) {
      const path = field.startsWith('ips') ? '/api/v1/ip/bulk' : '/api/v1/hash/md5'
      const res = await app.json('POST', path, { body, form: 'bare' })
      expect({ body, status: res.status, fields: res.body.errors?.map((e: any) => e.field) }).toEqual({
        body,
        status: 422,
        fields: [field],
      })
    }
    expect(({} as any).polluted).toBeUndefined()
  })

  test('validation problems never carry the offending value', async () => {
    const secret = 'do-not-echo-' + 'x'.repeat(2000)
    const res = await app.json('POST', '/api/v1/hash/md5', { body: { input: [secret] }, form: 'bare' })
    expect(res.status).toBe(422)
    expect(JSON.stringify(res.body)).not.toContain('do-not-echo')
  })
})

describe('fields is limited in length, names and depth', () => {
  test('over each limit: a problem naming fields', async () => {
    const long = 'name,'.repeat(FIELDS_LIMITS.length)
    const many = Array.from({ length: FIELDS_LIMITS.names + 1 }, (_, i) => `f${i}`).join(',')
    const deep = Array.from({ length: FIELDS_LIMITS.depth + 1 }, () => 'a').join('.')
    for (const fields of [long, many, deep]) {
      const res = await app.json('GET', `/api/v1/countries/FR?fields=${encodeURIComponent(fields)}`, { form: 'bare' })
      expect({ fields: fields.slice(0, 20), status: res.status >= 400 && res.status < 500 }).toEqual({
        fields: fields.slice(0, 20),
        status: true,
      })
      expect(res.body.errors.map((e: any) => e.field)).toContain('fields')
    }
  })

  test('within the limits, selections still work', async () => {
    const res = await app.json('GET', '/api/v1/countries/FR?fields=alpha3,name', { form: 'bare' })
    expect(res.body).toEqual({ alpha3: 'FRA', name: 'France' })
  })
})

test('answers and problems under /api/v1 say they vary with X-Response-Form', async () => {
  for (const path of ['/api/v1/countries/FR', '/api/v1/countries/XX', '/api/v1/nowhere']) {
    const res = await app.request('GET', path)
    expect({ path, vary: res.headers.get('vary'), type: res.headers.get('content-type') }).toEqual({
      path,
      vary: 'X-Response-Form, Accept-Encoding',
      type: 'application/json',
    })
    await res.arrayBuffer()
  }
})

/** Heap in use after a full collection, in bytes. */
const heapAfterGc = () => {
  Bun.gc(true)
  return process.memoryUsage().heapUsed
}

describe('floods of distinct client text do not grow memory', () => {
  test('9,000 unauthenticated requests for distinct 16 KB paths (+122 MB before the route cache was keyed by shape)', async () => {
    const before = heapAfterGc()
    for (let i = 0; i < 9000; i++) {
      const res = await app.request('GET', `/api/v1/countries/${i}${'x'.repeat(16_000)}`, { key: null })
      await res.arrayBuffer()
    }
    expect((heapAfterGc() - before) / 2 ** 20).toBeLessThan(16)
  })

  test('300 requests with distinct 1 KB fields selections (+540 MB before fields was limited)', async () => {
    const before = heapAfterGc()
    for (let i = 0; i < 300; i++) {
      const fields = `${i},` + Array.from({ length: 60 }, (_, j) => `n${j}.a`).join(',')
      const res = await app.request('GET', `/api/v1/countries/FR?fields=${fields.slice(0, FIELDS_LIMITS.length)}`)
      await res.arrayBuffer()
    }
    expect((heapAfterGc() - before) / 2 ** 20).toBeLessThan(16)
  })
})
