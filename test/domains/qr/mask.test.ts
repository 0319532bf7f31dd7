/**
 * Our mask choice (mask.ts, packed words) against npm qrcode's own (getBestMask, one module at a time) as
 * the oracle: for the same segments, the whole matrix is the same bit for bit, format bits included, on
 * random texts at every level from version 1 to 40. And the bound that lets segmentation skip version
 * ranges is never above the bits the optimal segments take.
 */
import { expect, test } from 'bun:test'
import { create } from 'qrcode/lib/core/qrcode.js'
import { encodeMatrix, EC_LEVELS, segmentsFor } from '../../../src/domains/qr/matrix.ts'
import { leastBits, optimalSegments, segmentBits } from '../../../src/domains/qr/segments.ts'
import { rng } from '../../support/random.ts'

const ALPHABETS = ['0123456789', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:', 'abcdefghijklmnopqrstuvwxyz!#&()', 'éü€世😀']

function randomText(next: () => number, length: number): string {
  let out = ''
  let alphabet = Array.from(ALPHABETS[0]!)
  while (out.length < length) {
    if (next() < 0.1) alphabet = Array.from(ALPHABETS[Math.floor(next() * ALPHABETS.length)]!)
    out += alphabet[Math.floor(next() * alphabet.length)]
  }
  return out
}

test('the matrix is the one qrcode makes with its own mask choice, bit for bit, versions 1-40', () => {
  const next = rng(24)
  const versions = new Set<number>()
  for (const level of EC_LEVELS)
    for (let i = 0; i < 60; i++) {
      const text = randomText(next, 1 + Math.floor(next() ** 2 * 2900))
      let theirs
      try {
        theirs = create(segmentsFor(text, level), { errorCorrectionLevel: level })
      } catch {
        continue // over the level's capacity
      }
      const ours = encodeMatrix(text, level, 'text')
      versions.add(ours.version)
      expect({ text, level, version: ours.version }).toEqual({ text, level, version: theirs.version })
      expect(Buffer.from(ours.data).equals(Buffer.from(theirs.modules.data))).toBe(true)
    }
  expect(versions.size).toBeGreaterThan(25)
  expect(Math.max(...versions)).toBe(40)
})

test('leastBits never exceeds the optimal segments’ bits in any version range', () => {
  const next = rng(7)
  for (let i = 0; i < 300; i++) {
    const text = randomText(next, 1 + Math.floor(next() * 800)) + (i % 10 === 0 ? '\ud800' : '')
    for (const range of [0, 1, 2] as const) expect(leastBits(text)).toBeLessThanOrEqual(segmentBits(optimalSegments(text, range), range))
  }
})
