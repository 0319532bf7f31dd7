/**
 * Digests: published test vectors (FIPS 180 / RFC 1321 "abc" and the empty string), UTF-8 handling, the
 * 256 KB input limit counted in bytes, and problems that name `input`.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import hash from '../../../src/domains/hash/index.ts'
import { testApp, type TestApp } from '../../support/app.ts'
import { pythonJson } from '../../support/python.ts'

/** CPython's hashlib over the given bytes: an implementation independent of the server's BoringSSL. */
const hashlib = (algorithm: string, bytes: Uint8Array) =>
  pythonJson<string>(
    'import sys, json, hashlib\na, h = json.load(sys.stdin)\nprint(json.dumps(hashlib.new(a, bytes.fromhex(h)).hexdigest()))',
    [algorithm, Buffer.from(bytes).toString('hex')],
  )

let app: TestApp
beforeAll(async () => {
  app = await testApp({ domains: [hash] })
})
afterAll(() => app.close())

// RFC 1321 appendix A.5, FIPS 180-2 appendix examples.
const VECTORS = {
  md5: { '': 'd41d8cd98f00b204e9800998ecf8427e', abc: '900150983cd24fb0d6963f7d28e17f72' },
  sha1: { '': 'da39a3ee5e6b4b0d3255bfef95601890afd80709', abc: 'a9993e364706816aba3e25717850c26c9cd0d89d' },
  sha256: {
    '': 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    abc: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
  },
  sha512: {
    '': 'cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e',
    abc: 'ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f',
  },
} as const

describe('digests', () => {
  for (const [algorithm, vectors] of Object.entries(VECTORS)) {
    for (const [input, expected] of Object.entries(vectors)) {
      test(`${algorithm}(${JSON.stringify(input)}) in both forms`, async () => {
        const a = await app.json('POST', `/api/v1/hash/${algorithm}`, { body: { input }, form: 'enveloped' })
        expect(a.status).toBe(200)
        expect(a.body).toEqual({ status: 'ok', data: { algorithm, hash: expected }, error: null })
        const b = await app.json('POST', `/api/v1/hash/${algorithm}`, { body: { input }, form: 'bare' })
        expect(b.body).toEqual({ algorithm, hash: expected })
      })
    }
  }

  test('hashes the UTF-8 bytes of the input, lowercase hex, deterministically', async () => {
    const input = 'Grüße, 東京 🌍'
    for (const algorithm of ['md5', 'sha1', 'sha256', 'sha512'] as const) {
      const expected = hashlib(algorithm, new TextEncoder().encode(input))
      const first = await app.json('POST', `/api/v1/hash/${algorithm}`, { body: { input }, form: 'bare' })
      const second = await app.json('POST', `/api/v1/hash/${algorithm}`, { body: { input }, form: 'bare' })
      expect(first.body.hash).toBe(expected)
      expect(second.body.hash).toBe(first.body.hash)
      expect(first.body.hash).toMatch(/^[0-9a-f]+$/)
    }
  })

  test('a lone surrogate is hashed as U+FFFD (what UTF-8 encoders do)', async () => {
    const lone = await app.json('POST', '/api/v1/hash/sha256', { body: '{"input":"a\\ud800b"}', form: 'bare' })
    expect(lone.status).toBe(200)
    expect(lone.body.hash).toBe(hashlib('sha256', new Uint8Array([0x61, 0xef, 0xbf, 0xbd, 0x62])))
  })

  test('fields trims the result', async () => {
    const res = await app.json('POST', '/api/v1/hash/md5?fields=hash', { body: { input: 'abc' }, form: 'bare' })
    expect(res.body).toEqual({ hash: VECTORS.md5.abc })
  })

  test('input of exactly 262144 UTF-8 bytes is accepted; one byte more is 413 naming input', async () => {
    const atLimit = 'é'.repeat(131072) // 2 bytes each
    const ok = await app.json('POST', '/api/v1/hash/sha256', { body: { input: atLimit }, form: 'bare' })
    expect(ok.status).toBe(200)
    expect(ok.body.hash).toBe(hashlib('sha256', new TextEncoder().encode(atLimit)))

    // 131073 characters only, but 262145 bytes: the limit is on bytes.
    const over = await app.json('POST', '/api/v1/hash/sha256', { body: { input: atLimit + 'a' }, form: 'bare' })
    expect(over.status).toBe(413)
    expect(over.body.errors).toEqual([{ in: 'body', field: 'input', message: expect.stringContaining('262145 bytes') }])
    expect(over.body.detail).toContain('262144')
  })

  test('missing and non-string input are 422 naming input', async () => {
    for (const body of [{}, { input: 42 }, { input: null }, { input: ['a'] }, { text: 'abc' }]) {
      const res = await app.json('POST', '/api/v1/hash/sha1', { body, form: 'bare' })
      expect(res.status).toBe(422)
      expect(res.body.errors.map((e: any) => e.field)).toContain('input')
    }
  })

  test('a body that is not JSON is a 400, not a crash', async () => {
    const res = await app.json('POST', '/api/v1/hash/md5', {
      body: '{"input": ',
      headers: { 'content-type': 'application/json' },
      form: 'bare',
    })
    expect(res.status).toBe(400)
  })

  test('only POST is served', async () => {
    const res = await app.json('GET', '/api/v1/hash/sha512', { form: 'bare' })
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toBe('POST')
  })
})
