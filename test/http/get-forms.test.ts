/**
 * GET forms beside the SPEC's POSTs (issue 25): GET /ip/{ip} answers exactly what POST /ip answers, GET /ua
 * parses the caller's own User-Agent and Client Hints exactly as POST /ua parses them in a body; both in
 * both forms, at the same quota, documented in OpenAPI. The literal routes /ip/me and /ip/bulk keep
 * precedence over /ip/{ip}. The POST answers are the oracle for the GET ones.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { serve, type Running } from '../../src/serve.ts'
import { TEST_KEY, type TestApp, testApp, testConfig } from '../support/app.ts'
import { tempDirs } from '../support/temp.ts'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
})
afterAll(() => app.close())

const FORMS = ['enveloped', 'bare'] as const
const remaining = (res: { headers: Headers }) => Number(res.headers.get('x-quota-remaining'))

describe('GET /api/v1/ip/{ip}', () => {
  for (const form of FORMS)
    test(`the same record as POST /ip, one credit, fields applied (${form})`, async () => {
      for (const ip of ['8.8.8.8', '2001:4860:4860::8888', '::ffff:81.2.69.142', '10.1.2.3']) {
        const posted = await app.json('POST', '/api/v1/ip', { body: { ip }, form })
        const got = await app.json('GET', `/api/v1/ip/${ip}`, { form })
        expect(got.status).toBe(200)
        expect(got.body).toEqual(posted.body)
        expect(remaining(posted) - remaining(got)).toBe(1)
      }
      const trimmed = await app.json('GET', '/api/v1/ip/8.8.8.8?fields=ip', { form })
      expect(form === 'bare' ? trimmed.body : trimmed.body.data).toEqual({ ip: '8.8.8.8' })
    })

  for (const form of FORMS)
    test(`a bad address is the 422 POST /ip gives, naming ip, in the path (${form})`, async () => {
      const posted = await app.json('POST', '/api/v1/ip', { body: { ip: 'not-an-ip' }, form })
      const got = await app.json('GET', '/api/v1/ip/not-an-ip', { form })
      expect(got.status).toBe(422)
      expect(posted.status).toBe(422)
      const problem = (r: any) => (form === 'bare' ? r : r.error)
      // The same field and message, placed where each route takes the address (issue 45: GET said body).
      expect(problem(got.body).errors).toEqual(problem(posted.body).errors.map((e: any) => ({ ...e, in: 'path' })))
      expect(problem(posted.body).errors.map((e: any) => e.in)).toEqual(['body'])
      expect(JSON.stringify(problem(got.body).errors)).toContain('"ip"')
    })

  test('GET /ip/bulk stays a 405 naming POST, and costs nothing', async () => {
    const before = await app.json('GET', '/api/v1/ip/8.8.8.8')
    const res = await app.json('GET', '/api/v1/ip/bulk')
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toBe('POST')
    const after = await app.json('GET', '/api/v1/ip/8.8.8.8')
    expect(remaining(before) - remaining(after)).toBe(1)
    // POST /ip/bulk is still the bulk route, charged per item.
    const bulk = await app.json('POST', '/api/v1/ip/bulk', { body: { ips: ['8.8.8.8', '1.1.1.1'] } })
    expect(bulk.status).toBe(200)
    expect(bulk.body.data.length).toBe(2)
    expect(remaining(after) - remaining(bulk)).toBe(2)
  })
})

describe('GET /api/v1/ua', () => {
  const CHROME = 'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36'
  const HINTS = {
    'Sec-CH-UA': '"Chromium";v="120", "Google Chrome";v="120"',
    'Sec-CH-UA-Mobile': '?1',
    'Sec-CH-UA-Platform': '"Android"',
    'Sec-CH-UA-Platform-Version': '"14.0.0"',
    'Sec-CH-UA-Model': '"Pixel 8"',
  }

  for (const form of FORMS)
    test(`the caller's own User-Agent and Client Hints, parsed as POST /ua parses them (${form})`, async () => {
      const plainPost = await app.json('POST', '/api/v1/ua', { body: { ua: CHROME }, form })
      const plainGet = await app.json('GET', '/api/v1/ua', { headers: { 'user-agent': CHROME }, form })
      expect(plainGet.status).toBe(200)
      expect(plainGet.body).toEqual(plainPost.body)
      expect(remaining(plainPost) - remaining(plainGet)).toBe(1)

      const hintedPost = await app.json('POST', '/api/v1/ua', { body: { ua: CHROME, headers: HINTS }, form })
      const hintedGet = await app.json('GET', '/api/v1/ua', { headers: { 'user-agent': CHROME, ...HINTS }, form })
      expect(hintedGet.body).toEqual(hintedPost.body)
      // The hints changed the answer (the Pixel 8 model comes only from Sec-CH-UA-Model).
      expect(hintedGet.body).not.toEqual(plainGet.body)
      expect(x(hintedGet.body, form).device.model).toBe('Pixel 8')

      const trimmed = await app.json('GET', '/api/v1/ua?fields=tampered', { headers: { 'user-agent': 'curl/8.5.0' }, form })
      expect(x(trimmed.body, form)).toEqual({ tampered: false })
    })

  const x = (body: any, form: string) => (form === 'bare' ? body : body.data)

  for (const form of FORMS)
    test(`a bad header is a 422 naming it; no User-Agent at all is a 422 that says how to parse another (${form})`, async () => {
      const bad = await app.json('GET', '/api/v1/ua', { headers: { 'user-agent': CHROME, 'sec-ch-ua-mobile': 'yes' }, form })
      expect(bad.status).toBe(422)
      const problem = (r: any) => (form === 'bare' ? r : r.error)
      expect(problem(bad.body).errors[0].field).toBe('header.Sec-CH-UA-Mobile')
      // A Request built in process carries no User-Agent unless given one.
      const none = await app.handle(
        new Request('http://localhost/api/v1/ua', { headers: { 'x-api-key': TEST_KEY, 'x-response-form': form } }),
      )
      expect(none.status).toBe(422)
      const body = problem(await none.json())
      expect(body.errors[0].field).toBe('header.User-Agent')
      expect(body.errors[0].message).toContain('POST /api/v1/ua')
    })
})

describe('OpenAPI', () => {
  test('both GET forms are documented with their response schemas in both forms', async () => {
    const doc = (await (await app.handle(new Request('http://localhost/openapi.json'))).json()) as any
    // The same response schemas (both forms) as the POST each mirrors.
    for (const [path, twin] of [
      ['/api/v1/ip/{ip}', '/api/v1/ip'],
      ['/api/v1/ua', '/api/v1/ua'],
    ]) {
      const op = doc.paths[path!]?.get
      expect({ path, documented: !!op }).toEqual({ path, documented: true })
      const schema = op.responses['200'].content['application/json'].schema
      expect(JSON.stringify(schema).length).toBeGreaterThan(100)
      expect(schema).toEqual(doc.paths[twin!].post.responses['200'].content['application/json'].schema)
    }
    expect(doc.paths['/api/v1/ip/{ip}'].get.parameters.some((p: any) => p.in === 'path' && p.name === 'ip')).toBe(true)
    // The POSTs and the literal GET are still there.
    expect(doc.paths['/api/v1/ip/me'].get).toBeDefined()
    expect(doc.paths['/api/v1/ua'].post).toBeDefined()
  })
})

describe('over a real socket', () => {
  const tempDir = tempDirs('almanac-getforms-')
  let running: Running
  beforeAll(async () => {
    running = await serve(testConfig({ ALMANAC_STATE_DIR: tempDir(), PORT: '0', ALMANAC_HOST: '127.0.0.1' }), () => {})
  })
  afterAll(() => running.stop())

  test('/ip/me is still the caller (literal before parameter); GET /ua reads what the client really sent', async () => {
    const me = await fetch(`${running.url}/api/v1/ip/me`, { headers: { 'x-api-key': TEST_KEY, 'x-response-form': 'bare' } })
    expect(me.status).toBe(200)
    expect(((await me.json()) as any).ip).toBe('127.0.0.1')
    const ua = await fetch(`${running.url}/api/v1/ua`, { headers: { 'x-api-key': TEST_KEY, 'x-response-form': 'bare' } })
    expect(ua.status).toBe(200)
    // Bun's fetch sends `Bun/<version>`: the parse carries it back.
    const own = await fetch(`${running.url}/api/v1/ua`, {
      method: 'POST',
      headers: { 'x-api-key': TEST_KEY, 'x-response-form': 'bare', 'content-type': 'application/json' },
      body: JSON.stringify({ ua: `Bun/${Bun.version}` }),
    })
    expect(await ua.json()).toEqual(await own.json())
  })
})
