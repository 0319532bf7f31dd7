/**
 * The search's normalised query and work budget (issue 21), on the real bible.sqlite: repeated terms
 * merged, sixteen `the*` refused before running with a 422 saying what to narrow, the term and prefix
 * expansion limits as problems in both response forms, and ordinary queries answering exactly what a
 * direct FTS5 query on the same database answers (the unbudgeted oracle). No timings here: the
 * figures are in docs/bible.md.
 */
import { constants, Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { SOURCE_OUT_DIR } from '../../../src/data/open.ts'
import bible from '../../../src/domains/bible/index.ts'
import { MAX_PREFIX_WORDS } from '../../../src/domains/bible/budget.ts'
import { BIBLE_ARTIFACT } from '../../../src/domains/bible/artifacts.ts'
import { testApp, type TestApp } from '../../support/app.ts'
import { bibleDb } from './db.ts'

let app: TestApp
beforeAll(async () => {
  app = await testApp({ domains: [bible] })
})
afterAll(() => app.close())

const search = (query: string, form: 'bare' | 'enveloped' = 'bare') => app.json('GET', `/api/v1/bible/search?${query}`, { form })
const q = (text: string) => `q=${encodeURIComponent(text)}`

describe('a normalised query', () => {
  test.each([
    ['love love LOVE Love', 'love'],
    ['bless* bless* BLESS*', 'bless*'],
    ['"the lord" "The LORD" shepherd "the  lord"', '"the lord" shepherd'],
    [Array(16).fill('shep*').join(' '), 'shep*'],
  ])('%s answers exactly what %s answers', async (repeated, single) => {
    for (const extra of ['&limit=50', '&limit=50&sort=canonical', '&translation=kjv&limit=1000']) {
      const a = await search(q(repeated) + extra)
      const b = await search(q(single) + extra)
      expect(a.status).toBe(200)
      expect(a.body).toEqual(b.body)
      expect(a.body.count).toBeGreaterThan(0)
    }
  })

  test('seventeen different terms are over the term limit: a 422 naming q, in both forms', async () => {
    const text = Array.from({ length: 17 }, (_, i) => `word${i}`).join(' ')
    const bare = await search(q(text))
    expect(bare.status).toBe(422)
    expect(bare.body).toMatchObject({ status: 422, errors: [{ in: 'query', field: 'q' }] })
    expect(bare.body.detail).toContain('at most 16 different keywords and phrases (17 given)')
    const enveloped = await search(q(text), 'enveloped')
    expect(enveloped.body).toMatchObject({ status: 'error', data: null, error: { status: 422, detail: bare.body.detail } })
    // Seventeen copies of one term are one term.
    expect((await search(q(Array(17).fill('shepherd').join(' ')))).status).toBe(200)
  })
})

describe('prefix expansion limit', () => {
  // The oracle: FTS5's own vocabulary, through fts5vocab on a connection of our own (the service's is
  // query-only and reads the statistics table the build wrote instead).
  const vocabDb = new Database(
    `file:${join(SOURCE_OUT_DIR, BIBLE_ARTIFACT)}?immutable=1`,
    constants.SQLITE_OPEN_READONLY | constants.SQLITE_OPEN_URI,
  )
  vocabDb.run('CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, verses_fts, row)')
  const expansion = vocabDb.query('SELECT count(*) AS n FROM temp.vocab WHERE term >= ?1 AND term < ?1 || char(1114111)')
  afterAll(() => vocabDb.close())

  test('a prefix over the limit is a 422 naming it and the limit, in both forms; one under it is answered', async () => {
    // The broadest three-letter prefixes of the vocabulary, counted by fts5vocab.
    const counted = ['con', 'pro', 'ver', 'ber', 'sch', 'une', 'ein', 'pre', 'ent', 'dis', 'for', 'ins', 'kar', 'meg'].map((p) => ({
      p,
      n: (expansion.get(p) as { n: number }).n,
    }))
    const over = counted.find((c) => c.n > MAX_PREFIX_WORDS)
    const under = counted.find((c) => c.n <= MAX_PREFIX_WORDS && c.n > 1000)
    expect(over).toBeDefined()
    expect(under).toBeDefined()
    const bare = await search(q(`${over!.p}*`))
    expect(bare.status).toBe(422)
    expect(bare.body).toMatchObject({
      status: 422,
      reason: 'prefix_too_broad',
      prefix: `${over!.p}*`,
      max_prefix_words: MAX_PREFIX_WORDS,
      errors: [{ in: 'query', field: 'q' }],
    })
    expect(bare.body.detail).toContain('give more letters before the *')
    const enveloped = await search(q(`${over!.p}*`), 'enveloped')
    expect(enveloped.body).toMatchObject({ status: 'error', data: null, error: { status: 422, reason: 'prefix_too_broad' } })
    const fine = await search(`${q(`${under!.p}*`)}&translation=kjv`)
    expect(fine.status).toBe(200)
  })
})

describe('the work budget', () => {
  test('sixteen the* terms: merged into one, still over the budget, refused before running with what to narrow (both forms)', async () => {
    const text = Array(16).fill('the*').join(' ')
    for (const where of ['', '&translation=kjv']) {
      const bare = await search(q(text) + where)
      expect(bare.status).toBe(422)
      expect(bare.body).toMatchObject({ status: 422, reason: 'search_over_budget', errors: [{ in: 'query', field: 'q' }] })
      expect(bare.body.estimated_ms).toBeGreaterThan(bare.body.budget_ms)
      expect(bare.body.costliest_terms).toEqual(['the*'])
      expect(bare.body.narrow).toContain('longer prefixes')
      expect(bare.body.detail).toContain('the* (')
      const enveloped = await search(q(text) + where, 'enveloped')
      expect(enveloped.status).toBe(422)
      expect(enveloped.body).toMatchObject({
        status: 'error',
        data: null,
        error: { reason: 'search_over_budget', narrow: bare.body.narrow },
      })
    }
  })

  test('a phrase of one very common word repeated is refused; the ranking of a huge group suggests sort=canonical', async () => {
    const phrase = await search(q(`"${Array(16).fill('the').join(' ')}"`))
    expect(phrase.body).toMatchObject({ status: 422, reason: 'search_over_budget', costliest_terms: ['the'] })
    // A deep page in relevance order: the ranking and the rows skipped are the cost.
    const deep = await search('q=the&translation=kjv&offset=20000&limit=1000')
    expect(deep.body).toMatchObject({ status: 422, reason: 'search_over_budget' })
    expect(deep.body.narrow).toEqual(expect.arrayContaining(['sort=canonical (Bible order needs no ranking)', 'a smaller limit or offset']))
  })

  test('the single word the, one translation and all 34, is still answered in full', async () => {
    for (const where of ['&translation=kjv', '']) {
      const r = await search(`q=the${where}`)
      expect(r.status).toBe(200)
      expect(r.body.results.length).toBe(20)
    }
  })
})

describe('ordinary queries keep their hits: a direct FTS5 query on the same database is the oracle', () => {
  const translations = bibleDb.query('SELECT idx, id, first_id, last_id FROM translations ORDER BY idx').all() as {
    idx: number
    id: string
    first_id: number
    last_id: number
  }[]
  const matches = (order: string) =>
    bibleDb.query(
      `SELECT v.book, v.chapter, v.verse FROM verses_fts f JOIN verses v ON v.id = f.rowid WHERE verses_fts MATCH ? AND f.rowid BETWEEN ` +
        `? AND ? ORDER BY ${order}`,
    )
  const byOrder = { relevance: matches('f.rank'), canonical: matches('f.rowid') }
  const books = new Map<string, number>()
  beforeAll(async () => {
    for (const b of (await app.json('GET', '/api/v1/bible/web/books', { form: 'bare' })).body.results) books.set(b.abbr, b.id)
  })

  /** Every group in order, each with its hits in the order asked, straight from FTS5. */
  function oracle(fts: string, ids: string[] | undefined, sort: 'relevance' | 'canonical') {
    const chosen = ids ? ids.map((id) => translations.find((t) => t.id === id)!) : translations
    return chosen
      .map((t) => ({
        translation: t.id,
        hits: (byOrder[sort].all(fts, t.first_id, t.last_id) as { book: number; chapter: number; verse: number }[]).map(
          (v) => `${t.id} ${v.book} ${v.chapter}:${v.verse}`,
        ),
      }))
      .filter((g) => g.hits.length)
  }

  test.each([
    ['love', '"love"', 1000],
    ['shepherd', '"shepherd"', 1000],
    ['faith hope', '"faith" AND "hope"', 1000],
    ['"in the beginning"', '"in the beginning"', 1000],
    ['"the lord is my shepherd"', '"the lord is my shepherd"', 1000],
    ['bless*', '"bless" *', 1000],
    ['righteous*', '"righteous" *', 1000],
    ['créa*', '"crea" *', 1000],
    ['Jerusalem', '"jerusalem"', 1000],
    ['Господь', '"господь"', 1000],
    ['神愛世人', '"神 愛 世 人"', 1000],
    ['lov* hate', '"lov" * AND "hate"', 1000],
    // The commonest English word: a 1,000-hit page would be over the budget (ranking 24,127 KJV matches
    // and making 1,000 snippets), the default page is not.
    ['the', '"the"', 20],
  ] as [string, string, number][])('%s', async (text, fts, limit) => {
    for (const sort of ['relevance', 'canonical'] as const) {
      for (const ids of [undefined, ['kjv'], ['web', 'darbyfr', 'synodal', 'cuv']]) {
        const groups = oracle(fts, ids, sort)
        const expected = groups.flatMap((g) => g.hits).slice(0, limit)
        const where = ids ? `&translations=${ids.join(',')}` : ''
        const r = await search(`${q(text)}${where}&sort=${sort}&limit=${limit}`)
        expect(r.status).toBe(200)
        expect(r.body.groups.map((g: { translation: string; count: number }) => [g.translation, g.count])).toEqual(
          groups.map((g) => [g.translation, g.hits.length]),
        )
        expect(r.body.results.map((h: any) => `${h.translation} ${books.get(h.book)} ${h.chapter}:${h.verse}`)).toEqual(expected)
      }
    }
  })
})
