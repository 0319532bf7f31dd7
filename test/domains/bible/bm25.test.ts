/**
 * bm25.ts against FTS5's own `rank`, on the built database: for queries of one to three plain words drawn from
 * verses of every translation (Latin, Greek, Cyrillic, Hebrew, Arabic and CJK scripts among them), every
 * matching row's rank computed from its text, its docsize record and the words' row counts must be the very
 * double FTS5 gives; and the service's pages of such queries, ranked there, must be FTS5's `ORDER BY rank`.
 */
import { describe, expect, test } from 'bun:test'
import { bookById } from '../../../src/domains/bible/books.ts'
import { bm25Rank, corpusOf, frequencies, idf, varints } from '../../../src/domains/bible/bm25.ts'
import { foldText, wordsOf } from '../../../src/domains/bible/fold.ts'
import { parseQuery } from '../../../src/domains/bible/query.ts'
import { openBibleService, searchPageSql } from '../../../src/domains/bible/service.ts'
import { bibleDb } from './db.ts'

const translations = bibleDb.query('SELECT id, first_id AS first, last_id AS last FROM translations ORDER BY idx').all() as {
  id: string
  first: number
  last: number
}[]
const matches = bibleDb.query(
  'SELECT f.rowid AS id, f.rank AS rank, v.text AS text, d.sz AS sz FROM verses_fts f JOIN verses v ON v.id = f.rowid ' +
    'JOIN verses_fts_docsize d ON d.id = f.rowid WHERE verses_fts MATCH ? AND f.rowid BETWEEN ? AND ?',
)
const docsOf = bibleDb.query('SELECT docs FROM search_terms WHERE term = ?')
const countIn = bibleDb.query('SELECT count(*) AS n FROM verses_fts WHERE verses_fts MATCH ? AND rowid BETWEEN ? AND ?')
const verseText = bibleDb.query('SELECT text FROM verses WHERE id = ?')
const corpus = corpusOf(bibleDb)

/** A seeded generator, so a failure can be rerun. */
function rng(seed: number) {
  let s = seed
  return () => ((s = (s * 1103515245 + 12345) & 0x7fffffff), s / 0x80000000)
}

/** Per translation: queries of one, two and three words of one verse of it, picked at random. */
function queries(perTranslation: number, seed = 24): { t: (typeof translations)[0]; q: string }[] {
  const next = rng(seed)
  const out: { t: (typeof translations)[0]; q: string }[] = []
  for (const t of translations)
    for (let i = 0; i < perTranslation; i++) {
      const id = t.first + Math.floor(next() * (t.last - t.first + 1))
      const text = (verseText.get(id) as { text: string } | null)?.text
      if (!text) continue
      const words = wordsOf(foldText(text))
      const take = 1 + (i % 3)
      const start = Math.floor(next() * Math.max(1, words.length - take))
      out.push({ t, q: words.slice(start, start + take).join(' ') })
    }
  return out
}

describe('bm25.ts computes FTS5 rank', () => {
  test('the averages record holds every row of the index', () => {
    const rows = (bibleDb.query('SELECT count(*) AS n FROM verses_fts_docsize').get() as { n: number }).n
    expect(corpus.rows).toBe(rows)
    expect(corpus.avgdl).toBeGreaterThan(10)
  })

  test('every matching row of ~700 queries over all 34 translations: the same double, every word found', () => {
    let rows = 0
    const wrong: unknown[] = []
    for (const { t, q } of queries(20)) {
      const { terms, fts } = parseQuery(q)
      // A query as common as `and` alone (30,000 rows a translation) adds time, not cases.
      if ((countIn.get(fts, t.first, t.last) as { n: number }).n > 2000) continue
      const words = terms.map((term) => term.words[0]!)
      const idfs = words.map((w) => idf(corpus, (docsOf.get(w) as { docs: number } | null)?.docs ?? 0))
      for (const m of matches.all(fts, t.first, t.last) as { id: number; rank: number; text: string; sz: Uint8Array }[]) {
        rows++
        const freqs = frequencies(m.text, words)
        const rank = bm25Rank(idfs, freqs, varints(m.sz)[0]!, corpus.avgdl)
        if (rank !== m.rank || freqs.includes(0)) wrong.push({ t: t.id, q, id: m.id, rank, fts5: m.rank, freqs })
      }
    }
    expect(rows).toBeGreaterThan(100_000)
    expect(wrong.slice(0, 5)).toEqual([])
  }, 60_000)
})

describe("the service's pages of plain-word queries ranked by bm25.ts", () => {
  const service = openBibleService(bibleDb, { searchBudgetMs: Infinity })
  const page = bibleDb.query(searchPageSql('f.rank'))
  const refs = (rows: { book: number; chapter: number; verse: number }[]) =>
    rows.map((v) => `${bookById(v.book)!.abbr} ${v.chapter}:${v.verse}`)

  test("two- and three-word queries in every translation: counts, first and second pages are FTS5's ORDER BY rank", () => {
    let compared = 0
    for (const { t, q } of queries(12, 7)) {
      const { terms, fts } = parseQuery(q)
      if (terms.length < 2) continue
      for (const offset of [0, 20]) {
        const r = service.search(q, [t.id], 'relevance', { offset, limit: 20 })
        const fts5 = refs(page.all(fts, t.first, t.last, 20, offset) as { book: number; chapter: number; verse: number }[])
        expect({ t: t.id, q, offset, hits: r.hits.map((h) => `${h.book} ${h.chapter}:${h.verse}`) }).toEqual({
          t: t.id,
          q,
          offset,
          hits: fts5,
        })
        compared += fts5.length
      }
    }
    expect(compared).toBeGreaterThan(2000)
  }, 60_000)
})
