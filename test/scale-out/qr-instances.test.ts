/**
 * QR on several instances that share keys and quotas in one real redis-server, as `almanac serve`
 * processes: one key's share of the image store is one share across them (the ledger is in that Redis);
 * the default local store, which only its own instance serves, is a warning at start and in /readyz (the
 * domain still ready); and a link made on one instance, asked of another, is a 404 that says the image is
 * not stored on this instance and how to share them, not that it is "no longer stored".
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Running } from '../../build/smoke.ts'
import { SMOKE_KEY } from '../../build/smoke.ts'
import { createSigner } from '../../src/domains/qr/signing.ts'
import { startRedis, type TestRedis } from '../support/redis.ts'
import { startFromSource } from '../support/source-server.ts'
import { tempDirs } from '../support/temp.ts'

const SHARE = 6000
const SIGNING_KEY = 'one-signing-key-for-every-instance-0123'
/** The key that fills its share; the other tests use the smoke key, which stays well within its own. */
const FILLER = 'qr-filler-key-0123456789'

let redis: TestRedis
const running: Running[] = []
beforeAll(async () => {
  redis = await startRedis()
})
afterAll(async () => {
  await Promise.all(running.map((r) => r.stop()))
  await redis?.close()
})
// After the afterAll above, so the servers stop before their directories go.
const tempDir = tempDirs('almanac-qr-instances-')

/** One instance: its own state dir (and so its own local QR store), the shared Redis for keys, quotas and QR shares. */
async function instance(env: Record<string, string> = {}): Promise<Running> {
  const server = await startFromSource(tempDir, {
    ALMANAC_QUOTA_STORE: redis.url,
    ALMANAC_QR_STORE_MAX_BYTES_PER_KEY: String(SHARE),
    ALMANAC_EMAIL_DNS_CHECK_NAMES: 'none',
    ALMANAC_API_KEYS: `${SMOKE_KEY}:smoke,${FILLER}:smoke`,
    ...env,
  })
  running.push(server)
  return server
}

const make = (base: string, text: string, key = SMOKE_KEY) =>
  fetch(`${base}/api/v1/qr/text`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'x-response-form': 'bare', 'content-type': 'application/json' },
    body: JSON.stringify({ text, format: 'svg', ttl: 600 }),
  })

/** The problem's detail, in whichever form the server answered it (bare, or under `error`). */
const detailOf = async (res: Response) => {
  const body = (await res.json()) as { detail?: string; error?: { detail?: string } }
  return body.detail ?? body.error?.detail ?? JSON.stringify(body)
}

const logged = (server: Running) => server.lines.filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>)

describe('two instances on one Redis, each with the default local QR store', () => {
  let a: Running
  let b: Running
  beforeAll(async () => {
    ;[a, b] = await Promise.all([instance({ ALMANAC_QR_SIGNING_KEY: SIGNING_KEY }), instance({ ALMANAC_QR_SIGNING_KEY: SIGNING_KEY })])
  }, 130_000)

  test("together they cannot exceed one key's share: concurrent images split over A and B hold at most the share", async () => {
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => make(i % 2 ? a.url : b.url, `share-${i}`, FILLER)))
    const made = answers.filter((r) => r.status === 200)
    const refused = answers.filter((r) => r.status === 429)
    expect(made.length + refused.length).toBe(30)
    expect(refused.length).toBeGreaterThan(0)
    // Each image's size read back from its own link (served by the instance that made it).
    const sizes = await Promise.all(
      made.map(async (r) => (await (await fetch(((await r.json()) as { url: string }).url)).arrayBuffer()).byteLength),
    )
    const held = sizes.reduce((sum, n) => sum + n, 0)
    expect(held).toBeLessThanOrEqual(SHARE)
    // Both instances refuse with the same account of what the key holds.
    const after = await Promise.all([a.url, b.url].map(async (base) => (await (await make(base, 'one-more', FILLER)).json()) as any))
    expect(after.map((p) => [p.status, p.held_bytes])).toEqual([
      [429, held],
      [429, held],
    ])
  })

  test('each warns at start and in /readyz (still ready) that its links are served only by itself', async () => {
    for (const server of [a, b]) {
      const warned = logged(server).filter((l) => l.domain === 'qr' && l.level === 'warn')
      expect(warned).toHaveLength(1)
      expect(warned[0]!.msg).toContain('links made here are served only by this instance; set ALMANAC_QR_STORE=s3://… to share them')
      const ready = await fetch(`${server.url}/readyz`)
      expect(ready.status).toBe(200)
      const body = (await ready.json()) as any
      expect(body.status).toBe('ready')
      expect(body.warnings).toContainEqual({ domain: 'qr', component: 'qr_store', problem: warned[0]!.msg })
    }
  })

  test('a link made on A, asked of B, is a 404 saying it is not stored on this instance, not that it is no longer stored', async () => {
    const res = await make(a.url, 'made on A')
    expect(res.status).toBe(200)
    const link = new URL(((await res.json()) as { url: string }).url)
    expect(link.origin).toBe(a.url)
    expect((await fetch(link)).status).toBe(200)
    const elsewhere = await fetch(b.url + link.pathname + link.search)
    expect(elsewhere.status).toBe(404)
    const detail = await detailOf(elsewhere)
    expect(detail).toContain('not stored on this instance')
    expect(detail).toContain('another instance')
    expect(detail).toContain('ALMANAC_QR_STORE=s3://')
    expect(detail).not.toContain('no longer stored')
  })
})

test("with each instance's own signing key, another instance's link is a 403 that says so", async () => {
  const [c, d] = await Promise.all([instance(), instance()])
  const res = await make(c.url, 'made on C')
  const link = new URL(((await res.json()) as { url: string }).url)
  const elsewhere = await fetch(d.url + link.pathname + link.search)
  expect(elsewhere.status).toBe(403)
  const detail = await detailOf(elsewhere)
  expect(detail).toContain('ALMANAC_QR_SIGNING_KEY')
  expect(detail).toContain('another instance')
}, 130_000)

test('one directory every instance mounts (local:/path) is no warning: it may be shared', async () => {
  const server = await instance({ ALMANAC_QR_STORE: `local:${tempDir()}`, ALMANAC_QR_SIGNING_KEY: SIGNING_KEY })
  expect(logged(server).filter((l) => l.domain === 'qr' && l.level === 'warn')).toEqual([])
  expect(((await (await fetch(`${server.url}/readyz`)).json()) as any).warnings ?? []).not.toContainEqual(
    expect.objectContaining({ domain: 'qr' }),
  )
}, 130_000)

test('a single instance (no shared store) says nothing of other instances: no warning, a missing image no longer stored', async () => {
  const server = await startFromSource(tempDir, { ALMANAC_EMAIL_DNS_CHECK_NAMES: 'none', ALMANAC_QR_SIGNING_KEY: SIGNING_KEY })
  running.push(server)
  expect(logged(server).filter((l) => l.domain === 'qr' && l.level === 'warn')).toEqual([])
  // A link this server signed for an image it never stored (the same key signs it here).
  const path = `/files/qr/${'0'.repeat(64)}.svg`
  const expires = 4_000_000_000
  const res = await fetch(`${server.url}${path}?expires=${expires}&signature=${createSigner(SIGNING_KEY, tempDir()).sign(path, expires)}`)
  expect([res.status, await detailOf(res)]).toEqual([404, 'This QR image is no longer stored.'])
}, 130_000)
