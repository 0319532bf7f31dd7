/**
 * Our segmentation against npm qrcode's own optimiser (a different algorithm: Dijkstra over a graph) as
 * the oracle: on random texts mixing digits, capitals, lower case and non-ASCII, ours never takes more
 * bits, and the code it leads to is never a larger version. zbar decodes a sample back.
 */
import { expect, test } from 'bun:test'
import { create } from 'qrcode/lib/core/qrcode.js'
import { optimalSegments, segmentBits } from '../../../src/domains/qr/segments.ts'
import { encodeMatrix } from '../../../src/domains/qr/matrix.ts'
import { renderPng } from '../../../src/domains/qr/png.ts'
import { rng } from '../../support/random.ts'
import { zbar } from './decode.ts'

const ALPHABETS = ['0123456789', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:', 'abcdefghijklmnopqrstuvwxyz', 'éü€世😀']

function randomText(next: () => number, length: number): string {
  let out = ''
  let alphabet = ALPHABETS[0]!
  while (out.length < length) {
    if (next() < 0.2) alphabet = ALPHABETS[Math.floor(next() * ALPHABETS.length)]!
    const chars = Array.from(alphabet)
    out += chars[Math.floor(next() * chars.length)]
  }
  return out
}

test('never more bits nor a larger version than npm qrcode’s optimiser; decodes back', () => {
  const next = rng(16)
  for (let i = 0; i < 150; i++) {
    const text = randomText(next, 1 + Math.floor(next() * 600))
    const theirs = create(text, { errorCorrectionLevel: 'M' })
    const ours = encodeMatrix(text, 'M', 'text')
    expect({ text, version: ours.version <= theirs.version }).toEqual({ text, version: true })
    const range = theirs.version < 10 ? 0 : theirs.version < 27 ? 1 : 2
    const theirBits = (theirs as any).segments.reduce((sum: number, s: any) => sum + 4 + s.mode.ccBits[range] + s.getBitsLength(), 0)
    expect(segmentBits(optimalSegments(text, range), range)).toBeLessThanOrEqual(theirBits)
    if (i % 15 === 0)
      expect(
        zbar(renderPng(ours, { size: 8 * (ours.size + 8), margin: 4, fg: { r: 0, g: 0, b: 0 }, bg: { r: 255, g: 255, b: 255 } })),
      ).toBe(text)
  }
})

test('pure runs take their dense mode', () => {
  expect(optimalSegments('0123456789', 0)).toEqual([{ data: '0123456789', mode: 'numeric' }])
  expect(optimalSegments('HELLO WORLD', 0)).toEqual([{ data: 'HELLO WORLD', mode: 'alphanumeric' }])
  expect(optimalSegments('hello', 0)).toEqual([{ data: 'hello', mode: 'byte' }])
  // A short digit run inside lower-case text is not worth its own segment header.
  expect(optimalSegments('abc12def', 0)).toEqual([{ data: 'abc12def', mode: 'byte' }])
})
