/**
 * The literal scan behind every prefiltered regex (prefilter.ts): a literal is found wherever it occurs,
 * whether it is packed into the scan's buckets (non-ASCII characters too), or added after the last packing.
 * Each case is checked against `includes` over the lower-cased text.
 */
import { expect, test } from 'bun:test'
import { openDataDir } from '../../../src/data/open.ts'
import { UA_ARTIFACT } from '../../../src/domains/ua/build.ts'
import { loadDefinitions } from '../../../src/domains/ua/definitions.ts'
import { TEXT_START } from '../../../src/domains/ua/literals.ts'
import { Matcher, seedLiterals } from '../../../src/domains/ua/prefilter.ts'
import { every, realUserAgents } from './corpus.ts'

test('a literal added after packing is found, before and after the table packs again', () => {
  // More new literals than the repacking threshold, each checked on a text holding it and one without.
  const made = Array.from({ length: 150 }, (_, i) => new Matcher(`zq${i}x`, [`zq${i}x`]))
  made.forEach((m, i) => {
    expect(m.possible(`Mozilla/5.0 (ZQ${i}X; rv:1)`)).toBe(true)
    expect(m.possible(`Mozilla/5.0 (zq${i}y; rv:1)`)).toBe(false)
  })
})

test('a few literals added after packing are found before and after the scans pack them once no new one comes', () => {
  // Fewer than the repacking count, as the engine's own fixed patterns are: searched with includes() at
  // first, packed after a run of scans without a new literal; found the same either way.
  const made = Array.from({ length: 10 }, (_, i) => new Matcher(`qz${i}w`, [`qz${i}w`]))
  for (let round = 0; round < 3; round++) {
    made.forEach((m, i) => {
      expect(m.possible(`Mozilla/5.0 (QZ${i}W; r${round})`)).toBe(true)
      expect(m.possible(`Mozilla/5.0 (qz${i}v; r${round})`)).toBe(false)
    })
    for (let n = 0; n < 300; n++) made[0]!.possible(`Mozilla/5.0 (quiet ${round}.${n})`)
  }
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

test('a literal behind the start of the text (`^`) is found only at the start', () => {
  const m = new Matcher('^ab', [`${TEXT_START}ab`])
  expect(m.possible('AB/1.0')).toBe(true)
  expect(m.possible('ab')).toBe(true)
  expect(m.possible('Mozilla/5.0 ab/1.0')).toBe(false)
  expect(m.possible('a')).toBe(false)
})

test('a one-character literal is found at any position, the last one too, once packed into the set of characters', () => {
  const [q, tilde] = [new Matcher('q', ['q']), new Matcher('~', ['~'])]
  for (let n = 0; n < 300; n++) q.possible(`Mozilla/5.0 (quiet ${n})`) // no new literal for a while: the table packs them
  for (const [text, hasQ] of [
    ['abc q', true],
    ['Q abc', true],
    ['q', true],
    ['abc', false],
    ['', false],
  ] as const) {
    expect(q.possible(text)).toBe(hasQ)
    expect(tilde.possible(`${text}~`)).toBe(true)
    expect(tilde.possible(text)).toBe(false)
  }
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

test('every literal of the detection data is found in real user agents exactly where includes() finds it', () => {
  // The whole table as the service packs it (tens of thousands of literals, so buckets hold many and the
  // hashed keys collide), over real UAs with and without the literals: a missed literal would skip a regex.
  const defs = loadDefinitions(openDataDir().path(UA_ARTIFACT))
  seedLiterals(defs.literals)
  const literals = [...new Set(Object.values(defs.literals).flatMap((l) => l ?? []))]
  expect(literals.length).toBeGreaterThan(10_000)
  const matchers = literals.map((l) => new Matcher(l, [l]))
  // With the user agents of the data's non-ASCII literals (keyed like any other since the `ua` artifact's revision 5).
  const texts = [
    ...every(realUserAgents(), 150),
    'Podcast’ler/1.0 CFNetwork/1240.0.4 Darwin/20.6.0',
    'ПОДКАСТЫ/3.0 CFNetwork/1240.0.4 Darwin/20.6.0',
    'أنغامي/5.1 (Android 12; SM-G991B)',
    'Mozilla/5.0 (Linux; U; Android 13; zh-cn) QQ浏览器/12.1 Mobile',
    'Mozilla/5.0 (X11; 붉은별 3.0; Linux i686) Firefox/3.5',
    '팟캐스트/1.0 ポッドキャスト/2.0 播客/3.0 éàü ÉÀÜ',
  ]
  let found = 0
  for (const text of texts) {
    const lower = TEXT_START + text.toLowerCase() // as the scan reads it
    for (const [i, m] of matchers.entries()) {
      const expected = lower.includes(literals[i]!)
      if (m.possible(text) !== expected)
        throw new Error(`literal ${JSON.stringify(literals[i])} in ${JSON.stringify(text)}: expected ${expected}`)
      if (expected) found++
    }
  }
  expect(found).toBeGreaterThan(texts.length * 5)
})
