/**
 * What a QR request costs the server (issue "Fair share"): a key with no room left for even the smallest
 * image is refused before any image is made (the made-images counters in /metrics do not move, nothing is
 * stored, the ledger holds what it held); a key with some room still gets the exact answer, made first.
 * Large symbols and large PNGs are made in the render worker, with answers identical to the loop's:
 * the same bytes (the same content-addressed name), decoded back by zbar, the same 422s.
 */
import { describe, expect, test } from 'bun:test'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { capacityOf } from '../../../src/domains/qr/matrix.ts'
import { makeImage } from '../../../src/domains/qr/image.ts'
import { DEFAULTS } from '../../../src/domains/qr/service.ts'
import { rng } from '../../support/random.ts'
import { fromDataUri, rasterise, zbar } from './decode.ts'
import { KEY_B, qrApp, type QrTestApp, TWO_KEYS } from './harness.ts'

async function counters(app: QrTestApp) {
  const text = await (await app.request('GET', '/metrics', { key: null })).text()
  const read = (series: string) => Number(new RegExp(`^${series.replace(/[{}"[\]]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN)
  return {
    loop: read('almanac_qr_images_made_total{where="loop"}'),
    worker: read('almanac_qr_images_made_total{where="worker"}'),
    refusedUnmade: read('almanac_qr_refused_unmade_total'),
  }
}

const storedFiles = (app: QrTestApp) => readdirSync(join(app.stateDir, 'qr')).length

/** The bytes of an svg image of `text` as the API stores it, read back from its link (a throwaway app). */
async function storedSize(text: string): Promise<number> {
  const app = await qrApp()
  try {
    const res = await app.json('POST', '/api/v1/qr/text', { body: { text, format: 'svg' }, form: 'bare' })
    return (await (await app.download(res.body.url)).arrayBuffer()).byteLength
  } finally {
    await app.close()
  }
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz!#$%&()*+,-./:;<=>?@[]^_{|}~'
const randomText = (n: number, next = rng(21)) => Array.from({ length: n }, () => ALPHABET[Math.floor(next() * ALPHABET.length)]).join('')

describe('a key with no room for even the smallest image', () => {
  test('is refused before its image is made: counters still, nothing stored, the ledger untouched', async () => {
    const share = await storedSize('exactly the share')
    const app = await qrApp({ ...TWO_KEYS, ALMANAC_QR_STORE_MAX_BYTES_PER_KEY: String(share) })
    try {
      expect((await app.json('POST', '/api/v1/qr/text', { body: { text: 'exactly the share', format: 'svg', ttl: 600 } })).status).toBe(200)
      const before = await counters(app)
      expect(before).toMatchObject({ loop: 1, worker: 0, refusedUnmade: 0 })
      const files = storedFiles(app)
      for (const body of [
        { text: 'another', format: 'svg' },
        { text: 'another', format: 'png' },
        { text: randomText(2900), format: 'svg', error_correction: 'L', ttl: 2592000 }, // a maximal symbol
      ]) {
        const refused = await app.json('POST', '/api/v1/qr/text', { body, form: 'bare' })
        expect(refused.status).toBe(429)
        expect(refused.body).toMatchObject({ type: 'urn:almanac:problem:quota', held_bytes: share, share_bytes: share })
        expect(refused.body.detail).toContain('none was made')
        expect(Number(refused.headers.get('retry-after'))).toBe(600) // when its one link expires
      }
      expect(await counters(app)).toEqual({ ...before, refusedUnmade: 3 })
      expect(storedFiles(app)).toBe(files)
      // The ledger holds what it held: the key's share comes back when its link expires, not before.
      app.clock.ms += 599_000
      expect((await app.json('POST', '/api/v1/qr/text', { body: { text: 'another', format: 'svg' } })).status).toBe(429)
      app.clock.ms += 1000
      expect((await app.json('POST', '/api/v1/qr/text', { body: { text: 'another', format: 'svg' } })).status).toBe(200)
      // base64 stores nothing and is never refused for the share; another key stores meanwhile.
      expect((await app.json('POST', '/api/v1/qr/text', { body: { text: 'inline', format: 'base64' } })).status).toBe(200)
      expect((await app.json('POST', '/api/v1/qr/text', { body: { text: 'b', format: 'svg' }, key: KEY_B })).status).toBe(200)
    } finally {
      await app.close()
    }
  })

  test('with some room left, the image is made and charged exactly: a 429 with its real size when it does not fit', async () => {
    const first = await storedSize('first')
    const app = await qrApp({ ALMANAC_QR_STORE_MAX_BYTES_PER_KEY: String(first + 400) })
    try {
      expect((await app.json('POST', '/api/v1/qr/text', { body: { text: 'first', format: 'svg' } })).status).toBe(200)
      const text = 'a longer text that takes a larger symbol than 400 bytes of svg can hold'
      const refused = await app.json('POST', '/api/v1/qr/text', { body: { text, format: 'svg' }, form: 'bare' })
      expect(refused.status).toBe(429)
      expect(refused.body.image_bytes).toBe(await storedSize(text))
      expect(await counters(app)).toEqual({ loop: 2, worker: 0, refusedUnmade: 0 })
    } finally {
      await app.close()
    }
  })
})

describe('large symbols are made in the render worker', () => {
  test('a maximal svg and a 2000 px png: the loop’s bytes exactly, decoded back', async () => {
    const app = await qrApp()
    try {
      const text = randomText(2900)
      const svg = await app.json('POST', '/api/v1/qr/text', { body: { text, format: 'svg', error_correction: 'L' }, form: 'bare' })
      expect(svg.status).toBe(200)
      expect(svg.body).toMatchObject({ version: 40, modules: 177 })
      const loopSvg = makeImage(text, 'text', { ...DEFAULTS, format: 'svg', error_correction: 'L' })
      expect(svg.body.url).toContain(loopSvg.name)
      const svgBytes = new Uint8Array(await (await app.download(svg.body.url)).arrayBuffer())
      expect(Buffer.from(svgBytes).equals(Buffer.from(loopSvg.bytes))).toBe(true)
      expect(zbar(rasterise(svgBytes, 1600))).toBe(text)

      const png = await app.json('POST', '/api/v1/qr/url', {
        body: { url: 'https://example.com/a', size: 2000, format: 'base64' },
        form: 'bare',
      })
      expect(png.status).toBe(200)
      const loopPng = makeImage('https://example.com/a', 'url', { ...DEFAULTS, size: 2000 })
      expect(Buffer.from(fromDataUri(png.body.data_uri)).equals(Buffer.from(loopPng.bytes))).toBe(true)
      expect(zbar(fromDataUri(png.body.data_uri))).toBe('https://example.com/a')
      expect(await counters(app)).toEqual({ loop: 0, worker: 2, refusedUnmade: 0 })
    } finally {
      await app.close()
    }
  })

  test('its 422s are the loop’s: over capacity (with `capacity`) and a size under the modules', async () => {
    const app = await qrApp()
    try {
      const over = await app.json('POST', '/api/v1/qr/text', { body: { text: 'a'.repeat(2332), error_correction: 'M' }, form: 'bare' })
      expect(over.status).toBe(422)
      expect(over.body).toMatchObject({
        errors: [{ field: 'text' }],
        capacity: { error_correction: 'M', ...capacityOf('M') },
        payload_bytes: 2332,
      })
      const small = await app.json('POST', '/api/v1/qr/text', {
        body: { text: 'a'.repeat(2000), error_correction: 'L', size: 150 },
        form: 'bare',
      })
      expect(small.status).toBe(422)
      expect(small.body.errors[0].field).toBe('size')
      expect(small.body.detail).toContain('at least')
      expect((await counters(app)).worker).toBe(0)
    } finally {
      await app.close()
    }
  })
})
