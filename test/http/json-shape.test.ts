/**
 * The scan of a JSON body's text (json-shape.ts), against JSON.parse as the oracle: made in parts of any
 * size, it finds what a whole pass finds, and the text it leaves to parse reads as the whole text with its
 * per-item list cut to one item past the maximum.
 */
import { describe, expect, test } from 'bun:test'
import { JsonScan } from '../../src/http/admission/json-shape.ts'

/** A seeded generator (a test that fails must fail again). */
function random(seed: number) {
  return () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff), seed / 0x7fffffff)
}

/** Values with the characters a scan must read through: quotes, backslashes, brackets, commas and colons in strings. */
function value(r: () => number, depth = 0): unknown {
  const k = r()
  if (k < 0.3) return `a "quoted\\" [list], {obj}: ${Math.floor(r() * 100)} \u00e9`
  if (k < 0.45) return Math.floor(r() * 1000) / 8
  if (k < 0.65 && depth < 3) return [value(r, depth + 1), value(r, depth + 1)]
  if (k < 0.85 && depth < 3) return { a: value(r, depth + 1), 'b",]': value(r, depth + 1), items: [1, 2, 3, 4, 5, 6, 7] }
  return r() < 0.5 ? null : true
}

/** The body JSON.parse reads from `text`, with its list (`field` of the root object, or the root) cut to `max + 1` items. */
function oracle(text: string, field: string, max: number): unknown {
  const body = JSON.parse(text)
  const cut = (list: unknown) => (Array.isArray(list) && list.length > max + 1 ? list.slice(0, max + 1) : list)
  if (field === '') return cut(body)
  return body && typeof body === 'object' && !Array.isArray(body) ? { ...body, [field]: cut(body[field]) } : body
}

function scanned(text: string, list: { field: string; max: number }, part: number): JsonScan {
  const scan = new JsonScan(text, list)
  while (!scan.done) scan.advance(part)
  return scan
}

describe('JsonScan', () => {
  test('in parts of any size, the text left to parse reads as the body with its list cut (4,000 seeded bodies)', () => {
    const r = random(24)
    let cut = 0
    for (let n = 0; n < 4_000; n++) {
      const max = 1 + Math.floor(r() * 6)
      const list = Array.from({ length: Math.floor(r() * 14) }, () => value(r))
      const field = r() < 0.3 ? '' : 'items'
      const indent = r() < 0.5 ? 2 : undefined
      let text =
        field === '' ? JSON.stringify(list, null, indent) : JSON.stringify({ before: value(r), items: list, after: value(r) }, null, indent)
      // The member name written with an escape, and the member given twice (JSON.parse keeps the last).
      if (field && r() < 0.2) text = text.replace('"items"', '"it\\u0065ms"')
      if (field && r() < 0.2) text = text.replace(/}\s*$/, ', "items": [8, 9, 10, 11, 12, 13, 14, 15, 16] }')
      const scan = scanned(text, { field, max }, 1 + Math.floor(r() * 40))
      const parseable = scan.parseable()
      if (parseable !== text) cut++
      expect({ text, max, got: JSON.parse(parseable) }).toEqual({ text, max, got: oracle(text, field, max) })
    }
    // The case that matters was met often: lists over max + 1 (else parseable() is the text itself).
    expect(cut).toBeGreaterThan(800)
  })

  test('a list of 12,000 items is parsed from its first 101', () => {
    const text = JSON.stringify({ ua_list: Array.from({ length: 12_000 }, (_, i) => ({ ua: `probe/${i}` })), after: 1 })
    const parseable = scanned(text, { field: 'ua_list', max: 100 }, 64 * 1024).parseable()
    expect(parseable.length).toBeLessThan(text.length / 50)
    expect(JSON.parse(parseable)).toEqual(oracle(text, 'ua_list', 100))
  })

  test('the limits on depth and values hold whatever the parts', () => {
    const deep = `{"a":${'['.repeat(40)}${']'.repeat(40)}}`
    const wide = `{"a":[${'0,'.repeat(60_000)}0]}`
    for (const part of [1, 7, 4096, Infinity]) {
      expect(() => scanned(deep, { field: 'a', max: 5 }, part)).toThrow('deeper than 32 levels')
      expect(() => scanned(wide, { field: 'a', max: 5 }, part)).toThrow('more than 50000 values')
    }
  })

  test('a long string split across parts is read through, its brackets and commas not counted', () => {
    const text = JSON.stringify({ items: [`${'x\\",[{'.repeat(5_000)}`, 'b', 'c', 'd'] })
    for (const part of [3, 100, 9_999])
      expect(JSON.parse(scanned(text, { field: 'items', max: 1 }, part).parseable())).toEqual(oracle(text, 'items', 1))
  })
})
