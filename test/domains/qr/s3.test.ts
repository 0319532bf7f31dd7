/**
 * ALMANAC_QR_STORE=s3://bucket/prefix against a real S3-compatible server on loopback (npm s3rver): the
 * image is uploaded by Bun's S3 client under its content hash, and the presigned GET URL downloads it with
 * its content type; a ttl over SigV4's 7 days is cut with a warning; an unreachable S3 is a 503; with
 * ALMANAC_QR_S3_PUBLIC_ENDPOINT links name the public origin and download through it.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import S3rver from 's3rver'
import { decodeBoth, rasterise } from './decode.ts'
import { tempDirs } from '../../support/temp.ts'
import { TEST_KEY } from '../../support/app.ts'
import { fill, heldBy, KEY_B, qrApp, TWO_KEYS, type QrTestApp } from './harness.ts'
import { presignedSignatureValid } from './sigv4.ts'

const BUCKET = 'almanac-qr'
const tempDir = tempDirs('almanac-s3rver-')
const s3dir = tempDir()
let s3: S3rver
let endpoint: string
let app: QrTestApp

const s3env = (ep: string) => ({
  ALMANAC_QR_STORE: `s3://${BUCKET}/codes/v1/`,
  S3_ENDPOINT: ep,
  S3_REGION: 'us-east-1',
  S3_ACCESS_KEY_ID: 'S3RVER',
  S3_SECRET_ACCESS_KEY: 'S3RVER',
})

beforeAll(async () => {
  s3 = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: s3dir, configureBuckets: [{ name: BUCKET, configs: [] }] })
  const { port } = (await s3.run()) as unknown as { port: number }
  endpoint = `http://127.0.0.1:${port}`
  app = await qrApp(s3env(endpoint))
  // Presigned URLs are dated by Bun's own clock: keep the app's on the wall clock here.
  app.clock.ms = Date.now()
})

afterAll(async () => {
  await app?.close()
  await s3?.close()
})

const make = (body: Record<string, unknown>) =>
  app.json('POST', '/api/v1/qr/vcard', { body: { name: 'Ada Lovelace', email: 'ada@example.com', ...body }, form: 'bare' })
const PAYLOAD = 'BEGIN:VCARD\r\nVERSION:3.0\r\nN:Lovelace;Ada;;;\r\nFN:Ada Lovelace\r\nEMAIL:ada@example.com\r\nEND:VCARD\r\n'

test.each(['png', 'svg'] as const)('%s: uploaded under its content hash, downloaded by the presigned URL, decoded', async (format) => {
  app.clock.ms = Date.now()
  const { status, body } = await make({ format, ttl: 900 })
  expect({ status, detail: body.detail }).toEqual({ status: 200, detail: undefined })
  const url = new URL(body.url)
  expect(url.origin).toBe(endpoint)
  expect(url.pathname).toMatch(new RegExp(`^/${BUCKET}/codes/v1/[0-9a-f]{64}\\.${format}$`))
  expect(url.searchParams.get('X-Amz-Algorithm')).toBe('AWS4-HMAC-SHA256')
  expect(url.searchParams.get('X-Amz-Expires')).toBe('900')
  expect(body.expires).toBe(Math.floor(app.clock.ms / 1000) + 900)
  expect(body.warnings).toEqual([])
  const res = await fetch(body.url)
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toBe(format === 'png' ? 'image/png' : 'image/svg+xml')
  const bytes = new Uint8Array(await res.arrayBuffer())
  expect(decodeBoth(format === 'svg' ? rasterise(bytes) : bytes)).toEqual({ zbar: PAYLOAD, jsqr: PAYLOAD })
  // s3rver keeps each object as a folder of files under bucket/key.
  expect(existsSync(join(s3dir, BUCKET, 'codes', 'v1'))).toBe(true)
})

test('the same image is one object, named by its content hash', async () => {
  const objects = () => readdirSync(join(s3dir, BUCKET, 'codes', 'v1')).filter((n) => n.endsWith('._S3rver_object'))
  const before = objects()
  const a = await make({ format: 'png', size: 321 })
  const b = await make({ format: 'png', size: 321 })
  expect(new URL(b.body.url).pathname).toBe(new URL(a.body.url).pathname)
  const added = objects().filter((n) => !before.includes(n))
  expect(added).toEqual([new URL(a.body.url).pathname.split('/').pop() + '._S3rver_object'])
  const bytes = new Uint8Array(await (await fetch(a.body.url)).arrayBuffer())
  expect(added[0]!.slice(0, 64)).toBe(new Bun.CryptoHasher('sha256').update(bytes).digest('hex'))
})

test('a ttl over 7 days is cut to 604800 seconds, with a warning', async () => {
  app.clock.ms = Date.now()
  const { body } = await make({ ttl: 2592000 })
  expect(new URL(body.url).searchParams.get('X-Amz-Expires')).toBe('604800')
  expect(body.expires).toBe(Math.floor(app.clock.ms / 1000) + 604800)
  expect(body.warnings).toEqual([expect.stringContaining('ttl cut from 2592000 to 604800')])
})

test('base64 never touches S3', async () => {
  const { status, body } = await make({ format: 'base64' })
  expect(status).toBe(200)
  expect(body.url).toBeUndefined()
})

test('an unreachable S3 is a 503 problem, not a hang or a 500', async () => {
  const closed = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') })
  const deadEndpoint = `http://127.0.0.1:${closed.port}`
  closed.stop(true)
  const down = await qrApp({ ...s3env(deadEndpoint), ALMANAC_QR_S3_TIMEOUT: '5' })
  try {
    const { status, body } = await down.json('POST', '/api/v1/qr/text', { body: { text: 'x' }, form: 'bare' })
    expect(status).toBe(503)
    expect(body.detail).toContain(`s3://${BUCKET}`)
  } finally {
    await down.close()
  }
})

test('virtual-hosted style: the bucket goes into the host name, and the presigned URL still downloads', async () => {
  // s3rver reads the bucket from `<bucket>.s3.localhost` when its service endpoint is `localhost`.
  const vdir = tempDir()
  const vhost = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory: vdir,
    serviceEndpoint: 'localhost',
    configureBuckets: [{ name: BUCKET, configs: [] }],
  })
  const { port } = await vhost.run()
  const vapp = await qrApp({ ...s3env(`http://s3.localhost:${port}`), S3_VIRTUAL_HOSTED_STYLE: 'true' })
  vapp.clock.ms = Date.now()
  try {
    const { status, body } = await vapp.json('POST', '/api/v1/qr/geo', { body: { latitude: 1.5, longitude: -2.25 }, form: 'bare' })
    expect({ status, detail: body.detail }).toEqual({ status: 200, detail: undefined })
    const url = new URL(body.url)
    expect(url.host).toBe(`${BUCKET}.s3.localhost:${port}`)
    expect(url.pathname).toMatch(/^\/codes\/v1\/[0-9a-f]{64}\.png$/)
    const res = await fetch(body.url)
    expect(res.status).toBe(200)
    expect(decodeBoth(new Uint8Array(await res.arrayBuffer()))).toEqual({ zbar: 'geo:1.5,-2.25', jsqr: 'geo:1.5,-2.25' })
  } finally {
    await vapp.close()
    await vhost.close()
  }
})

test('per-key shares hold on S3 too: a key over its share gets a 429, another key stores, expiry gives the share back', async () => {
  const shared = await qrApp({ ...s3env(endpoint), ...TWO_KEYS, ALMANAC_QR_STORE_MAX_BYTES_PER_KEY: '6000' })
  shared.clock.ms = Date.now()
  try {
    const { stored, refused } = await fill(shared, TEST_KEY, 's3-a', 600)
    expect(stored.length).toBeGreaterThanOrEqual(2)
    expect(refused.status).toBe(429)
    expect(refused.body).toMatchObject({ share_bytes: 6000, held_bytes: heldBy(stored) })
    expect(Number(refused.headers.get('retry-after'))).toBe(refused.body.frees_at - Math.floor(shared.clock.ms / 1000))
    const b = await shared.json('POST', '/api/v1/qr/text', { body: { text: refused.text, format: 'svg' }, key: KEY_B, form: 'bare' })
    expect(b.status).toBe(200)
    expect((await fetch(b.body.url)).status).toBe(200)
    // The ledger's clock is the app's: once A's oldest links have expired there, A stores again.
    shared.clock.ms = refused.body.frees_at * 1000
    expect((await shared.json('POST', '/api/v1/qr/text', { body: { text: refused.text, format: 'svg' } })).status).toBe(200)
  } finally {
    await shared.close()
  }
})

test(
  'ALMANAC_QR_S3_PUBLIC_ENDPOINT: links are presigned for the public origin and download through it; uploads stay ' + 'internal',
  async () => {
    // The public address: a forwarder to s3rver on another port (as a published port or an ingress is),
    // recording what passes through it.
    const seen: string[] = []
    const publicSide = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch(req) {
        const url = new URL(req.url)
        seen.push(`${req.method} ${url.pathname}`)
        const upstream = await fetch(endpoint + url.pathname + url.search, { method: req.method, headers: req.headers })
        return new Response(upstream.body, { status: upstream.status, headers: upstream.headers })
      },
    })
    const publicEndpoint = `http://127.0.0.1:${publicSide.port}`
    const split = await qrApp({ ...s3env(endpoint), ALMANAC_QR_S3_PUBLIC_ENDPOINT: publicEndpoint })
    split.clock.ms = Date.now()
    try {
      const { status, body } = await split.json('POST', '/api/v1/qr/text', { body: { text: 'public link', format: 'png' }, form: 'bare' })
      expect({ status, detail: body.detail }).toEqual({ status: 200, detail: undefined })
      const url = new URL(body.url)
      expect(url.origin).toBe(publicEndpoint)
      expect(url.pathname).toMatch(new RegExp(`^/${BUCKET}/codes/v1/[0-9a-f]{64}\\.png$`))
      // The upload went to S3_ENDPOINT: nothing has passed the public side yet.
      expect(seen).toEqual([])
      const res = await fetch(body.url)
      expect(res.status).toBe(200)
      expect(decodeBoth(new Uint8Array(await res.arrayBuffer()))).toEqual({ zbar: 'public link', jsqr: 'public link' })
      expect(seen).toEqual([`GET ${url.pathname}`])
      // s3rver accepts any V4 signature; S3 and MinIO check it over the host the client sends. The link is
      // signed for the public host; an internal link with its host rewritten would be refused.
      expect(presignedSignatureValid(body.url, 'S3RVER')).toBe(true)
      const internal = await app.json('POST', '/api/v1/qr/text', { body: { text: 'public link', format: 'png' }, form: 'bare' })
      expect(presignedSignatureValid(internal.body.url, 'S3RVER')).toBe(true)
      const rewritten = new URL(internal.body.url)
      rewritten.host = url.host
      expect(presignedSignatureValid(rewritten.href, 'S3RVER')).toBe(false)
    } finally {
      await split.close()
      publicSide.stop(true)
    }
  },
)

test('the local download route does not serve anything when images go to S3', async () => {
  const res = await app.request('GET', `/files/qr/${'a'.repeat(64)}.png?expires=1&signature=x`, { key: null })
  expect(res.status).toBe(404)
})
