/**
 * Snippets of verses whose words are all ASCII but whose punctuation is not (`LORD’s`, `–`, `“`), which
 * take the ASCII path: against a regular-expression oracle over every such verse of the English
 * translations on the built database (every fourth one: 250 to 2,000 each), each verse asked for four of its
 * words (the first, a middle one, the last, and the word after a non-ASCII mark).
 */
import { describe, expect, test } from 'bun:test'
import { parseQuery } from '../../../src/domains/bible/query.ts'
import { SNIPPET_CHARS, snippet } from '../../../src/domains/bible/snippet.ts'
import { versesOf } from './db.ts'

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

/** Every whole-word occurrence of `word` (any case) marked; runs of marks with blanks between become one. */
function oracle(text: string, word: string): string {
  const re = new RegExp(`(?<![\\p{L}\\p{N}\\p{M}\\u0640])${word}(?![\\p{L}\\p{N}\\p{M}\\u0640])`, 'giu')
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
