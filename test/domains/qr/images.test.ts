/**
 * The images themselves, read back by pngjs (not our code): exact size, only the two colours asked for,
 * the quiet zone, the three finder patterns, the error correction level in the format information, and
 * the SVG's geometry. Each EC level is decoded by zbar and jsQR.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { decodeBoth, rasterise, readPng, zbar } from './decode.ts'
import { imageOf, qrApp, type QrTestApp } from './harness.ts'
import { ecLevelOf, hasFinder, moduleReader } from './modules.ts'

let app: QrTestApp
beforeAll(async () => {
  app = await qrApp()
})
afterAll(() => app.close())

const make = async (body: Record<string, unknown>, preset = 'text') => {
  const { status, body: result } = await app.json('POST', `/api/v1/qr/${preset}`, { body, form: 'bare' })
  expect({ status, detail: result.detail }).toEqual({ status: 200, detail: undefined })
  return { result, bytes: (await imageOf(app, result)).bytes }
}

const rgb = (hex: string): [number, number, number] => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)) as [number, number, number]

/** Every distinct RGBA colour of an image, as #RRGGBBAA. */
function colours(p: { data: Uint8Array }): Set<string> {
  const seen = new Set<number>()
  const view = new DataView(p.data.buffer, p.data.byteOffset, p.data.length)
  for (let i = 0; i < p.data.length; i += 4) seen.add(view.getUint32(i))
  return new Set([...seen].map((v) => '#' + v.toString(16).padStart(8, '0').toUpperCase()))
}

describe('png pixels', () => {
  test.each([
    [100, 0, 'a'],
    [400, 4, 'https://example.com/'],
    [401, 4, 'odd size: modules of unequal width'],
    [777, 20, 'widest quiet zone'],
    [2000, 1, 'largest size'],
  ] as const)(
    'size %i, margin %i: exact dimensions, two colours, finders, quiet zone, decodes',
    async (size, margin, text) => {
      const { result, bytes } = await make({ text, size, margin, fg_color: '#1A2B3C', bg_color: '#fafaf0' })
      const p = readPng(bytes)
      expect([p.width, p.height]).toEqual([size, size])
      expect(colours(p)).toEqual(new Set(['#1A2B3CFF', '#FAFAF0FF']))
      expect(result).toMatchObject({ size, margin, fg_color: '#1A2B3C', bg_color: '#FAFAF0', warnings: [] })
      const m = moduleReader(p, result.modules, margin, rgb('#1A2B3C'))
      const n = result.modules
      expect([hasFinder(m, 0, 0), hasFinder(m, 0, n - 7), hasFinder(m, n - 7, 0)]).toEqual([true, true, true])
      // No finder in the fourth corner: the image is not mirrored.
      expect(hasFinder(m, n - 7, n - 7)).toBe(false)
      // The quiet zone: every pixel left of the first module column is background.
      const firstDark = Math.floor((margin * size) / (n + 2 * margin))
      let foreign = 0
      for (let y = 0; y < size; y++) for (let x = 0; x < firstDark; x++) if (p.data[(y * size + x) * 4] !== 0xfa) foreign++
      expect(foreign).toBe(0)
      expect(decodeBoth(bytes)).toEqual({ zbar: text, jsqr: text })
    },
    30_000,
  )

  test('#RGB shorthand and case-insensitive colours give the same image as #RRGGBB', async () => {
    const a = await make({ text: 'colours', fg_color: '#03a', bg_color: '#FFE' })
    const b = await make({ text: 'colours', fg_color: '#0033AA', bg_color: '#ffffee' })
    expect(a.result.url.split('?')[0]).toBe(b.result.url.split('?')[0])
    expect(colours(readPng(a.bytes))).toEqual(new Set(['#0033AAFF', '#FFFFEEFF']))
  })

  test('low contrast and inverted colours still render, with warnings', async () => {
    const low = await make({ text: 'low', fg_color: '#777777', bg_color: '#888888' })
    expect(low.result.warnings).toEqual([expect.stringContaining('contrast ratio of 1.')])
    const inverted = await make({ text: 'inverted', fg_color: '#FFFFFF', bg_color: '#000000' })
    expect(inverted.result.warnings).toEqual([expect.stringContaining('inverted')])
    const good = await make({ text: 'fine', fg_color: '#000080', bg_color: '#FFFF00' })
    expect(good.result.warnings).toEqual([])
  })

  test('under 2 pixels a module: a warning; fewer pixels than modules: a 422 stating the least size', async () => {
    // 300 bytes at M: version 13 (ISO/IEC 18004 table 7: v12 holds 287 bytes, v13 331), 69 modules + 8.
    const text = 'x'.repeat(300)
    const small = await make({ text, size: 100 })
    expect(small.result.modules + 8).toBe(77)
    expect(small.result.warnings).toEqual([expect.stringContaining('at least 154')])
    // The warning is earned (zbar cannot read it), and the size it recommends does scan.
    expect(zbar(small.bytes)).toBeNull()
    const enough = await make({ text, size: 154 })
    expect(enough.result.warnings).toEqual([])
    expect(zbar(enough.bytes)).toBe(text)
    const { status, body } = await app.json('POST', '/api/v1/qr/text', { body: { text: 'x'.repeat(1000), size: 100 }, form: 'bare' })
    expect(status).toBe(422)
    expect(body.errors[0].field).toBe('size')
    expect(body.detail).toMatch(/at least \d+/)
  })
})

describe('error correction levels', () => {
  const text = 'Error correction test: the same text at every level.'
  test.each(['L', 'M', 'Q', 'H'] as const)(
    '%s: in the format information, decodes, and holds less data the higher it goes',
    async (level) => {
      const { result, bytes } = await make({ text, error_correction: level })
      expect(result.error_correction).toBe(level)
      const m = moduleReader(readPng(bytes), result.modules, 4, [0, 0, 0])
      expect(ecLevelOf(m)).toBe(level)
      expect(decodeBoth(bytes)).toEqual({ zbar: text, jsqr: text })
      // 52 bytes; ISO/IEC 18004 table 7 byte capacities: v3 L 53; v4 M 62; v5 Q 60; v6 H 58 (each level's previous version holds fewer).
      expect(result.version).toBe({ L: 3, M: 4, Q: 5, H: 6 }[level])
    },
  )

  test('svg carries the level too', async () => {
    const { result, bytes } = await make({ text, error_correction: 'H', format: 'svg' })
    const png = rasterise(bytes, 37 * 10)
    const m = moduleReader(readPng(png), result.modules, 4, [0, 0, 0])
    expect(ecLevelOf(m)).toBe('H')
  })
})

describe('svg', () => {
  test('one path, black on white, a viewBox with the quiet zone, no pixel size; colours and size ignored with warnings', async () => {
    const { result, bytes } = await make({ text: 'svg', format: 'svg', margin: 2, fg_color: '#FF0000', size: 900 })
    const svg = new TextDecoder().decode(bytes)
    const n = result.modules + 4
    expect(svg).toContain(`viewBox="0 0 ${n} ${n}"`)
    expect(svg.match(/<path /g)?.length).toBe(1)
    expect(svg).toContain('fill="#000000"')
    expect(svg).toContain(`<rect width="${n}" height="${n}" fill="#FFFFFF"/>`)
    expect(svg).not.toMatch(/<svg[^>]* width=/)
    expect(result).toMatchObject({ size: null, fg_color: '#000000', bg_color: '#FFFFFF' })
    expect(result.warnings).toEqual([
      expect.stringContaining('fg_color and bg_color are ignored'),
      expect.stringContaining('size is ignored'),
    ])
    // Rasterised at 10 px a module, the pixels are only black and white, and the finders are in place.
    const p = readPng(rasterise(svg, n * 10))
    expect(colours(p)).toEqual(new Set(['#000000FF', '#FFFFFFFF']))
    const m = moduleReader(p, result.modules, 2, [0, 0, 0])
    expect(hasFinder(m, 0, 0)).toBe(true)
  })
})

test('base64: a PNG data URI of the asked size, nothing stored', async () => {
  const { result, bytes } = await make({ text: 'inline', format: 'base64', size: 150, fg_color: '#006400', ttl: 600 })
  expect(result.data_uri).toStartWith('data:image/png;base64,')
  expect(result.url).toBeUndefined()
  expect(result.expires).toBeUndefined()
  expect(result.warnings).toEqual([expect.stringContaining('ttl is ignored')])
  const p = readPng(bytes)
  expect([p.width, p.height]).toEqual([150, 150])
  expect(colours(p)).toEqual(new Set(['#006400FF', '#FFFFFFFF']))
  expect(decodeBoth(bytes)).toEqual({ zbar: 'inline', jsqr: 'inline' })
})
