/**
 * Content coding (issue 25, "HTTP conventions"): text answers above MIN_BYTES are compressed as the
 * caller's Accept-Encoding allows (q-values, identity;q=0), say Vary: Accept-Encoding, carry a weak ETag
 * when compressed; 304s, small answers and images are not. The decoded bytes are checked against the
 * identity answer by node:zlib (an independent decoder), in both response forms.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import zlib from 'node:zlib'
import { bestFormsKept, forgetKeptForms, MIN_BYTES, negotiate } from '../../src/http/edge/compression.ts'
import { serve, type Running } from '../../src/serve.ts'
import { TEST_KEY, type TestApp, testApp, testConfig } from '../support/app.ts'
import { tempDirs } from '../support/temp.ts'

let app: TestApp
beforeAll(async () => {
  app = await testApp()
})
afterAll(() => app.close())

const LIST = '/api/v1/countries?limit=250'
const SMALL = '/api/v1/countries/FR?fields=name'

const get = (path: string, headers: Record<string, string> = {}, form?: 'enveloped' | 'bare') => app.request('GET', path, { headers, form })

const decode = (coding: string | null, bytes: Buffer): string => {
  if (coding === 'gzip') return zlib.gunzipSync(bytes).toString()
  if (coding === 'br') return zlib.brotliDecompressSync(bytes).toString()
  return bytes.toString()
}
const bodyOf = async (res: Response) => Buffer.from(await res.arrayBuffer())

describe('negotiation through HTTP', () => {
  for (const form of ['enveloped', 'bare'] as const)
    test(`a large list is compressed as asked, decodes to the identity bytes (${form})`, async () => {
      const plain = await get(LIST, {}, form)
      expect(plain.headers.get('content-encoding')).toBeNull()
      expect(plain.headers.get('vary')).toBe('X-Response-Form, Accept-Encoding')
      const identity = (await bodyOf(plain)).toString()
      expect(identity.length).toBeGreaterThan(MIN_BYTES * 10)
      for (const [accept, coding] of [
        ['gzip, br', 'gzip'], // equal q: gzip, cheaper per KB for answers made per request
        ['br', 'br'],
        ['gzip;q=0.5, br', 'br'],
        ['br;q=0, gzip', 'gzip'],
        ['x-gzip', 'gzip'],
        ['*', 'gzip'],
        ['BR;Q=1', 'br'],
      ] as const) {
        const res = await get(LIST, { 'accept-encoding': accept }, form)
        expect({ accept, coding: res.headers.get('content-encoding') }).toEqual({ accept, coding })
        expect(res.headers.get('vary')).toBe('X-Response-Form, Accept-Encoding')
        const bytes = await bodyOf(res)
        expect(bytes.length).toBeLessThan(identity.length / 3)
        expect(decode(coding, bytes)).toBe(identity)
      }
    })

  test('codings refused or liked less than identity are not used', async () => {
    for (const accept of [
      '',
      'gzip;q=0',
      'gzip;q=0, br;q=0',
      'compress, deflate',
      'gzip;q=0.2, identity;q=0.5',
      '*;q=0, identity',
      'gzip;q=2',
    ])
      expect({ accept, coding: (await get(LIST, { 'accept-encoding': accept })).headers.get('content-encoding') }).toEqual({
        accept,
        coding: null,
      })
  })

  test('a small answer goes out as it is, unless identity is refused', async () => {
    for (const form of ['enveloped', 'bare'] as const) {
      const small = await get(SMALL, { 'accept-encoding': 'gzip, br' }, form)
      expect(small.headers.get('content-encoding')).toBeNull()
      expect(small.headers.get('vary')).toBe('X-Response-Form, Accept-Encoding')
      const identity = (await bodyOf(small)).toString()
      expect(identity.length).toBeLessThan(MIN_BYTES)
      for (const accept of ['gzip, identity;q=0', 'gzip, *;q=0']) {
        const refused = await get(SMALL, { 'accept-encoding': accept }, form)
        expect(refused.headers.get('content-encoding')).toBe('gzip')
        expect(decode('gzip', await bodyOf(refused))).toBe(identity)
      }
    }
  })

  test('problems are declared bodies too: small ones go out as they are unless identity is refused', async () => {
    for (const form of ['enveloped', 'bare'] as const) {
      const small = await get('/api/v1/countries/XX', { 'accept-encoding': 'gzip' }, form)
      expect(small.status).toBe(404)
      expect(small.headers.get('content-encoding')).toBeNull()
      const identity = (await bodyOf(small)).toString()
      const refused = await get('/api/v1/countries/XX', { 'accept-encoding': 'br, identity;q=0' }, form)
      expect(refused.status).toBe(404)
      expect(refused.headers.get('content-encoding')).toBe('br')
      // Only the request id differs between the two problems.
      const strip = (text: string) => text.replace(/"request_id":"[^"]+"/, '')
      expect(strip(decode('br', await bodyOf(refused)))).toBe(strip(identity))
    }
  })
})

describe('ETags of compressed answers (RFC 9110 section 8.8.3)', () => {
  test('a compressed 200 has a weak ETag; both ETags revalidate; a 304 is never compressed', async () => {
    const path = '/api/v1/countries/FR'
    const plain = await get(path)
    const strong = plain.headers.get('etag')!
    expect(strong).toMatch(/^"/)
    const packed = await get(path, { 'accept-encoding': 'gzip' })
    expect(packed.headers.get('content-encoding')).toBe('gzip')
    expect(packed.headers.get('etag')).toBe(`W/${strong}`)
    expect(decode('gzip', await bodyOf(packed))).toBe((await bodyOf(plain)).toString())

    for (const inm of [`W/${strong}`, strong]) {
      const again = await get(path, { 'accept-encoding': 'gzip', 'if-none-match': inm })
      expect(again.status).toBe(304)
      expect(again.headers.get('content-encoding')).toBeNull()
      expect(again.headers.get('etag')).toBe(`W/${strong}`)
      expect((await bodyOf(again)).length).toBe(0)
      // A caller without compression revalidates with what it has and gets the strong one back.
      const identity = await get(path, { 'if-none-match': inm })
      expect(identity.status).toBe(304)
      expect(identity.headers.get('etag')).toBe(strong)
    }
  })
})

describe('static assets: compressed once, brotli preferred', () => {
  test('/openapi.json and the Swagger bundle in br and gzip decode to the identity bytes; the PNG is never compressed', async () => {
    forgetKeptForms() // kept per process: another test file may have asked for these assets already
    for (const path of ['/openapi.json', '/docs/swagger-ui-bundle.js', '/docs/swagger-ui.css']) {
      const identity = await bodyOf(await app.handle(new Request(`http://localhost${path}`)))
      for (const accept of ['gzip, br', 'br', 'gzip']) {
        const sizes: number[] = []
        for (let round = 0; round < 2; round++) {
          const res = await app.handle(new Request(`http://localhost${path}`, { headers: { 'accept-encoding': accept } }))
          const coding = res.headers.get('content-encoding')
          expect({ path, accept, coding }).toEqual({ path, accept, coding: accept === 'gzip' ? 'gzip' : 'br' })
          expect(res.headers.get('vary')).toBe('Accept-Encoding')
          const bytes = await bodyOf(res)
          expect(bytes.length).toBeLessThan(identity.length / 3)
          expect(decode(coding, bytes) === identity.toString()).toBe(true)
          sizes.push(bytes.length)
          // The first caller got the quick form without waiting for the best one (seconds for the bundle);
          // once that is kept, the next caller gets it.
          await bestFormsKept()
        }
        // ('br' comes after 'gzip, br', whose brotli form is already kept.)
        if (accept !== 'br') expect({ path, accept, smaller: sizes[1]! < sizes[0]! }).toEqual({ path, accept, smaller: true })
      }
    }
    const png = await app.handle(
      new Request('http://localhost/docs/favicon.png', { headers: { 'accept-encoding': 'gzip, br, identity;q=0' } }),
    )
    expect(png.headers.get('content-encoding')).toBeNull()
    expect((await bodyOf(png)).subarray(1, 4).toString()).toBe('PNG')
  }, 60_000)
})

describe('negotiate()', () => {
  test('q-values, wildcards and malformed elements', () => {
    expect(negotiate(null)).toEqual({ identityRefused: false })
    expect(negotiate('gzip;q=0.001')).toEqual({ coding: 'gzip', identityRefused: false })
    expect(negotiate('gzip;q=1.5')).toEqual({ coding: undefined, identityRefused: false })
    expect(negotiate('identity;q=0')).toEqual({ coding: undefined, identityRefused: true })
    expect(negotiate('gzip, br', ['br', 'gzip']).coding).toBe('br')
    expect(negotiate(`gzip${' '.repeat(600)}`)).toEqual({ identityRefused: false })
  })
})

describe('over a real socket', () => {
  const tempDir = tempDirs('almanac-gzip-')
  let running: Running
  beforeAll(async () => {
    running = await serve(testConfig({ ALMANAC_STATE_DIR: tempDir(), PORT: '0', ALMANAC_HOST: '127.0.0.1' }), () => {})
  })
  afterAll(() => running.stop())

  test("the bytes on the wire are gzip, with a Content-Length that matches them (Bun's client left to decode nothing)", async () => {
    const res = await fetch(`${running.url}${LIST}`, {
      headers: { 'x-api-key': TEST_KEY, 'accept-encoding': 'gzip' },
      decompress: false,
    } as RequestInit)
    expect(res.headers.get('content-encoding')).toBe('gzip')
    const bytes = await bodyOf(res)
    expect(Number(res.headers.get('content-length'))).toBe(bytes.length)
    expect(JSON.parse(decode('gzip', bytes)).data.length).toBeGreaterThan(200)
  })
})
