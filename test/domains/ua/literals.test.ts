/**
 * The prefilter's soundness: `requiredLiterals` may only name literals that every match contains. Checked
 * by hand on the constructs that matter, and against every pattern of the detection data: for each of
 * the real user agents a pattern matches, one of its literals must occur in the lower-cased UA.
 */
import { expect, test } from 'bun:test'
import { openDataDir } from '../../../src/data/open.ts'
import { UA_ARTIFACT } from '../../../src/domains/ua/build.ts'
import { loadDefinitions } from '../../../src/domains/ua/definitions.ts'
import { requiredLiterals, TEXT_START } from '../../../src/domains/ua/literals.ts'
import { openUaService } from '../../../src/domains/ua/service.ts'
import { readFileSync } from 'node:fs'
import { every, FIXTURES, realUserAgents } from './corpus.ts'

test.each([
  ['Chrome/(\\d+)', ['chrome/']],
  ['(?:SM-G|GT-I)(\\d+)', ['sm-g', 'gt-i']],
  ['ab+c', ['ab']],
  ['a?bc', ['bc']],
  ['foo(?:bar)?baz', ['foobaz', 'foobarbaz']], // an optional exact part goes on the stretch
  ['Le ?X[0-9]', ['lex', 'le x']],
  ['(?:foo)?bar', ['bar']], // foobar holds bar: bar alone suffices
  ['(?:WH|WhaleTV)\\/', ['wh/', 'whaletv/']],
  ['[abc]def|ghi', ['adef', 'bdef', 'cdef', 'ghi']],
  ['S(?:3[78]0|670)', ['s370', 's380', 's670']], // small classes and groups multiply out
  ['BLU[ _]', ['blu ', 'blu_']],
  ['KF[ADFGJKMORSTQ]', ['kf']], // a large class ends the stretch
  ['qwer(?=abc)', ['qwer']],
  ['Apple[ _]*TV', ['tv']], // `apple` is in every AppleWebKit UA: the rarer literal is chosen
  ['(?<!Lenovo )Tab 10', ['tab 10']],
  ['Build\\/K', ['build/k']],
  ['Opera Tablet|\\d+', null],
  ['(?:Nexus)*', null],
  ['붉은별', ['붉은별']], // caseless non-ASCII characters are literal characters
  ['Podcast’ler\\/', ['podcast’ler/']],
  ['Подкасты', ['ка']], // о, д, с, т are not: the regex also matches old forms (ᲂ, ᲁ, ᲃ, ᲄ) that lower-case apart
  ['Σσς', null], // σ and ς lower-case apart
  ['İstanbul', ['stanbul']], // İ lower-cases to two characters
  ['^A\\/', ['\u0001a/']], // `^` is the start of the text, a character the scan puts before it
  ['^(?:chrome|node)$|curl', ['\u0001chrome', '\u0001node', 'curl']],
  ['(?:^|x)foo', ['\u0001foo', 'xfoo']],
  ['^(?:Mozilla)?', null],
  ['a{0,3}bc', ['bc']],
  ['\\x41BC', ['bc']],
])('requiredLiterals(%p)', (pattern, expected) => {
  const got = requiredLiterals(pattern)
  expect(got === null ? null : [...got].sort()).toEqual(expected === null ? null : [...expected].sort())
})

test('a non-ASCII character is kept in a literal only when every character the regex i flag matches to it lower-cases into it', () => {
  // The regex engine is the oracle: every character it matches to c (case-insensitively, as the engine's
  // regexes run) must hold the literal once lower-cased, as the scan lower-cases the user agent. Checked for
  // the non-ASCII characters of the detection data, those whose folding is known to be odd, and a sample
  // of the whole BMP.
  const defs = loadDefinitions(openDataDir().path(UA_ARTIFACT))
  const chars = new Set<number>()
  for (const pattern of Object.keys(defs.literals)) for (const ch of pattern) if (ch.charCodeAt(0) >= 0x80) chars.add(ch.charCodeAt(0))
  for (const ch of 'ΣσςİıſKÅµẞßᲀᲁᲂвдоςΐﬀǅǄǆ’') chars.add(ch.charCodeAt(0))
  for (let c = 0x80; c < 0x10000; c += 7) chars.add(c)
  let all = ''
  for (let c = 0; c < 0x10000; c++) if (c < 0xd800 || c > 0xdfff) all += String.fromCharCode(c)
  const unicodeEscape = (ch: string) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`
  let kept = 0
  const wrong: string[] = []
  for (const code of chars) {
    if (code >= 0xd800 && code <= 0xdfff) continue
    const ch = String.fromCharCode(code)
    const literals = requiredLiterals(`${ch}qx`) // no non-ASCII character is a regex metacharacter
    expect(literals).not.toBeNull()
    if (literals![0] === 'qx') continue // not kept: the literal is the ASCII part
    kept++
    for (const [t] of all.matchAll(new RegExp(unicodeEscape(ch), 'gi')))
      if (!literals!.some((l) => `${t}qx`.toLowerCase().includes(l))) wrong.push(`${ch} (U+${code.toString(16)}) matches ${t}`)
  }
  expect(kept).toBeGreaterThan(1000)
  expect(wrong).toEqual([])
})

test('every pattern that matches a real UA has one of its literals in it', () => {
  const defs = loadDefinitions(openDataDir().path(UA_ARTIFACT))
  // Real browser UAs, and Matomo's fixture UAs, which reach the device and model patterns.
  const fixtures = JSON.parse(readFileSync(FIXTURES, 'utf8')) as Record<string, { ua: string }[]>
  const uas = [...every(realUserAgents(), 20), ...['devices', 'bots', 'client_hints'].flatMap((k) => fixtures[k]!.map((c) => c.ua))]
  const lower = uas.map((u) => TEXT_START + u.toLowerCase()) // as the scan reads a UA
  const wrong: string[] = []
  let checked = 0
  for (const [pattern, literals] of Object.entries(defs.literals)) {
    if (!literals) continue
    const re = new RegExp(pattern, 'i')
    uas.forEach((ua, i) => {
      if (!re.test(ua)) return
      checked++
      if (!literals.some((l) => lower[i]!.includes(l))) wrong.push(`${pattern.slice(0, 80)} on ${ua.slice(0, 80)}`)
    })
  }
  console.log(`literals: ${checked} (pattern, UA) matches checked`)
  expect(checked).toBeGreaterThan(10000)
  expect(wrong).toEqual([])
}, 120_000)

test('the result cache keeps a UA from its second asking, frozen, and answers it after; 0 entries turns it off', () => {
  const defs = loadDefinitions(openDataDir().path(UA_ARTIFACT))
  const ua = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0'
  const cached = openUaService(defs, { cacheEntries: 10, cacheBytes: 1 << 20 })
  // Asked once: answered, not kept (a UA asked once is the common case for unique strings).
  const first = cached.parse(ua)
  const second = cached.parse(ua)
  expect(second).not.toBe(first)
  expect(second).toEqual(first)
  expect(Object.isFrozen(second)).toBe(true)
  expect(cached.parse(ua)).toBe(second)
  const off = openUaService(defs, { cacheEntries: 0, cacheBytes: 0 })
  const [a, b] = [off.parse(ua), off.parse(ua)]
  expect(a).not.toBe(b)
  expect(a).toEqual(b)
})
