/**
 * Every SPEC range and payload limit at both edges, through the real app: the last accepted value is a
 * 200, the first refused one a 422 problem naming the field. Capacity overflows are 422 problems stating
 * the level's capacity, never a 500.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { zbar } from './decode.ts'
import { imageOf, qrApp, type QrTestApp } from './harness.ts'

let app: QrTestApp
beforeAll(async () => {
  app = await qrApp()
})
afterAll(() => app.close())

const post = (preset: string, body: unknown) => app.json('POST', `/api/v1/qr/${preset}`, { body, form: 'bare' })

/** 200, or the fields the 422 names. */
async function outcome(preset: string, body: Record<string, unknown>): Promise<number | string[]> {
  const { status, body: answer } = await post(preset, { format: 'base64', ...body })
  if (status === 200) return 200
  expect(status).toBe(422)
  expect(answer.type).toBe('urn:almanac:problem:invalid')
  return answer.errors.map((e: { field: string }) => e.field)
}

describe('common parameters', () => {
  test.each([
    ['size', 100, 99],
    ['size', 2000, 2001],
    ['margin', 0, -1],
    ['margin', 20, 21],
    ['ttl', 60, 59],
    ['ttl', 2592000, 2592001],
  ] as const)('%s: %p accepted, %p refused', async (name, ok, bad) => {
    const format = name === 'ttl' ? 'png' : 'base64'
    expect(await outcome('text', { text: 'a', format, [name]: ok })).toBe(200)
    expect(await outcome('text', { text: 'a', format, [name]: bad })).toEqual([name])
  })

  test('non-integers and wrong types are refused', async () => {
    expect(await outcome('text', { text: 'a', size: 400.5 })).toEqual(['size'])
    expect(await outcome('text', { text: 'a', margin: 'four' })).toEqual(['margin'])
    expect(await outcome('text', { text: 'a', format: 'gif' })).toEqual(['format'])
    expect(await outcome('text', { text: 'a', error_correction: 'X' })).toEqual(['error_correction'])
    expect(await outcome('text', { text: 'a', error_correction: 'm' })).toEqual(['error_correction'])
  })

  test.each(['#abc', '#ABC', '#a1B2c3', '#000000'])('colour %s accepted', async (c) => {
    expect(await outcome('text', { text: 'a', fg_color: c })).toBe(200)
  })
  test.each(['abc', '#abcd', '#12345', '#1234567', '#ggg', 'red', '', '#abc ', ' #abc'])('colour %p refused', async (c) => {
    expect(await outcome('text', { text: 'a', bg_color: c })).toEqual(['bg_color'])
  })
})

describe('payload limits', () => {
  test('text: 1 to 4296 characters; 4296 alphanumeric fit at L and decode', async () => {
    expect(await outcome('text', { text: '' })).toEqual(['text'])
    const text = 'HELLO WORLD $%*+-./:0123456789'.repeat(144).slice(0, 4296)
    const { status, body } = await post('text', { text, error_correction: 'L', format: 'png', size: 2000, margin: 4 })
    expect(status).toBe(200)
    expect(body.version).toBe(40)
    expect(zbar((await imageOf(app, body)).bytes)).toBe(text)
    expect(await outcome('text', { text: text + 'A', error_correction: 'L' })).toEqual(['text'])
  })

  test('capacity: 2953 bytes fit at L, 2954 are a 422 stating the capacity; the same text at H states H', async () => {
    expect(await outcome('text', { text: 'x'.repeat(2953), error_correction: 'L', size: 400 })).toBe(200)
    const over = await post('text', { text: 'x'.repeat(2954), error_correction: 'L' })
    expect(over.status).toBe(422)
    expect(over.body.capacity).toEqual({ error_correction: 'L', numeric: 7089, alphanumeric: 4296, bytes: 2953 })
    expect(over.body.detail).toContain('2953 bytes')
    expect(over.body.errors).toEqual([{ in: 'body', field: 'text', message: expect.stringContaining('level L') }])
    const atH = await post('text', { text: 'x'.repeat(1274), error_correction: 'H' })
    expect(atH.status).toBe(422)
    expect(atH.body.capacity).toEqual({ error_correction: 'H', numeric: 3057, alphanumeric: 1852, bytes: 1273 })
    expect(atH.body.detail).toContain('lower error_correction')
    expect(await outcome('text', { text: 'x'.repeat(1273), error_correction: 'H' })).toBe(200)
  })

  test('capacity counts UTF-8 bytes: 984 three-byte characters fit at L, 985 do not', async () => {
    expect(await outcome('text', { text: '€'.repeat(984), error_correction: 'L' })).toBe(200)
    const over = await post('text', { text: '€'.repeat(985), error_correction: 'L' })
    expect(over.status).toBe(422)
    expect(over.body.payload_bytes).toBe(2955)
  })

  test('digits: 7089 at L', async () => {
    expect(await outcome('text', { text: '7'.repeat(4296), error_correction: 'L' })).toBe(200)
  })

  test('url: 2048 characters, absolute, no spaces', async () => {
    const base = 'https://example.com/'
    expect(await outcome('url', { url: base + 'a'.repeat(2048 - base.length) })).toBe(200)
    expect(await outcome('url', { url: base + 'a'.repeat(2049 - base.length) })).toEqual(['url'])
    expect(await outcome('url', { url: '/relative/path' })).toEqual(['url'])
    expect(await outcome('url', { url: 'example.com' })).toEqual(['url'])
    expect(await outcome('url', { url: 'https://exa mple.com/' })).toEqual(['url'])
    expect(await outcome('url', { url: 'https://example.com/\n' })).toEqual(['url'])
    expect(await outcome('url', { url: 'https://' })).toEqual(['url'])
  })

  test('wifi: ssid 1-32 characters and 32 bytes; password 63; WPA 8+; WEP needs one; nopass none; neither given is open', async () => {
    expect(await outcome('wifi', { ssid: 's'.repeat(32), encryption: 'nopass' })).toBe(200)
    expect(await outcome('wifi', { ssid: 's'.repeat(33), encryption: 'nopass' })).toEqual(['ssid'])
    expect(await outcome('wifi', { ssid: '', encryption: 'nopass' })).toEqual(['ssid'])
    expect(await outcome('wifi', { ssid: 'é'.repeat(16), encryption: 'nopass' })).toBe(200)
    expect(await outcome('wifi', { ssid: 'é'.repeat(17), encryption: 'nopass' })).toEqual(['ssid'])
    expect(await outcome('wifi', { ssid: 'n', password: 'p'.repeat(63) })).toBe(200)
    expect(await outcome('wifi', { ssid: 'n', password: 'p'.repeat(64) })).toEqual(['password'])
    expect(await outcome('wifi', { ssid: 'n', password: 'p'.repeat(8) })).toBe(200)
    expect(await outcome('wifi', { ssid: 'n', password: 'p'.repeat(7) })).toEqual(['password'])
    expect(await outcome('wifi', { ssid: 'n' })).toBe(200) // an open network, with a warning (presets.test.ts)
    expect(await outcome('wifi', { ssid: 'n', encryption: 'WPA' })).toEqual(['password'])
    expect(await outcome('wifi', { ssid: 'n', encryption: 'WEP' })).toEqual(['password'])
    expect(await outcome('wifi', { ssid: 'n', encryption: 'nopass', password: 'secret123' })).toEqual(['password'])
    expect(await outcome('wifi', { ssid: 'n', encryption: 'WPA2', password: 'secret123' })).toEqual(['encryption'])
    expect(await outcome('wifi', { ssid: 'n', encryption: 'nopass', hidden: 'yes' })).toEqual(['hidden'])
  })

  test('sms: message up to 160 characters; phone digits', async () => {
    expect(await outcome('sms', { phone: '+15555550100', message: 'm'.repeat(160) })).toBe(200)
    expect(await outcome('sms', { phone: '+15555550100', message: 'm'.repeat(161) })).toEqual(['message'])
    expect(await outcome('sms', { phone: '555:0100' })).toEqual(['phone'])
    expect(await outcome('sms', { phone: 'call me' })).toEqual(['phone'])
    expect(await outcome('sms', { phone: '1'.repeat(21) })).toEqual(['phone'])
    expect(await outcome('sms', { message: 'hi' })).toEqual(['phone'])
  })

  test('geo: latitude -90..90, longitude -180..180', async () => {
    for (const [lat, lon] of [
      [90, 180],
      [-90, -180],
      [0, 0],
    ])
      expect(await outcome('geo', { latitude: lat, longitude: lon })).toBe(200)
    expect(await outcome('geo', { latitude: 90.0000001, longitude: 0 })).toEqual(['latitude'])
    expect(await outcome('geo', { latitude: 0, longitude: -180.0000001 })).toEqual(['longitude'])
    expect(await outcome('geo', { latitude: '1', longitude: 0 })).toEqual(['latitude'])
    expect(await outcome('geo', { longitude: 0 })).toEqual(['latitude'])
  })

  test('vcard: name required and not blank; phone, email, url checked; a vCard over the capacity is a 422', async () => {
    expect(await outcome('vcard', { name: '' })).toEqual(['name'])
    expect(await outcome('vcard', { name: '   ' })).toEqual(['name'])
    expect(await outcome('vcard', { name: 'Ada', email: 'not an email' })).toEqual(['email'])
    expect(await outcome('vcard', { name: 'Ada', phone: 'x' })).toEqual(['phone'])
    expect(await outcome('vcard', { name: 'Ada', url: 'example.com' })).toEqual(['url'])
    const big = {
      name: 'N'.repeat(200),
      org: 'O'.repeat(200),
      address: 'A'.repeat(500),
      url: 'https://example.com/' + 'u'.repeat(2000),
      error_correction: 'H',
    }
    expect(await outcome('vcard', big)).toEqual(['url'])
  })

  test('email: one address; subject and body bounded', async () => {
    expect(await outcome('email', { to: 'a@b' })).toBe(200)
    expect(await outcome('email', { to: 'nobody' })).toEqual(['to'])
    expect(await outcome('email', { to: 'a@b.c, d@e.f' })).toEqual(['to'])
    expect(await outcome('email', { to: 'a@b.c', subject: 's'.repeat(501) })).toEqual(['subject'])
    expect(await outcome('email', { to: 'a@b.c', body: 'b'.repeat(2001) })).toEqual(['body'])
  })

  test('a body that is not an object, or JSON that does not parse, is a problem, not a 500', async () => {
    expect((await app.json('POST', '/api/v1/qr/text', { body: '[1,2]', form: 'bare' })).status).toBe(422)
    expect((await app.json('POST', '/api/v1/qr/text', { body: '{"text":', form: 'bare' })).status).toBe(400)
    // Member names that merge code could be polluted through are refused, naming the member.
    const reserved = await app.json('POST', '/api/v1/qr/text', { body: '{"text":"a","__proto__":{"x":1}}', form: 'bare' })
    expect([reserved.status, reserved.body.errors[0].field]).toEqual([422, '__proto__'])
    expect((await app.json('GET', '/api/v1/qr/text', { form: 'bare' })).status).toBe(405)
  })
})

describe('odd input never makes a 500', () => {
  test('a lone surrogate is encoded as U+FFFD', async () => {
    const { status, body } = await post('text', { text: 'a\ud800b' })
    expect(status).toBe(200)
    expect(zbar((await imageOf(app, body)).bytes)).toBe('a\ufffdb')
  })

  test('seeded random bodies on every route: 200, 400 or 422, never 5xx', async () => {
    const { rng } = await import('../../support/random.ts')
    const next = rng(1616)
    const pick = <T>(xs: T[]) => xs[Math.floor(next() * xs.length)]!
    const values = () => [
      null,
      true,
      0,
      -1,
      1e308,
      -0.5,
      2 ** 53,
      '',
      ' ',
      '\u0000',
      '\ud800',
      '😀'.repeat(50),
      'x'.repeat(5000),
      '#fff',
      'L',
      'svg',
      'base64',
      [],
      {},
      { a: 1 },
      ['x'],
      '__proto__',
      'constructor',
      '%00',
      'https://a.b/\u2028',
      '+1 555',
      'a@b',
      48.85,
      -180,
      100,
      2000,
      86400,
    ]
    const names = [
      'text',
      'url',
      'ssid',
      'password',
      'encryption',
      'hidden',
      'name',
      'phone',
      'email',
      'org',
      'address',
      'to',
      'subject',
      'body',
      'message',
      'latitude',
      'longitude',
      'format',
      'size',
      'fg_color',
      'bg_color',
      'error_correction',
      'margin',
      'ttl',
    ]
    for (let i = 0; i < 300; i++) {
      const preset = pick(['text', 'url', 'wifi', 'vcard', 'email', 'sms', 'geo'])
      const body: Record<string, unknown> = {}
      for (let k = 0; k < 1 + Math.floor(next() * 6); k++) body[pick(names)] = pick(values())
      const { status } = await post(preset, body)
      expect({ preset, body, status: [200, 400, 422].includes(status) }).toEqual({ preset, body, status: true })
    }
  })
})
