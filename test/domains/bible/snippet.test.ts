/**
 * Snippets of verses whose words are all ASCII, against a regular-expression oracle over the English
 * translations on the built database:
 * - verses whose punctuation is not ASCII (`LORD’s`, `–`, `“`): every fourth such verse (250 to 2,000 each),
 *   each asked for four of its words (the first, a middle one, the last, and the word after a non-ASCII mark);
 * - verses of ASCII alone, where keywords are found in place (`wordSpans`): every tenth, each asked for a word,
 *   a prefix, two keywords, and a keyword with a prefix that marks the same word again.
 */
import { describe, expect, test } from 'bun:test'
import { parseQuery } from '../../../src/domains/bible/query.ts'
import { SNIPPET_CHARS, snippet } from '../../../src/domains/bible/snippet.ts'
import { versesOf } from './db.ts'

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

const WORD_CHAR = '[\\p{L}\\p{N}\\p{M}\\u0640]'

/**
 * Every whole-word occurrence of `words` (any case; `pre*` any word starting with `pre`) marked; runs of marks
 * with blanks between become one.
 */
function oracle(text: string, ...words: string[]): string {
  const alternatives = words.map((w) => (w.endsWith('*') ? `${w.slice(0, -1)}${WORD_CHAR}*` : w)).join('|')
  const re = new RegExp(`(?<!${WORD_CHAR})(?:${alternatives})(?!${WORD_CHAR})`, 'giu')
  let out = ''
  let at = 0
  for (const m of text.matchAll(re)) {
    out += escapeHtml(text.slice(at, m.index)) + `<mark>${escapeHtml(m[0])}</mark>`
    at = m.index + m[0].length
  }
  return (out + escapeHtml(text.slice(at))).replace(/<\/mark>(\s*)<mark>/g, '$1')
}

describe('snippets of ASCII words among non-ASCII punctuation', () => {
  for (const id of ['kjv', 'asv', 'darby', 'web']) {
    test(`every fourth such verse of ${id}, four words each`, () => {
      let checked = 0
      const wrong: string[] = []
      let n = 0
      for (const { text } of versesOf(id)) {
        // Verses with a non-ASCII character, all of them outside words, short enough to be shown whole.
        if (/^[\x00-\x7f]*$/.test(text) || /[\p{L}\p{N}\p{M}\u0640]/u.test(text.replace(/[\x00-\x7f]/g, ''))) continue
        if (text.length > SNIPPET_CHARS || n++ % 4) continue
        const words = text.match(/[A-Za-z0-9]+/g) ?? []
        const afterMark = /[^\x00-\x7f]\s*([A-Za-z0-9]+)/.exec(text)?.[1]
        for (const word of new Set([words[0], words[words.length >> 1], words.at(-1), afterMark])) {
          if (!word) continue
          const got = snippet(text, parseQuery(word).terms)
          if (got !== oracle(text, word)) wrong.push(`${word}: ${got}`)
          checked++
        }
      }
      expect(wrong).toEqual([])
      expect(checked).toBeGreaterThan(500)
    }, 20_000)
  }
})

describe('snippets of ASCII verses, keywords found in place', () => {
  for (const id of ['kjv', 'web']) {
    test(`every tenth verse of ${id} short enough to be shown whole: a word, a prefix, two words, a word and its prefix`, () => {
      let checked = 0
      const wrong: string[] = []
      let n = 0
      for (const { text } of versesOf(id)) {
        if (!/^[\x00-\x7f]*$/.test(text) || text.length > SNIPPET_CHARS || n++ % 10) continue
        const words = text.match(/[A-Za-z0-9]+/g) ?? []
        const [first, middle, last] = [words[0], words[words.length >> 1], words.at(-1)]
        if (!first || !middle || !last) continue
        const long = words.find((w) => w.length >= 4) ?? 'thee'
        const queries: [string, string[]][] = [
          [middle, [middle]],
          [`${long.slice(0, 3)}*`, [`${long.slice(0, 3)}*`]],
          [`${last} ${first}`, [last, first]],
          [`${long} ${long.slice(0, 3)}*`, [long, `${long.slice(0, 3)}*`]],
        ]
        for (const [q, marked] of queries) {
          const got = snippet(text, parseQuery(q).terms)
          if (got !== oracle(text, ...marked)) wrong.push(`${q}: ${got}`)
          checked++
        }
      }
      expect(wrong).toEqual([])
      expect(checked).toBeGreaterThan(5000)
    }, 20_000)
  }
})
