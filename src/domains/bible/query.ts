/**
 * User search text -> a safe, normalised FTS5 query. The user's syntax (SPEC): plain keywords (all must match),
 * "exact phrases" in double quotes, and `prefix*` with at least 3 characters before the star. Every term
 * is folded like the index (fold.ts) and reduced to its words (letters and digits only), and every
 * word is written inside double quotes, so no FTS5 operator, column filter or syntax character that the
 * user typed ever reaches SQLite as syntax: `NOT`, `NEAR(`, `^`, `:` are plain words or separators.
 * Terms that fold to the same words are one term (`the* THE* thé*` is `the*`): a repeat adds nothing to
 * the hits but FTS5 would read (and for a prefix, expand) it again. The term limit counts merged terms.
 */
import { invalid } from '../../lib/errors.ts'
import { ASCII_WORD, foldText, wordsOf } from './fold.ts'

export const QUERY_MAX_LENGTH = 200
export const MAX_TERMS = 16
export const MIN_PREFIX = 3

/** One term: a sequence of words that must appear in order (one word for a keyword). */
export interface Term {
  words: string[]
  /** The last word is a prefix. */
  prefix: boolean
}

export interface ParsedQuery {
  terms: Term[]
  /** The FTS5 MATCH expression. */
  fts: string
}

/** A word or phrase as an FTS5 string: no character of it is syntax. */
export const quote = (w: string) => `"${w.replace(/"/g, '""')}"`

export function parseQuery(q: string): ParsedQuery {
  if (q.length > QUERY_MAX_LENGTH) throw invalid('q', `at most ${QUERY_MAX_LENGTH} characters`, 'query')
  // One plain ASCII word (most searches): its lower case, without the general path's ~1.5 µs of folding.
  if (ASCII_WORD.test(q)) {
    const word = q.toLowerCase()
    return { terms: [{ words: [word], prefix: false }], fts: quote(word) }
  }
  const terms: Term[] = []
  const seen = new Set<string>()
  // Quoted phrases (an unclosed quote runs to the end), then the rest split at white space.
  for (const m of q.matchAll(/"([^"]*)"?|[^\s"]+/g)) {
    const phrase = m[1] !== undefined
    const raw = phrase ? m[1]! : m[0]
    const prefix = !phrase && /[^*]\*+$/.test(raw)
    const words = wordsOf(foldText(raw.replace(/\*/g, ' ')))
    if (!words.length) continue
    if (prefix && [...words[words.length - 1]!].length < MIN_PREFIX) {
      throw invalid('q', `a prefix search needs at least ${MIN_PREFIX} letters before the * (${JSON.stringify(raw)})`, 'query')
    }
    const key = `${words.join(' ')}${prefix ? '*' : ''}`
    if (seen.has(key)) continue
    seen.add(key)
    terms.push({ words, prefix })
  }
  if (!terms.length) throw invalid('q', 'contains no word to search for (letters or digits)', 'query')
  if (terms.length > MAX_TERMS) throw invalid('q', `at most ${MAX_TERMS} different keywords and phrases (${terms.length} given)`, 'query')
  const fts = terms
    .map((t) => (t.words.length === 1 ? quote(t.words[0]!) : quote(t.words.join(' '))) + (t.prefix ? ' *' : ''))
    .join(' AND ')
  return { terms, fts }
}
