/**
 * The search's fast paths against FTS5's own answer to the same question: the stored counts and rankings
 * of lone words (`search_terms.translations`), the one-statement read of rare queries (`searchFew`) and the
 * answer cache must give the hits, order (equal BM25 scores included), counts and pages that FTS5's
 * `ORDER BY rank` and `count(*)` give, on the built database, in every translation.
 */
import { describe, expect, test } from 'bun:test'
import { bookById } from '../../../src/domains/bible/books.ts'
import { decodeTermTranslations, RANKED_IDS } from '../../../src/domains/bible/artifacts.ts'
import { foldText, wordsOf } from '../../../src/domains/bible/fold.ts'
import { quote } from '../../../src/domains/bible/query.ts'
import { openBibleService, searchPageSql, type SearchResult } from '../../../src/domains/bible/service.ts'
import { bibleDb } from './db.ts'

const service = openBibleService(bibleDb, { searchBudgetMs: Infinity })
const translations = bibleDb.query('SELECT idx, id, first_id AS first, last_id AS last FROM translations ORDER BY idx').all() as {
  idx: number
  id: string
  first: number
  last: number
}[]
const rankedPage = bibleDb.query(searchPageSql('f.rank'))
const countIn = bibleDb.query('SELECT count(*) AS n FROM verses_fts WHERE verses_fts MATCH ? AND rowid BETWEEN ? AND ?')

/** FTS5's page of `fts` in translation `t`, as `book chapter:verse` (book ids as the service's abbreviations). */
const fts5Page = (fts: string, t: (typeof translations)[0], offset: number, limit: number) =>
  (rankedPage.all(fts, t.first, t.last, limit, offset) as { book: number; chapter: number; verse: number }[]).map(
    (v) => `${bookById(v.book)!.abbr} ${v.chapter}:${v.verse}`,
  )
/** The service's page the same way (its hits are grouped by translation; `t` is theirs). */
const servicePage = (r: Pick<SearchResult, 'hits'>, t: (typeof translations)[0]) =>
  r.hits.map((h) => {
    expect(h.translation).toBe(t.id)
    return `${h.book} ${h.chapter}:${h.verse}`
  })

/** Every term the build stored, in term order: its verses in all and its parts per translation. */
function* storedTerms() {
  const rows = bibleDb.query('SELECT term, docs, translations FROM search_terms ORDER BY term').iterate() as IterableIterator<{
    term: string
    docs: number
    translations: Uint8Array
  }>
  for (const row of rows) yield { term: row.term, docs: row.docs, parts: decodeTermTranslations(row.translations) }
}

/** Every (term, translation) pair the build stored that `keep` keeps (its verses there, its verses in all), in term order. */
function storedPairs(keep: (pair: { docs: number; total: number }, index: number) => boolean) {
  const out: { term: string; translation: number; docs: number }[] = []
  let index = 0
  for (const { term, docs: total, parts } of storedTerms())
    for (const { translation, docs } of parts) if (keep({ docs, total }, index++)) out.push({ term, translation, docs })
  return out
}

describe('stored counts and rankings of lone words', () => {
  // Every twelfth pair of a word in 500+ verses of a translation (~370, where ranking live costs most), and
  // every 700th of all the others (~1,200 of ~850,000: a verse or a few hundred, every script).
  const pairs = storedPairs((p, i) => (p.docs >= 500 ? i % 12 === 0 : i % 700 === 0))

  test('sampled pairs: first page, last stored page and a page past the store equal FTS5 ranking every match', () => {
    expect(pairs.filter((p) => p.docs >= 500).length).toBeGreaterThan(300)
    expect(pairs.filter((p) => p.docs < 500).length).toBeGreaterThan(1000)
    for (const { term, translation } of pairs) {
      const t = translations.find((x) => x.idx === translation)!
      for (const [offset, limit] of [
        [0, 20],
        [RANKED_IDS - 20, 20],
        [RANKED_IDS - 10, 20], // crosses the end of the stored ranking: ranked live
      ] as const) {
        const r = service.search(term, [t.id], 'relevance', { offset, limit })
        expect({ term, t: t.id, offset, ids: servicePage(r, t) }).toEqual({
          term,
          t: t.id,
          offset,
          ids: fts5Page(quote(term), t, offset, limit),
        })
        expect({ term, t: t.id, total: r.total }).toEqual({
          term,
          t: t.id,
          total: (countIn.get(quote(term), t.first, t.last) as { n: number }).n,
        })
      }
    }
  }, 120_000)

  test("every term's counts per translation add up to its verses in all, and its first verses are its count's first 200", () => {
    let pairs = 0
    const wrong: unknown[] = []
    for (const { term, docs, parts } of storedTerms()) {
      pairs += parts.length
      const summed = parts.reduce((sum, p) => sum + p.docs, 0)
      const short = parts.find((p) => p.ranked.length !== Math.min(p.docs, RANKED_IDS) * 2 || p.docs === 0)
      if (summed !== docs || short) wrong.push({ term, docs, summed, short })
    }
    expect(wrong.slice(0, 5)).toEqual([])
    expect(pairs).toBeGreaterThan(500_000)
  })

  test('`the` over all 34 translations: counts per translation and the first page are FTS5s', () => {
    const r = service.search('the', undefined, 'relevance', { offset: 0, limit: 20 })
    for (const g of r.groups) {
      const t = translations.find((x) => x.id === g.translation)!
      expect({ t: t.id, count: g.count }).toEqual({ t: t.id, count: (countIn.get('"the"', t.first, t.last) as { n: number }).n })
    }
    const first = translations.find((x) => x.id === r.groups[0]!.translation)!
    expect(servicePage(r, first)).toEqual(fts5Page('"the"', first, 0, 20))
  })
})

describe('rare queries read in one statement', () => {
  // Words in 2–64 verses of all translations, one in 60 of them (~1,400 words of every script), each with
  // the longest other word of its first verse: two words, so not a lone word's stored ranking.
  const firstVerse = bibleDb.query('SELECT v.text FROM verses_fts f JOIN verses v ON v.id = f.rowid WHERE verses_fts MATCH ? LIMIT 1')
  const queries = (bibleDb.query('SELECT term FROM search_terms WHERE docs BETWEEN 2 AND 64 ORDER BY term').all() as { term: string }[])
    .filter((_, i) => i % 60 === 0)
    .map(({ term }) => {
      const text = (firstVerse.get(quote(term)) as { text: string }).text
      const other = wordsOf(foldText(text))
        .filter((w) => w !== term)
        .sort((a, b) => b.length - a.length)[0]
      return other ? `${term} ${other}` : term
    })

  test('one translation and all: groups, counts and every page equal FTS5 (equal scores in FTS5s order)', () => {
    expect(queries.filter((q) => q.includes(' ')).length).toBeGreaterThan(1000)
    let ties = 0
    for (const q of queries) {
      const fts = q.split(' ').map(quote).join(' AND ')
      const all = service.search(q, undefined, 'relevance', { offset: 0, limit: 1000 })
      let at = 0
      for (const g of all.groups) {
        const t = translations.find((x) => x.id === g.translation)!
        const want = fts5Page(fts, t, 0, 1000)
        expect({ q, t: t.id, count: g.count }).toEqual({ q, t: t.id, count: want.length })
        const got = all.hits.slice(at, at + g.count)
        expect({ q, t: t.id, ids: servicePage({ hits: got }, t) }).toEqual({ q, t: t.id, ids: want })
        at += g.count
        // The same translation alone, and its second hit onwards (paging inside the group).
        const one = service.search(q, [t.id], 'relevance', { offset: 1, limit: 5 })
        expect({ q, t: t.id, ids: servicePage(one, t) }).toEqual({ q, t: t.id, ids: want.slice(1, 6) })
        const scores = bibleDb
          .query('SELECT rank FROM verses_fts WHERE verses_fts MATCH ? AND rowid BETWEEN ? AND ?')
          .all(fts, t.first, t.last) as { rank: number }[]
        if (new Set(scores.map((s) => s.rank)).size < scores.length) ties++
      }
    }
    // The order of equal scores was tested, not just assumed: many groups have them.
    expect(ties).toBeGreaterThan(100)
  }, 120_000)
})

describe('words rare in the one translation asked, common in all', () => {
  // Common words (1,000+ verses) in 2–64 verses of one translation, one pair in five: every page of the
  // translation alone from its stored ranking.
  const pairs = storedPairs((p) => p.docs >= 2 && p.docs <= 64 && p.total >= 1000).filter((_, i) => i % 5 === 0)

  test('counts and pages equal FTS5, in 20+ translations', () => {
    expect(pairs.length).toBeGreaterThan(300)
    expect(new Set(pairs.map((p) => p.translation)).size).toBeGreaterThan(20)
    for (const { term, translation } of pairs) {
      const t = translations.find((x) => x.idx === translation)!
      const want = fts5Page(quote(term), t, 0, 1000)
      const whole = service.search(term, [t.id], 'relevance', { offset: 0, limit: 1000 })
      expect({ term, t: t.id, total: whole.total, ids: servicePage(whole, t) }).toEqual({ term, t: t.id, total: want.length, ids: want })
      const page = service.search(term, [t.id], 'relevance', { offset: 1, limit: 3 })
      expect({ term, t: t.id, ids: servicePage(page, t) }).toEqual({ term, t: t.id, ids: want.slice(1, 4) })
    }
  }, 120_000)
})

describe('the answer cache', () => {
  test('a repeated question is answered from the cache, equal to a fresh answer; off, every answer is made anew', async () => {
    const cached = openBibleService(bibleDb, { searchCacheBytes: 1 << 20 })
    const q = ['jerusalem', ['kjv', 'asv'], 'relevance', { offset: 3, limit: 7 }, 'q'] as const
    const first = await cached.searchAnywhere(q[0], [...q[1]], q[2], q[3], q[4])
    const again = await cached.searchAnywhere(q[0], [...q[1]], q[2], { ...q[3] }, q[4])
    expect(again).toBe(first)
    expect(again).toEqual(service.search(q[0], [...q[1]], q[2], q[3]))
    // Another page, sort or translation list is another question.
    expect(await cached.searchAnywhere(q[0], [...q[1]], 'canonical', q[3], q[4])).not.toBe(first)
    expect(await cached.searchAnywhere(q[0], ['asv', 'kjv'], q[2], q[3], q[4])).not.toBe(first)
    // Many questions are kept at once, not only the last one.
    const words = ['jerusalem', 'moses', 'aaron', 'david', 'egypt', 'babylon', 'pharaoh', 'jordan']
    const firsts = await Promise.all(words.map((w) => cached.searchAnywhere(w, ['kjv'], 'relevance', q[3], q[4])))
    for (const [i, w] of words.entries()) expect(await cached.searchAnywhere(w, ['kjv'], 'relevance', q[3], q[4])).toBe(firsts[i]!)
    const uncached = openBibleService(bibleDb)
    expect(await uncached.searchAnywhere(q[0], [...q[1]], q[2], q[3], q[4])).not.toBe(
      await uncached.searchAnywhere(q[0], [...q[1]], q[2], q[3], q[4]),
    )
  })

  test('many different questions are kept, not the last one or two: asked again, each comes from the cache', async () => {
    const cached = openBibleService(bibleDb, { searchCacheBytes: 16 << 20 })
    const words = (bibleDb.query('SELECT term FROM search_terms WHERE docs BETWEEN 1 AND 10 LIMIT 500').all() as { term: string }[]).map(
      (r) => r.term,
    )
    const answers = []
    for (const w of words) answers.push(await cached.searchAnywhere(w, ['kjv'], 'relevance', { offset: 0, limit: 20 }, 'q'))
    let kept = 0
    for (let i = 0; i < words.length; i++)
      if ((await cached.searchAnywhere(words[i]!, ['kjv'], 'relevance', { offset: 0, limit: 20 }, 'q')) === answers[i]) kept++
    expect(kept).toBe(words.length)
  })

  test('bounded in bytes: many different questions do not keep more than the budget', async () => {
    const budget = 256 * 1024
    const cached = openBibleService(bibleDb, { searchCacheBytes: budget })
    const words = (bibleDb.query('SELECT term FROM search_terms WHERE docs BETWEEN 50 AND 60 LIMIT 400').all() as { term: string }[]).map(
      (r) => r.term,
    )
    const answers = []
    for (const w of words) answers.push(await cached.searchAnywhere(w, undefined, 'relevance', { offset: 0, limit: 20 }, 'q'))
    // The earliest answers were dropped with their generation: asked again, they are made anew.
    let remade = 0
    for (let i = 0; i < 50; i++)
      if ((await cached.searchAnywhere(words[i]!, undefined, 'relevance', { offset: 0, limit: 20 }, 'q')) !== answers[i]) remade++
    expect(remade).toBe(50)
  })
})
