/**
 * Per-key shares of the local QR store (finding 3 of issue "Fair share"): a key over its share gets a
 * 429 that says when its own links free room, while other keys keep storing; expiry on the injected
 * clock gives the share back; the global cap is still a 503; the ledger outlives a restart. Sizes are
 * read back from the stored images, not computed by the code under test. Every test runs on both ledgers:
 * SQLite in the state dir (one instance) and the quota store's Redis (several; a real redis-server).
 */
import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { RedisClient } from 'bun'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { LEDGER_FILE, stateDirLedger, type StoreLedger } from '../../../src/domains/qr/shares.ts'
import { redisLedger, shareKeys } from '../../../src/domains/qr/shares-redis.ts'
import { TEST_KEY } from '../../support/app.ts'
import { startRedis, type TestRedis } from '../../support/redis.ts'
import { tempDirs } from '../../support/temp.ts'
import { fill, heldBy, KEY_B, qrApp, type QrTestApp, type Stored, TWO_KEYS } from './harness.ts'

const SHARE = 6000
const tempDir = tempDirs('almanac-qr-shares-')

let redis: TestRedis
let client: RedisClient
beforeAll(async () => {
  redis = await startRedis()
  client = new RedisClient(redis.url)
})
afterAll(async () => {
  client?.close()
  await redis?.close()
})

interface Ledger {
  kind: string
  /** Settings that put the ledger there, on a fresh (empty) ledger. */
  env(): Promise<Record<string, string>>
  /** The ledger opened directly. */
  open(): StoreLedger
  /** Each caller's charged bytes, smallest first, read from the ledger's own storage. */
  charged(app: QrTestApp): Promise<number[]>
  /** That a caller whose charges (a: 100 bytes to T + 60; b: 100 to T + 120) have expired leaves nothing behind in the end. */
  forgets(l: StoreLedger, T: number): Promise<void>
}

const sqlite: Ledger = {
  kind: 'SQLite in the state dir',
  env: async () => ({}),
  open: () => stateDirLedger(tempDir()),
  async charged(app) {
    const db = new Database(join(app.stateDir, LEDGER_FILE), { readonly: true })
    try {
      const rows = db.query('SELECT SUM(bytes) AS bytes FROM qr_charges GROUP BY caller ORDER BY 1').all() as { bytes: number }[]
      return rows.map((r) => r.bytes)
    } finally {
      db.close()
    }
  },
  async forgets(l, T) {
    // The sweeper's prune drops what expired, whether or not the caller comes back.
    await l.prune(T + 60)
    expect(await l.held('a', T)).toBe(0)
    expect(await l.held('b', T)).toBe(100)
  },
}

const inRedis: Ledger = {
  kind: "the quota store's Redis",
  async env() {
    await client.send('FLUSHALL', [])
    return { ALMANAC_QUOTA_STORE: redis.url }
  },
  open: () => redisLedger(redis.url),
  async charged() {
    const keys = (await client.send('KEYS', ['almanac:qr:share:*:bytes'])) as string[]
    const sums = await Promise.all(
      keys.map(async (k) => ((await client.send('HVALS', [k])) as string[]).reduce((sum, b) => sum + Number(b), 0)),
    )
    return sums.sort((x, y) => x - y)
  },
  async forgets() {
    // Nothing to prune: Redis drops a caller's keys itself, an hour after its last charge ends (b's, at T + 120).
    for (const key of shareKeys('b')) {
      const ttl = Number(await client.send('TTL', [key]))
      expect(ttl).toBeGreaterThan(0)
      expect(ttl).toBeLessThanOrEqual(120 + 3600)
    }
  },
}

/** When enough of `stored` (oldest link first) has expired for `image` more bytes to fit in `share`. */
function roomAt(stored: Stored[], image: number, share: number): number {
  let left = heldBy(stored)
  for (const s of [...stored].sort((a, b) => a.expires - b.expires)) {
    left -= s.bytes
    if (left + image <= share) return s.expires
  }
  throw new Error('never fits')
}

const svg = (text: string, ttl = 600) => ({ body: { text, format: 'svg', ttl } })

function shareTests(ledger: Ledger) {
  describe(`a key over its share of the local store (${ledger.kind})`, () => {
    test('gets a 429 saying when its links free room; another key still stores, even the very same image', async () => {
      const app = await qrApp({ ...(await ledger.env()), ...TWO_KEYS, ALMANAC_QR_STORE_MAX_BYTES_PER_KEY: String(SHARE) })
      try {
        const { stored, refused } = await fill(app, TEST_KEY, 'a', 600)
        expect(stored.length).toBeGreaterThanOrEqual(2)
        const now = Math.floor(app.clock.ms / 1000)
        const held = heldBy(stored)
        const problem = refused.body
        expect(refused.status).toBe(429)
        expect(problem).toMatchObject({ type: 'urn:almanac:problem:quota', status: 429, share_bytes: SHARE, held_bytes: held })
        expect(held + problem.image_bytes).toBeGreaterThan(SHARE)
        expect(problem.frees_at).toBe(roomAt(stored, problem.image_bytes, SHARE))
        expect(refused.headers.get('retry-after')).toBe(String(problem.frees_at - now))
        expect(problem.detail).toContain('ALMANAC_QR_STORE_MAX_BYTES_PER_KEY')
        expect(problem.detail).toContain(new Date(problem.frees_at * 1000).toISOString())
        // Nothing was stored for the refused image.
        expect(readdirSync(join(app.stateDir, 'qr')).length).toBe(stored.length)

        // Form A: the same problem under `error`, the same Retry-After.
        const enveloped = await app.json('POST', '/api/v1/qr/text', { ...svg(refused.text, refused.ttl), form: 'enveloped' })
        expect(enveloped.status).toBe(429)
        expect(enveloped.body.status).toBe('error')
        expect(enveloped.body.error).toMatchObject({ status: 429, held_bytes: held, frees_at: problem.frees_at })
        expect(enveloped.headers.get('retry-after')).toBe(String(problem.frees_at - now))

        // Key B keeps its share: the image A was refused, then one of its own.
        const b = await app.json('POST', '/api/v1/qr/text', { ...svg(refused.text, refused.ttl), key: KEY_B, form: 'bare' })
        expect(b.status).toBe(200)
        expect((await app.download(b.body.url)).status).toBe(200)
        expect((await app.json('POST', '/api/v1/qr/text', { ...svg('b-own'), key: KEY_B })).status).toBe(200)

        // What A holds already costs no new bytes; base64 stores nothing and is not charged.
        expect((await app.json('POST', '/api/v1/qr/text', svg('a-0', 900))).status).toBe(200)
        expect((await app.json('POST', '/api/v1/qr/text', { body: { text: 'a-base64', format: 'base64' } })).status).toBe(200)
      } finally {
        await app.close()
      }
    })

    test('gets its share back when its links expire, on the clock alone (no sweep needed)', async () => {
      const app = await qrApp({
        ...(await ledger.env()),
        ...TWO_KEYS,
        ALMANAC_QR_STORE_MAX_BYTES_PER_KEY: String(SHARE),
        ALMANAC_QR_SWEEP_INTERVAL: '86400',
      })
      try {
        const { stored, refused } = await fill(app, TEST_KEY, 'a', 600)
        const freesAt = refused.body.frees_at as number
        app.clock.ms = (freesAt - 1) * 1000
        expect((await app.json('POST', '/api/v1/qr/text', svg(refused.text))).status).toBe(429)
        app.clock.ms = freesAt * 1000
        expect((await app.json('POST', '/api/v1/qr/text', svg(refused.text))).status).toBe(200)
        // Past every link: the whole share is free again.
        app.clock.ms = (Math.max(...stored.map((s) => s.expires)) + 600) * 1000
        const again = await fill(app, TEST_KEY, 'again', 600)
        expect(again.stored.length).toBeGreaterThanOrEqual(stored.length - 1)
        expect(again.refused.status).toBe(429)
      } finally {
        await app.close()
      }
    })

    test('an image larger than the whole share is a 429 without Retry-After that says what to ask for instead', async () => {
      const app = await qrApp({ ...(await ledger.env()), ALMANAC_QR_STORE_MAX_BYTES_PER_KEY: '1024' })
      try {
        const { status, body, headers } = await app.json('POST', '/api/v1/qr/text', { ...svg('x'.repeat(100)), form: 'bare' })
        expect(status).toBe(429)
        expect(headers.get('retry-after')).toBeNull()
        expect(body).toMatchObject({ held_bytes: 0, share_bytes: 1024, frees_at: null })
        expect(body.detail).toContain('base64')
      } finally {
        await app.close()
      }
    })

    test('the ledger outlives a restart', async () => {
      const stateDir = tempDir()
      const env = { ...(await ledger.env()), ...TWO_KEYS, ALMANAC_STATE_DIR: stateDir, ALMANAC_QR_STORE_MAX_BYTES_PER_KEY: String(SHARE) }
      const first = await qrApp(env)
      const { stored, refused } = await fill(first, TEST_KEY, 'a', 600)
      await first.close()
      const second = await qrApp(env)
      try {
        const again = await second.json('POST', '/api/v1/qr/text', { ...svg(refused.text), form: 'bare' })
        expect(again.status).toBe(429)
        expect(again.body.held_bytes).toBe(heldBy(stored))
        expect((await second.json('POST', '/api/v1/qr/text', { ...svg('b-0'), key: KEY_B })).status).toBe(200)
      } finally {
        await second.close()
      }
    })
  })

  test(`the global cap still applies (${ledger.kind}): within its share, a 503 when the store is full, not charged`, async () => {
    const app = await qrApp({
      ...(await ledger.env()),
      ...TWO_KEYS,
      ALMANAC_QR_STORE_MAX_BYTES: '8000',
      ALMANAC_QR_STORE_MAX_BYTES_PER_KEY: String(SHARE),
    })
    try {
      const a = await fill(app, TEST_KEY, 'a', 600)
      expect(a.refused.status).toBe(429)
      const b = await fill(app, KEY_B, 'b', 3600)
      expect(heldBy(a.stored) + heldBy(b.stored)).toBeLessThanOrEqual(8000)
      expect(b.refused.status).toBe(503)
      expect(b.refused.headers.get('retry-after')).toBe('30')
      expect(b.refused.body.detail).toContain('ALMANAC_QR_STORE_MAX_BYTES')
      // B was within its own share: the 503 is the store's, and the image it could not store is not charged.
      expect(await ledger.charged(app)).toEqual([heldBy(a.stored), heldBy(b.stored)].sort((x, y) => x - y))
    } finally {
      await app.close()
    }
  })

  describe(`the ledger (${ledger.kind})`, () => {
    const T = 2_000_000_000
    test('charges an image once per caller, moves its expiry forward, and undoes exactly its own charge', async () => {
      const l = ledger.open()
      await ledger.env()
      try {
        expect(await l.charge('a', 'x', 100, T + 60, T, 250)).toMatchObject({ ok: true, held: 100 })
        const again = await l.charge('a', 'x', 100, T + 120, T, 250)
        expect(again).toMatchObject({ ok: true, held: 100 })
        expect(await l.held('a', T + 90)).toBe(100) // the later expiry counts
        const y = await l.charge('a', 'y', 100, T + 30, T, 250)
        expect(await l.charge('a', 'z', 100, T + 60, T, 250)).toEqual({ ok: false, held: 200, freesAt: T + 30 })
        expect(await l.charge('b', 'z', 100, T + 120, T, 250)).toMatchObject({ ok: true, held: 100 })
        if (!y.ok) throw new Error('y refused')
        await y.undo()
        expect(await l.held('a', T)).toBe(100)
        if (!again.ok) throw new Error('again refused')
        await again.undo()
        expect(await l.held('a', T + 90)).toBe(0) // back to the first expiry, T + 60
        expect(await l.charge('a', 'w', 300, T + 60, T, 250)).toEqual({ ok: false, held: 100, freesAt: undefined })
        await ledger.forgets(l, T)
      } finally {
        l.close()
      }
    })
  })
}

shareTests(sqlite)
shareTests(inRedis)

test('one request stores a bounded image: a maximal svg or png stays under its analytic ceiling', async () => {
  // Version 40 (177 modules) at level L, the widest quiet zone, the largest png. SVG: at most 89 runs a
  // row, each `M<x> <y>h<w>v1h-<w>z` of at most 20 characters; PNG: never more than its raw 1-bit rows.
  const app = await qrApp({ ALMANAC_QR_STORE_MAX_BYTES_PER_KEY: String(2 ** 20) })
  try {
    const text = Array.from({ length: 2953 }, (_, i) => String.fromCharCode(33 + ((i * 7919 + ((i * i) % 89)) % 94))).join('')
    const sizes: Record<string, number> = {}
    for (const format of ['svg', 'png'] as const) {
      const res = await app.json('POST', '/api/v1/qr/text', {
        body: { text, format, error_correction: 'L', margin: 20, size: 2000 },
        form: 'bare',
      })
      expect([res.status, res.body.version]).toEqual([200, 40])
      sizes[format] = (await (await app.download(res.body.url)).arrayBuffer()).byteLength
    }
    expect(sizes.svg).toBeGreaterThan(100_000) // a maximal image indeed
    expect(sizes.svg).toBeLessThan(177 * 89 * 20 + 400)
    expect(sizes.png).toBeLessThan(2000 * (1 + 2000 / 8) + 1000)
  } finally {
    await app.close()
  }
})
