/**
 * renderPng against the image docs/qr.md promises, read back by an independent decoder (pngjs): every pixel
 * (x, y) shows module (floor(x·t/size) − margin, floor(y·t/size) − margin), t = modules + 2·margin, in the
 * foreground colour when that module is dark, else the background (the quiet zone included).
 */
import { describe, expect, test } from 'bun:test'
import { encodeMatrix } from '../../../src/domains/qr/matrix.ts'
import { renderPng } from '../../../src/domains/qr/png.ts'
import { readPng } from './decode.ts'

const fg = { r: 0x12, g: 0x34, b: 0x56 }
const bg = { r: 0xfe, g: 0xdc, b: 0xba }

/** Pixels whose colour differs from the module the formula names, counted over the whole image. */
function wrongPixels(text: string, size: number, margin: number): number {
  const matrix = encodeMatrix(text, 'M', 'text')
  const p = readPng(renderPng(matrix, { size, margin, fg, bg }))
  expect([p.width, p.height]).toEqual([size, size])
  const n = matrix.size
  const total = n + 2 * margin
  const moduleAt = (pixel: number) => Math.floor((pixel * total) / size) - margin
  let wrong = 0
  for (let y = 0; y < size; y++)
    for (let x = 0; x < size; x++) {
      const row = moduleAt(y)
      const col = moduleAt(x)
      const dark = row >= 0 && row < n && col >= 0 && col < n && !!matrix.data[row * n + col]
      const want = dark ? fg : bg
      const i = (y * size + x) * 4
      if (p.data[i] !== want.r || p.data[i + 1] !== want.g || p.data[i + 2] !== want.b) wrong++
    }
  return wrong
}

describe('renderPng pixels', () => {
  test.each([
    ['a URL', 'https://example.com/', 400, 4],
    ['odd size: modules of unequal width', 'odd size', 401, 4],
    ['no quiet zone', 'no quiet zone', 333, 0],
    ['as many pixels as modules (version 2, 25 + 4)', 'as few pixels as modules', 29, 2],
    ['one pixel more than modules', 'as few pixels as modules', 30, 2],
    ['a larger code', 'a longer text, version 10 or so: '.repeat(6), 1000, 7],
    ['a wide quiet zone', 'wide quiet zone', 777, 20],
  ] as const)('%s', (_, text, size, margin) => {
    expect(wrongPixels(text, size, margin)).toBe(0)
  })
})
