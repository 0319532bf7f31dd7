/**
 * Probes of the qr domain for the executable test (test/build/probes.ts): a png whose signed link is
 * fetched from the executable's own download route (outside /api/v1, no key) and decoded by zbar, an svg
 * link, an inline base64 image, and a large one made by the render worker (found inside the executable).
 */
import { expect } from 'bun:test'
import type { Probe } from '../../build/probes.ts'
import { fromDataUri, rasterise, zbar } from './decode.ts'

const LARGE = 'Almanac render worker '.repeat(40) // 880 bytes: version 24 at M, over image.ts's WORKER_VERSION

const WIFI = 'WIFI:T:WPA;S:Caf\\;é;P:pa\\:ss\\,word;H:false;;'

async function fetchImage(url: string, type: string): Promise<Uint8Array> {
  const res = await fetch(url)
  expect([res.status, res.headers.get('content-type')]).toEqual([200, type])
  return new Uint8Array(await res.arrayBuffer())
}

export const probes: Probe[] = [
  {
    method: 'POST',
    path: '/api/v1/qr/wifi',
    body: { ssid: 'Caf;é', password: 'pa:ss,word', size: 300 },
    check: async (b) => {
      expect(b).toMatchObject({ format: 'png', preset: 'wifi', size: 300 })
      const png = await fetchImage(b.url, 'image/png')
      expect(new DataView(png.buffer).getUint32(16)).toBe(300) // IHDR width
      expect(zbar(png)).toBe(WIFI)
    },
  },
  {
    method: 'POST',
    path: '/api/v1/qr/geo',
    body: { latitude: 51.5007, longitude: -0.1246, format: 'svg' },
    check: async (b) => {
      expect(zbar(rasterise(await fetchImage(b.url, 'image/svg+xml')))).toBe('geo:51.5007,-0.1246')
    },
  },
  {
    method: 'POST',
    path: '/api/v1/qr/text',
    body: { text: 'Almanac ✓', format: 'base64' },
    check: (b) => {
      expect(zbar(fromDataUri(b.data_uri))).toBe('Almanac ✓')
    },
  },
  {
    method: 'POST',
    path: '/api/v1/qr/text',
    body: { text: LARGE, format: 'base64', size: 800 },
    check: (b) => {
      expect(b.version).toBeGreaterThanOrEqual(20)
      expect(zbar(fromDataUri(b.data_uri))).toBe(LARGE)
    },
  },
]
