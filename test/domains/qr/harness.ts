/** A real app with only the qr domain, a temporary state dir and a clock the test moves. */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { qrDomain } from '../../../src/domains/qr/index.ts'
import { TEST_KEY, testApp, type TestApp } from '../../support/app.ts'
import { fromDataUri } from './decode.ts'

export interface QrTestApp extends TestApp {
  stateDir: string
  clock: { ms: number }
  /** Fetches a link the API returned, through the same app (local links) or over the network (S3). */
  download(url: string, headers?: Record<string, string>): Promise<Response>
}

export const START_MS = Date.UTC(2030, 0, 1)

export async function qrApp(env: Record<string, string> = {}): Promise<QrTestApp> {
  const stateDir = mkdtempSync(join(tmpdir(), 'almanac-qr-state-'))
  const clock = { ms: START_MS }
  const app = await testApp({ domains: [qrDomain(() => clock.ms)], env: { ALMANAC_STATE_DIR: stateDir, ...env } })
  return {
    ...app,
    stateDir,
    clock,
    download(url, headers = {}) {
      const u = new URL(url)
      if (u.pathname.startsWith('/files/qr/')) return app.request('GET', u.pathname + u.search, { key: null, headers })
      return fetch(url, { headers })
    },
    async close() {
      await app.close()
      rmSync(stateDir, { recursive: true, force: true })
    },
  }
}

/** The image behind a result: downloaded (png, svg) or decoded from its data URI (base64). */
export async function imageOf(
  app: QrTestApp,
  result: { url?: string; data_uri?: string },
): Promise<{ bytes: Uint8Array; type: string | null }> {
  if (result.data_uri) return { bytes: fromDataUri(result.data_uri), type: 'image/png' }
  const res = await app.download(result.url!)
  if (res.status !== 200) throw new Error(`download ${result.url}: ${res.status} ${await res.text()}`)
  return { bytes: new Uint8Array(await res.arrayBuffer()), type: res.headers.get('content-type') }
}

/** A second API key on the same plan, for per-key shares of the store. */
export const KEY_B = 'second-key-0123456789'
export const TWO_KEYS = { ALMANAC_API_KEYS: `${TEST_KEY}:test,${KEY_B}:test` }

export interface Stored {
  url: string
  expires: number
  bytes: number
}

/**
 * Asks for distinct svg images (`<prefix>-0`, `-1` …) with `key`, each link living `ttl` seconds plus a
 * minute more than the one before, until an answer is not a 200 (at most `most`). Returns what was stored,
 * each image's size read back from its link, and the answer that ended the run.
 */
export async function fill(app: QrTestApp, key: string, prefix: string, ttl: number, most = 20) {
  const stored: Stored[] = []
  for (let i = 0; i < most; i++) {
    const res = await app.json('POST', '/api/v1/qr/text', {
      body: { text: `${prefix}-${i}`, format: 'svg', ttl: ttl + 60 * i },
      key,
      form: 'bare',
    })
    if (res.status !== 200) return { stored, refused: { ...res, text: `${prefix}-${i}`, ttl: ttl + 60 * i } }
    const download = await app.download(res.body.url)
    stored.push({ url: res.body.url, expires: res.body.expires, bytes: (await download.arrayBuffer()).byteLength })
  }
  throw new Error(`${most} images from one key were all stored`)
}

export const heldBy = (stored: Stored[]) => stored.reduce((sum, s) => sum + s.bytes, 0)
