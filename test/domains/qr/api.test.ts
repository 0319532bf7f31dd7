/**
 * The QR routes as API: both response forms, `fields`, quota headers and cost, the OpenAPI document's
 * request and response schemas, and the public origin's rules for forwarding headers.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { publicOrigin } from '../../../src/domains/qr/origin.ts'
import { trustedProxies } from '../../../src/http/edge/client-ip.ts'
import { qrApp, type QrTestApp } from './harness.ts'

let app: QrTestApp
beforeAll(async () => {
  app = await qrApp()
})
afterAll(() => app.close())

const PRESETS = ['text', 'url', 'wifi', 'vcard', 'email', 'sms', 'geo']

describe('response forms', () => {
  test('Form B is the QR result; Form A wraps the same object in status/data/error', async () => {
    const bare = await app.json('POST', '/api/v1/qr/geo', { body: { latitude: 1, longitude: 2 }, form: 'bare' })
    const enveloped = await app.json('POST', '/api/v1/qr/geo', { body: { latitude: 1, longitude: 2 }, form: 'enveloped' })
    expect(Object.keys(bare.body).slice(0, 4)).toEqual(['url', 'format', 'expires', 'preset'])
    expect(enveloped.body).toEqual({ status: 'ok', data: bare.body, error: null })
    expect(bare.body).toMatchObject({ format: 'png', preset: 'geo', size: 400, error_correction: 'M', margin: 4 })
  })

  test('base64: data_uri, format, preset; no url or expires', async () => {
    const { body } = await app.json('POST', '/api/v1/qr/text', { body: { text: 'b64', format: 'base64' }, form: 'bare' })
    expect(Object.keys(body).slice(0, 3)).toEqual(['format', 'preset', 'data_uri'])
  })

  test('fields keeps only the named fields, in both forms; an unknown one is a 400 listing the valid ones', async () => {
    const bare = await app.json('POST', '/api/v1/qr/text?fields=url,expires', { body: { text: 'f' }, form: 'bare' })
    expect(Object.keys(bare.body)).toEqual(['url', 'expires'])
    const enveloped = await app.json('POST', '/api/v1/qr/text?fields=data_uri', {
      body: { text: 'f', format: 'base64' },
      form: 'enveloped',
    })
    expect(Object.keys(enveloped.body.data)).toEqual(['data_uri'])
    // `url` is a valid name even on a base64 answer, which has none.
    const none = await app.json('POST', '/api/v1/qr/text?fields=url', { body: { text: 'f', format: 'base64' }, form: 'bare' })
    expect([none.status, none.body]).toEqual([200, {}])
    const bad = await app.json('POST', '/api/v1/qr/text?fields=colour', { body: { text: 'f' }, form: 'bare' })
    expect(bad.status).toBe(400)
    expect(bad.body.valid_fields).toContain('data_uri')
  })

  test('quota headers on answers and problems; one credit a request; no API key is a 401', async () => {
    const ok = await app.json('POST', '/api/v1/qr/text', { body: { text: 'q' } })
    const left = Number(ok.headers.get('x-quota-remaining'))
    for (const h of ['x-quota-limit', 'x-quota-remaining', 'x-quota-reset']) expect(ok.headers.get(h)).toMatch(/^\d+$/)
    const bad = await app.json('POST', '/api/v1/qr/text', { body: { text: '' } })
    expect(bad.status).toBe(422)
    expect(Number(bad.headers.get('x-quota-remaining'))).toBe(left - 1)
    expect((await app.json('POST', '/api/v1/qr/text', { body: { text: 'q' }, key: null })).status).toBe(401)
  })
})

describe('OpenAPI', () => {
  let paths: Record<string, any>
  beforeAll(async () => {
    paths = (await app.json('GET', '/openapi.json')).body.paths
  })

  test.each(PRESETS)('%s: request schema with the common parameters and their SPEC ranges, response in both forms', (preset) => {
    const op = paths[`/api/v1/qr/${preset}`].post
    const body = op.requestBody.content['application/json'].schema
    expect(body.properties.size).toMatchObject({ minimum: 100, maximum: 2000 })
    expect(body.properties.margin).toMatchObject({ minimum: 0, maximum: 20, default: 4 })
    expect(body.properties.ttl).toMatchObject({ minimum: 60, maximum: 2592000 })
    expect(body.properties.format.enum ?? body.properties.format.anyOf?.map((s: any) => s.const)).toEqual(['png', 'svg', 'base64'])
    expect(body.properties.fg_color.pattern).toBeDefined()
    const [formA, formB] = op.responses['200'].content['application/json'].schema.oneOf
    expect(formA.properties.data.properties.preset).toBeDefined()
    expect(formB.properties.url).toBeDefined()
    expect(formB.properties.data_uri).toBeDefined()
    expect(op.responses['200'].headers['X-Quota-Remaining']).toBeDefined()
  })

  test('required payload fields', () => {
    const required = (p: string) => paths[`/api/v1/qr/${p}`].post.requestBody.content['application/json'].schema.required
    expect(PRESETS.map(required)).toEqual([['text'], ['url'], ['ssid'], ['name'], ['to'], ['phone'], ['latitude', 'longitude']])
  })

  test('the download route is not an API operation', () => {
    expect(Object.keys(paths).filter((p) => p.includes('files'))).toEqual([])
  })
})

describe('public origin', () => {
  const trusted = trustedProxies(['127.0.0.1', '::1'])
  const req = (headers: Record<string, string>) => new Request('http://internal:8080/api/v1/qr/text', { headers })

  test('a trusted peer may set scheme and host by the header it is configured to send; the nearest hop wins', () => {
    const forwarded = 'for=1.2.3.4;proto=http;host=a.example, for=5.6.7.8;proto=https;host="b.example"'
    const both = { host: 'internal:8080', forwarded, 'x-forwarded-proto': 'http', 'x-forwarded-host': 'c.example' }
    expect(publicOrigin(req(both), '127.0.0.1', trustedProxies(['127.0.0.1'], 'forwarded'))).toBe('https://b.example')
    expect(publicOrigin(req(both), '127.0.0.1', trusted)).toBe('http://c.example')
    expect(publicOrigin(req({ host: 'internal:8080', forwarded }), '127.0.0.1', trusted)).toBe('http://internal:8080')
    expect(publicOrigin(req({ 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example, qr.example:444' }), '::1', trusted)).toBe(
      'https://qr.example:444',
    )
  })

  test('an untrusted peer cannot; nonsense hosts and schemes are ignored', () => {
    expect(publicOrigin(req({ 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example' }), '203.0.113.9', trusted)).toBe(
      'http://internal:8080',
    )
    expect(publicOrigin(req({ 'x-forwarded-proto': 'javascript', 'x-forwarded-host': 'a/b@c' }), '127.0.0.1', trusted)).toBe(
      'http://internal:8080',
    )
    expect(publicOrigin(req({ 'x-forwarded-host': 'x'.repeat(400) }), '127.0.0.1', trusted)).toBe('http://internal:8080')
  })

  test('ALMANAC_PUBLIC_URL beats everything', () => {
    expect(publicOrigin(req({ 'x-forwarded-host': 'b.example' }), '127.0.0.1', trusted, 'https://api.example.org')).toBe(
      'https://api.example.org',
    )
  })
})
