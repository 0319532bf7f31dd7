/**
 * A body whose length is declared is read without its ReadableStream (issue 24). Bun builds that stream the
 * first time `request.body` is read, and a body read after that costs ~4 µs more a POST (bench/bun-floor.ts).
 * Elysia's composed handler read the getter to decide whether to parse; it now asks the headers first
 * (patches/elysia@1.4.30.patch), as the body reader does (admission.ts `hasBody`). In process, requests here
 * count their getter's reads (a Request subclass). Over a real socket, where Bun decides what a body is,
 * the answers to an empty, a missing, a declared and a chunked body are checked against each other.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import hash from '../../src/domains/hash/index.ts'
import ua from '../../src/domains/ua/index.ts'
import { testApp, TEST_KEY, type TestApp } from '../support/app.ts'
import { rawRequest } from '../support/raw-http.ts'
import { liveServer, type LiveServer } from './helpers.ts'

/** A Request that counts how often its body stream is asked for. */
class CountingRequest extends Request {
  bodyReads = 0
}
Object.defineProperty(CountingRequest.prototype, 'body', {
  get(this: CountingRequest) {
    this.bodyReads++
    return Reflect.get(Request.prototype, 'body', this)
  },
})

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0'
const BODIES: [name: string, path: string, body: unknown][] = [
  ['POST /api/v1/ua', '/api/v1/ua', { ua: FIREFOX }],
  ['POST /api/v1/ua with hints', '/api/v1/ua', { ua: FIREFOX, headers: { 'sec-ch-ua-platform': '"Linux"' } }],
  ['POST /api/v1/ua/bulk', '/api/v1/ua/bulk', { ua_list: [FIREFOX, 'curl/8.5.0'] }],
  ['POST /api/v1/hash/sha256', '/api/v1/hash/sha256', { input: 'abc' }],
]

let app: TestApp
let server: LiveServer
beforeAll(async () => {
  app = await testApp({ domains: [ua, hash] })
  server = await liveServer({ domains: [ua, hash] })
})
afterAll(async () => {
  await app.close()
  server.stop()
})

const counted = (path: string, text: string, headers: Record<string, string>) =>
  new CountingRequest(`http://localhost${path}`, {
    method: 'POST',
    headers: { 'x-api-key': TEST_KEY, 'content-type': 'application/json', ...headers },
    body: text,
  })

describe('in process', () => {
  for (const [name, path, body] of BODIES) {
    test(`${name} with a Content-Length: answered as a plain request is, its body stream never built`, async () => {
      const text = JSON.stringify(body)
      const request = counted(path, text, { 'content-length': String(Buffer.byteLength(text)) })
      const res = await app.handle(request)
      // The same request through the plain path (a Request whose body has no declared length).
      const plain = await app.json('POST', path, { body })
      expect(plain.status).toBe(200)
      expect({ status: res.status, data: ((await res.json()) as { data: unknown }).data }).toEqual({ status: 200, data: plain.body.data })
      expect(request.bodyReads).toBe(0)
    })
  }

  test('a body without a Content-Length is still found through its stream, and read', async () => {
    const request = counted('/api/v1/ua', JSON.stringify({ ua: FIREFOX }), {})
    const res = await app.handle(request)
    expect(res.status).toBe(200)
    expect(((await res.json()) as { data: { client: { name: string } } }).data.client.name).toBe('Firefox')
    expect(request.bodyReads).toBeGreaterThan(0)
  })
})

describe('over a socket', () => {
  const post = (path: string, lines: string[], body = '') =>
    rawRequest(
      server.port,
      [`POST ${path} HTTP/1.1`, 'Host: localhost', `X-API-Key: ${TEST_KEY}`, 'Content-Type: application/json', ...lines].join('\r\n'),
      body,
    )
  const problem = (a: { status: number; body: string }) => {
    const p = JSON.parse(a.body).error
    return { status: a.status, type: p.type, detail: p.detail }
  }
  const chunked = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n0\r\n\r\n`

  for (const [name, path, body] of BODIES) {
    test(`${name}: a declared body and a chunked one are answered alike`, async () => {
      const text = JSON.stringify(body)
      const declared = await post(path, [`Content-Length: ${Buffer.byteLength(text)}`], text)
      const streamed = await post(path, ['Transfer-Encoding: chunked'], chunked(text))
      expect(declared.status).toBe(200)
      expect(JSON.parse(streamed.body).data).toEqual(JSON.parse(declared.body).data)
    })

    test(`${name}: Content-Length: 0 is a missing body, answered as one with no length at all`, async () => {
      const none = problem(await post(path, []))
      expect(none.status).toBe(422)
      expect(problem(await post(path, ['Content-Length: 0']))).toEqual(none)
    })
  }
})
