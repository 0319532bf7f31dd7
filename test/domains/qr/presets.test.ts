/**
 * Every preset, in every format, decoded by two independent decoders (zbar and jsQR; SVG rasterised by
 * librsvg first) back to the exact payload: escaping, CRLF line ends and Unicode included. The expected
 * payloads are written out here from each format's specification, not taken from our output.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { decodeBoth, rasterise } from './decode.ts'
import { imageOf, qrApp, type QrTestApp } from './harness.ts'

let app: QrTestApp
beforeAll(async () => {
  app = await qrApp()
})
afterAll(() => app.close())

interface Case {
  name: string
  preset: string
  body: Record<string, unknown>
  payload: string
}

const CASES: Case[] = [
  {
    name: 'text with Unicode, quotes, backslash and a newline',
    preset: 'text',
    body: { text: 'Grüße, 世界! 😀 "q" \\ back\nnext line' },
    payload: 'Grüße, 世界! 😀 "q" \\ back\nnext line',
  },
  {
    name: 'text, digits only (numeric mode)',
    preset: 'text',
    body: { text: '0123456789012345678901234567890' },
    payload: '0123456789012345678901234567890',
  },
  {
    name: 'url with query, percent escapes, non-ASCII path and fragment',
    preset: 'url',
    body: { url: 'https://example.com/zoë/a?b=c&d=%20x#frag' },
    payload: 'https://example.com/zoë/a?b=c&d=%20x#frag',
  },
  {
    name: 'url of another scheme',
    preset: 'url',
    body: { url: 'otpauth://totp/Almanac:ada?secret=JBSWY3DPEHPK3PXP&issuer=Almanac' },
    payload: 'otpauth://totp/Almanac:ada?secret=JBSWY3DPEHPK3PXP&issuer=Almanac',
  },
  {
    name: 'wifi WPA, hidden, every special character escaped',
    preset: 'wifi',
    body: { ssid: 'Café;Net,"5G":\\', password: 'p@ss:w,o"rd\\1;', hidden: true },
    payload: 'WIFI:T:WPA;S:Café\\;Net\\,\\"5G\\"\\:\\\\;P:p@ss\\:w\\,o\\"rd\\\\1\\;;H:true;;',
  },
  {
    name: 'wifi WEP',
    preset: 'wifi',
    body: { ssid: 'Old', password: '12345', encryption: 'WEP' },
    payload: 'WIFI:T:WEP;S:Old;P:12345;H:false;;',
  },
  {
    name: 'wifi open network: no P',
    preset: 'wifi',
    body: { ssid: 'Open Café', encryption: 'nopass' },
    payload: 'WIFI:T:nopass;S:Open Café;H:false;;',
  },
  {
    name: 'wifi with the SSID alone: an open network',
    preset: 'wifi',
    body: { ssid: 'x' },
    payload: 'WIFI:T:nopass;S:x;H:false;;',
  },
  {
    name: 'vcard with every field, escaping and Unicode',
    preset: 'vcard',
    body: {
      name: 'Zoë Ängström',
      phone: '+46 8 123 456',
      email: 'zoe@example.se',
      org: 'Acme, Inc; R&D \\ Labs',
      address: 'Drottninggatan 1\nStockholm',
      url: 'https://example.se/zoë',
    },
    payload:
      'BEGIN:VCARD\r\nVERSION:3.0\r\nN:Ängström;Zoë;;;\r\nFN:Zoë Ängström\r\nORG:Acme\\, Inc\\; R&D \\\\ Labs\r\nTEL:+46 8 123 ' +
      '456\r\nEMAIL:zoe@example.se\r\n' +
      'ADR:;;Drottninggatan 1\\nStockholm;;;;\r\nURL:https://example.se/zoë\r\nEND:VCARD\r\n',
  },
  {
    name: 'vcard with a line folded at 75 octets',
    preset: 'vcard',
    body: { name: 'Ada', org: 'O'.repeat(80) },
    // "ORG:" + 71 O's is 75 octets; the rest continues after CRLF and one space.
    payload: `BEGIN:VCARD\r\nVERSION:3.0\r\nN:Ada;;;;\r\nFN:Ada\r\nORG:${'O'.repeat(71)}\r\n ${'O'.repeat(9)}\r\nEND:VCARD\r\n`,
  },
  {
    name: 'email with subject and multi-line Unicode body',
    preset: 'email',
    body: { to: 'ada+qr@example.com', subject: 'Hello & welcome?', body: 'Line 1\nLine 2 — ü' },
    payload: 'mailto:ada+qr@example.com?subject=Hello%20%26%20welcome%3F&body=Line%201%0D%0ALine%202%20%E2%80%94%20%C3%BC',
  },
  { name: 'email, address only', preset: 'email', body: { to: 'ada@example.com' }, payload: 'mailto:ada@example.com' },
  {
    name: 'sms with colons and emoji',
    preset: 'sms',
    body: { phone: '+15555550100', message: 'Meet at 10:30? Ça va 👍' },
    payload: 'SMSTO:+15555550100:Meet at 10:30? Ça va 👍',
  },
  { name: 'sms without message', preset: 'sms', body: { phone: '+1 (555) 555-0100' }, payload: 'SMSTO:+1 (555) 555-0100:' },
  { name: 'geo', preset: 'geo', body: { latitude: 48.8584, longitude: 2.2945 }, payload: 'geo:48.8584,2.2945' },
  {
    name: 'geo, southern and eastern, 7 decimals',
    preset: 'geo',
    body: { latitude: -33.8567844, longitude: 151.213108 },
    payload: 'geo:-33.8567844,151.213108',
  },
  { name: 'geo, the extremes', preset: 'geo', body: { latitude: -90, longitude: 180 }, payload: 'geo:-90,180' },
]

describe.each(['png', 'svg', 'base64'] as const)('%s', (format) => {
  test.each(CASES.map((c) => [c.name, c] as const))('%s', async (_, c) => {
    const { status, body } = await app.json('POST', `/api/v1/qr/${c.preset}`, { body: { ...c.body, format }, form: 'bare' })
    expect({ status, detail: body.detail }).toEqual({ status: 200, detail: undefined })
    expect(body).toMatchObject({ format, preset: c.preset })
    const image = await imageOf(app, body)
    expect(image.type).toBe(format === 'svg' ? 'image/svg+xml' : 'image/png')
    const png = format === 'svg' ? rasterise(image.bytes) : image.bytes
    expect(decodeBoth(png)).toEqual({ zbar: c.payload, jsqr: c.payload })
  })
})

describe('wifi without password or encryption (SPEC: password optional, WPA default)', () => {
  const WARNING =
    'no password and no encryption given: encoded as an open network (T:nopass); send encryption and password for a protected one'
  for (const form of ['enveloped', 'bare'] as const)
    test(`${form}: encoded as open, and the answer says so in warnings`, async () => {
      for (const body of [{ ssid: 'x' }, { ssid: 'x', password: '' }, { ssid: 'x', hidden: true }]) {
        const { status, body: answer } = await app.json('POST', '/api/v1/qr/wifi', { body: { ...body, format: 'base64' }, form })
        expect(status).toBe(200)
        const result = form === 'enveloped' ? answer.data : answer
        expect(result.warnings).toEqual([WARNING])
        const payload = `WIFI:T:nopass;S:x;H:${body.hidden ? 'true' : 'false'};;`
        expect(decodeBoth((await imageOf(app, result)).bytes)).toEqual({ zbar: payload, jsqr: payload })
      }
      // Asked for explicitly, nothing is assumed: no warning for nopass, a 422 for WPA or WEP without a key.
      const open = await app.json('POST', '/api/v1/qr/wifi', { body: { ssid: 'x', encryption: 'nopass', format: 'base64' }, form })
      expect((form === 'enveloped' ? open.body.data : open.body).warnings).toEqual([])
      for (const encryption of ['WPA', 'WEP']) {
        const r = await app.json('POST', '/api/v1/qr/wifi', { body: { ssid: 'x', encryption, format: 'base64' }, form })
        expect(r.status).toBe(422)
        expect((form === 'enveloped' ? r.body.error : r.body).errors[0].field).toBe('password')
      }
    })
})
