/**
 * FTS5's `bm25()` computed here, for queries of plain words, bit for bit. FTS5 computes each phrase's IDF
 * on the first ranked row by counting the rows of the phrase's whole doclist, over all 34 translations:
 * 1.3 ms for `have`, 0.9 ms for `lord`, 35 µs for `jehoshaphat`, even when one row matches. The build already
 * stores every word's row count (`search_terms.docs`, from fts5vocab: the same count), the row and token
 * totals are FTS5's own averages record, a row's size is its docsize record, and a word's frequency in a
 * verse is counted in the verse's text folded as the index folded it (fold.ts). The formula and the order
 * of its operations are fts5_aux.c's, so the doubles are identical (test/domains/bible/bm25.test.ts compares
 * every row of ~700 queries in all 34 translations with FTS5's `rank`).
 */
import type { Database } from 'bun:sqlite'
import { foldText, wordsOf } from './fold.ts'

const K1 = 1.2
const B = 0.75

/** SQLite varints (big-endian, 7 bits a byte, high bit set on all but the last; the ninth byte whole). */
export function varints(bytes: Uint8Array): number[] {
  const out: number[] = []
  for (let i = 0; i < bytes.length; ) {
    let value = 0
    for (let n = 0; ; n++) {
      const c = bytes[i++]!
      if (n === 8) {
        value = value * 256 + c
        break
      }
      value = value * 128 + (c & 0x7f)
      if (!(c & 0x80)) break
    }
    out.push(value)
  }
  return out
}

/** The index's row count and mean row size in tokens, from FTS5's averages record (`%_data` row 1). */
export interface Corpus {
  rows: number
  avgdl: number
}

export function corpusOf(db: Database): Corpus {
  const record = db.query('SELECT block FROM verses_fts_data WHERE id = 1').get() as { block: Uint8Array } | null
  const [rows = 0, tokens = 0] = record ? varints(record.block) : []
  const n = rows > 0 ? rows : 1
  return { rows: n, avgdl: tokens / n }
}

/** A phrase's IDF from the number of rows holding it, as FTS5 has it (never below 1e-6). */
export function idf(corpus: Corpus, hits: number): number {
  const value = Math.log((corpus.rows - hits + 0.5) / (hits + 0.5))
  return value <= 0 ? 1e-6 : value
}

const isAsciiWordChar = (c: number) => (c >= 48 && c <= 57) || (c >= 97 && c <= 122)
/** A character past ASCII: such a text is folded and split as the index was (for ASCII, folding only lower-cases). */
const NOT_PLAIN_ASCII = /[^\x00-\x7f]/

/**
 * How often each word (folded, as the query has them) occurs as a whole word of `text`, in the index's
 * words. An ASCII text folds to its lower case, its words are its runs of letters and digits; any other
 * text is folded and split as the index was.
 */
export function frequencies(text: string, words: readonly string[]): number[] {
  const counts = new Array<number>(words.length).fill(0)
  if (!NOT_PLAIN_ASCII.test(text)) {
    const lower = text.toLowerCase()
    for (let w = 0; w < words.length; w++) {
      const word = words[w]!
      for (let at = lower.indexOf(word); at >= 0; at = lower.indexOf(word, at + 1)) {
        const end = at + word.length
        if ((at === 0 || !isAsciiWordChar(lower.charCodeAt(at - 1))) && (end === lower.length || !isAsciiWordChar(lower.charCodeAt(end))))
          counts[w]!++
      }
    }
    return counts
  }
  for (const token of wordsOf(foldText(text))) for (let w = 0; w < words.length; w++) if (token === words[w]) counts[w]!++
  return counts
}

/** FTS5's `rank` of a row (lower is better): minus the sum over the phrases, in query order. */
export function bm25Rank(idfs: readonly number[], freqs: readonly number[], tokens: number, avgdl: number): number {
  let score = 0.0
  for (let i = 0; i < idfs.length; i++) {
    const f = freqs[i]!
    score += idfs[i]! * ((f * (K1 + 1.0)) / (f + K1 * (1 - B + (B * tokens) / avgdl)))
  }
  return -1.0 * score
}
