/**
 * Local storage and its signed links: served outside /api/v1 without an API key, valid until `expires`
 * and not a second longer (the clock is injected, nothing waits), refused when tampered with; one object
 * per image; the signing key kept in the state dir; absolute URLs from ALMANAC_PUBLIC_URL, the Host, or
 * a trusted proxy's headers.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHmac } from 'node:crypto'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { qrDomain } from '../../../src/domains/qr/index.ts'
import { TEST_KEY } from '../../support/app.ts'
import { liveServer } from '../../http/helpers.ts'
import { zbar } from './decode.ts'
import { qrApp, START_MS, type QrTestApp } from './harness.ts'

let app: QrTestApp
beforeAll(async () => {
  app = await qrApp()
})
afterAll(() => app.close())

const START = START_MS / 1000
const make = async (body: Record<string, unknown>, a: QrTestApp = app, headers: Record<string, string> = {}) => {
  const r = await a.json('POST', '/api/v1/qr/text', { body, form: 'bare', headers })
  expect({ status: r.status, detail: r.body.detail }).toEqual({ status: 200, detail: undefined })
  return r.body as { url: string; expires: number }
}
const objects = (a: QrTestApp = app) => readdirSync(join(a.stateDir, 'qr')).filter((n) => !n.startsWith('.'))

describe('a signed link', () => {
  test('works without an API key until expires, with the right type and cache header, and no quota spent', async () => {
    const { url, expires } = await make({ text: 'signed', ttl: 3600 })
    expect(expires).toBe(START + 3600)
    expect(url).toMatch(/^http:\/\/localhost\/files\/qr\/[0-9a-f]{64}\.png\?expires=\d+&signature=[\w-]+$/)
    app.clock.ms = START_MS + 3599_000
    const res = await app.download(url, { 'x-api-key': 'wrong-key-0000000' })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('image/png')
    expect(res.headers.get('cache-control')).toBe('public, max-age=1, immutable')
    expect(res.headers.get('x-quota-remaining')).toBeNull()
    expect(zbar(new Uint8Array(await res.arrayBuffer()))).toBe('signed')
    app.clock.ms = START_MS
  })

  test('is a 403 problem from the second it expires', async () => {
    const { url, expires } = await make({ text: 'expiring', ttl: 60 })
    app.clock.ms = expires * 1000
    const res = await app.download(url)
    expect(res.status).toBe(403)
    const problem = (await res.json()) as any
    expect(problem.error ?? problem).toMatchObject({
      status: 403,
      type: 'urn:almanac:problem:forbidden',
      detail: expect.stringContaining('expired'),
    })
    app.clock.ms = START_MS
  })

  test('is a 403 problem when its signature, expiry or path is changed', async () => {
    const { url } = await make({ text: 'tamper' })
    const other = await make({ text: 'another image' })
    const u = new URL(url)
    const sig = u.searchParams.get('signature')!
    const flipped = (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1)
    const later = String(Number(u.searchParams.get('expires')) + 86400)
    const tampered = [
      url.replace(sig, flipped),
      url.replace(/expires=\d+/, `expires=${later}`),
      url.replace(u.pathname, new URL(other.url).pathname),
      url.replace(u.pathname, u.pathname.replace('.png', '.svg')),
      url.replace(/&signature=.*$/, ''),
      url.replace(/expires=\d+/, 'expires=1e12'),
      url.replace(sig, sig + sig),
    ]
    for (const t of tampered) expect({ t, status: (await app.download(t)).status }).toEqual({ t, status: 403 })
    expect((await app.download(url)).status).toBe(200)
  })

  test('an unknown object name is a 404 problem, a swept one too', async () => {
    expect((await app.request('GET', '/files/qr/..%2Fkeys.sqlite?expires=1&signature=x', { key: null })).status).toBe(404)
    expect((await app.request('GET', `/files/qr/${'0'.repeat(64)}.gif`, { key: null })).status).toBe(404)
  })

  test('the signature is HMAC-SHA256 over path and expiry with ALMANAC_QR_SIGNING_KEY, base64url', async () => {
    const key = 'k'.repeat(40)
    const keyed = await qrApp({ ALMANAC_QR_SIGNING_KEY: key })
    try {
      const { url, expires } = await make({ text: 'keyed' }, keyed)
      const u = new URL(url)
      expect(u.searchParams.get('signature')).toBe(createHmac('sha256', key).update(`${u.pathname}\n${expires}`).digest('base64url'))
    } finally {
      await keyed.close()
    }
  })
})

describe('the local store', () => {
  test('stores an image once, by content hash, and keeps it as long as its newest link', async () => {
    const fresh = await qrApp()
    try {
      const a = await make({ text: 'once', ttl: 600 }, fresh)
      const b = await make({ text: 'once', ttl: 7200 }, fresh)
      const c = await make({ text: 'once', ttl: 60 }, fresh)
      const path = new URL(a.url).pathname
      expect([new URL(b.url).pathname, new URL(c.url).pathname]).toEqual([path, path])
      expect(objects(fresh)).toEqual([path.split('/').pop()!])
      const file = join(fresh.stateDir, 'qr', objects(fresh)[0]!)
      expect(statSync(file).mtimeMs).toBe((START + 7200) * 1000)
      expect(new Uint8Array(readFileSync(file))).toEqual(new Uint8Array(await (await fresh.download(a.url)).arrayBuffer()))
    } finally {
      await fresh.close()
    }
  })

  test('keeps a generated signing key in the state dir (0600), so links outlive a restart', async () => {
    const first = await qrApp()
    try {
      const { url } = await make({ text: 'restart' }, first)
      const keyFile = join(first.stateDir, 'qr-signing-key')
      expect(statSync(keyFile).mode & 0o777).toBe(0o600)
      expect(readFileSync(keyFile, 'utf8').trim()).toMatch(/^[0-9a-f]{64}$/)
      const second = await qrApp({ ALMANAC_STATE_DIR: first.stateDir })
      try {
        expect((await second.download(url)).status).toBe(200)
      } finally {
        await second.close()
      }
    } finally {
      await first.close()
    }
  })

  test('a full store is a 503 problem and leaves no file behind', async () => {
    const full = await qrApp({ ALMANAC_QR_STORE_MAX_BYTES: '1024', ALMANAC_QR_STORE_MAX_BYTES_PER_KEY: String(2 ** 20) })
    try {
      await make({ text: 'small', size: 100 }, full)
      const { status, body, headers } = await full.json('POST', '/api/v1/qr/text', {
        body: { text: 'x'.repeat(2000), size: 2000, margin: 0 },
        form: 'bare',
      })
      expect(status).toBe(503)
      expect(body.detail).toContain('full')
      expect(headers.get('retry-after')).toBe('30')
      expect(readdirSync(join(full.stateDir, 'qr')).length).toBe(1)
      // base64 stores nothing, so it still works.
      expect((await full.json('POST', '/api/v1/qr/text', { body: { text: 'x', format: 'base64' } })).status).toBe(200)
    } finally {
      await full.close()
    }
  })

  test('an unwritable store is a 503 problem', async () => {
    // A path below a regular file cannot be created, even by root.
    const broken = await qrApp({ ALMANAC_QR_STORE: `local:${join(app.stateDir, 'qr-signing-key')}/images` })
    try {
      const { status, body } = await broken.json('POST', '/api/v1/qr/text', { body: { text: 'x', format: 'svg' }, form: 'bare' })
      expect(status).toBe(503)
      expect(body.type).toBe('urn:almanac:problem:unavailable')
      expect(body.detail).toContain('ENOTDIR')
    } finally {
      await broken.close()
    }
  })
})

describe('absolute URLs', () => {
  test('from ALMANAC_PUBLIC_URL when set', async () => {
    const pub = await qrApp({ ALMANAC_PUBLIC_URL: 'https://qr.example.org/' })
    try {
      expect((await make({ text: 'public' }, pub)).url).toStartWith('https://qr.example.org/files/qr/')
    } finally {
      await pub.close()
    }
  })

  test("else from the request's Host", async () => {
    expect((await make({ text: 'host' }, app, { host: 'api.example.net:8443' })).url).toStartWith('http://api.example.net:8443/files/qr/')
  })

  test('forwarding headers only from a trusted proxy, over a real socket', async () => {
    const clock = () => Date.now()
    const headers = {
      'x-api-key': TEST_KEY,
      'content-type': 'application/json',
      'x-response-form': 'bare',
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'qr.example.com',
    }
    const body = JSON.stringify({ text: 'proxied' })
    for (const [trusted, expected] of [
      ['127.0.0.1', 'https://qr.example.com/files/qr/'],
      ['10.0.0.0/8', null],
    ] as const) {
      const server = await liveServer({
        domains: [qrDomain(clock)],
        env: { ALMANAC_TRUSTED_PROXIES: trusted, ALMANAC_STATE_DIR: join(app.stateDir, 'live-' + trusted.replace(/\W/g, '')) },
      })
      try {
        const answer = (await (await fetch(`${server.url}/api/v1/qr/text`, { method: 'POST', headers, body })).json()) as { url: string }
        expect(answer.url).toStartWith(expected ?? `${server.url}/files/qr/`)
        if (!expected) {
          const res = await fetch(answer.url)
          expect([res.status, res.headers.get('content-type')]).toEqual([200, 'image/png'])
          expect(zbar(new Uint8Array(await res.arrayBuffer()))).toBe('proxied')
        }
      } finally {
        await server.stop()
      }
    }
  })

  test("a client's own forwarding header of the other kind changes no link, over a real socket", async () => {
    const clock = () => Date.now()
    const headers = { 'x-api-key': TEST_KEY, 'content-type': 'application/json', 'x-response-form': 'bare' }
    const spoofForwarded: Record<string, string> = { forwarded: 'for=1.2.3.4;host=evil;proto=https' }
    const spoofXff: Record<string, string> = { 'x-forwarded-for': '1.2.3.4', 'x-forwarded-host': 'evil', 'x-forwarded-proto': 'https' }
    const body = JSON.stringify({ text: 'spoofed' })
    for (const header of ['x-forwarded-for', 'forwarded'] as const) {
      const server = await liveServer({
        domains: [qrDomain(clock)],
        env: {
          ALMANAC_TRUSTED_PROXIES: '127.0.0.1',
          ALMANAC_TRUSTED_PROXY_HEADER: header,
          ALMANAC_STATE_DIR: join(app.stateDir, `live-spoof-${header}`),
        },
      })
      const link = async (extra: Record<string, string>) =>
        (
          (await (await fetch(`${server.url}/api/v1/qr/text`, { method: 'POST', headers: { ...headers, ...extra }, body })).json()) as {
            url: string
          }
        ).url
      try {
        const spoof = header === 'x-forwarded-for' ? spoofForwarded : spoofXff
        expect(await link(spoof)).toStartWith(`${server.url}/files/qr/`)
        // The proxy's own header, sent beside the spoof, is the one that counts.
        const real: Record<string, string> =
          header === 'x-forwarded-for'
            ? { 'x-forwarded-host': 'qr.example.com', 'x-forwarded-proto': 'https' }
            : { forwarded: 'for=1.2.3.4;host=qr.example.com;proto=https' }
        expect(await link({ ...spoof, ...real })).toStartWith('https://qr.example.com/files/qr/')
      } finally {
        await server.stop()
      }
    }
  })
})
