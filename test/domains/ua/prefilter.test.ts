/**
 * The literal scan behind every prefiltered regex (prefilter.ts): a literal is found wherever it occurs,
 * whether it is packed into the scan's buckets, added after the last packing, or keyed by non-ASCII
 * characters the bucket keys never reach. Each case is checked against `includes` over the lower-cased text.
 */
import { expect, test } from 'bun:test'
import { Matcher } from '../../../src/domains/ua/prefilter.ts'

test('a literal added after packing is found, before and after the table packs again', () => {
  // More new literals than the repacking threshold, each checked on a text holding it and one without.
  const made = Array.from({ length: 150 }, (_, i) => new Matcher(`zq${i}x`, [`zq${i}x`]))
  made.forEach((m, i) => {
    expect(m.possible(`Mozilla/5.0 (ZQ${i}X; rv:1)`)).toBe(true)
    expect(m.possible(`Mozilla/5.0 (zq${i}y; rv:1)`)).toBe(false)
  })
})

test.each([
  ['é', 'Agent é/1.0'],
  ['éa', 'Agent éa/1.0'],
  ['xé', 'Agent xé/1.0'],
  ['붉은별', 'Mozilla/5.0 (X11; 붉은별 3.0)'],
  ['abcdeé', 'Mozilla/5.0 (abcdeé)'],
  ['abcdefé', 'Mozilla/5.0 (ABCDEFÉ)'],
])('a literal with non-ASCII characters (%p) is found where it occurs', (literal, text) => {
  const m = new Matcher(literal, [literal])
  expect(text.toLowerCase().includes(literal)).toBe(true)
  expect(m.possible(text)).toBe(true)
  expect(m.possible('Mozilla/5.0 (X11; Linux x86_64)')).toBe(false)
})

test('an empty literal is found in every text, as includes() finds it', () => {
  expect(new Matcher('x?', ['']).possible('Mozilla/5.0')).toBe(true)
})

test('literals of every length and position are found as includes() finds them', () => {
  const words = ['a', 'ab', 'abc', 'abcd', 'abcde', 'abcdef', 'abcdefgh', 'cdef', 'xyz12', 'build/', '; wv)']
  const matchers = words.map((w) => new Matcher(w, [w]))
  for (const text of ['ABCDEFGH', 'zzab', 'Foo; wv) bar', 'x', 'xyz1', 'Build/XYZ12', '']) {
    for (const [i, m] of matchers.entries()) expect(m.possible(text)).toBe(text.toLowerCase().includes(words[i]!))
  }
})
