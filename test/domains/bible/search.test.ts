/**
 * Search against a brute-force scan of the verse texts: for keywords, "phrases" and prefix* the set of
 * hits must be exactly the verses whose words (accents and points removed, case folded by a scan written
 * here) contain the terms; for Chinese, the verses whose letters contain the characters in a row.
 * Then ordering, grouping, paging, snippets, and a seeded fuzz of hostile query text: never a 500.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import bible from '../../../src/domains/bible/index.ts'
import { openBibleService } from '../../../src/domains/bible/service.ts'
import { AlmanacError } from '../../../src/lib/errors.ts'
import { testApp, type TestApp } from '../../support/app.ts'
import { rng } from '../../support/random.ts'
import { bibleDb, type VerseRow, versesOf as readVerses } from './db.ts'

let app: TestApp
beforeAll(async () => {
  app = await testApp({ domains: [bible] })
})
afterAll(() => app.close())

/** The few translations searched here are each scanned many times: read once. */
const cache = new Map<string, VerseRow[]>()
const versesOf = (id: string): VerseRow[] => {
  let rows = cache.get(id)
  if (!rows) cache.set(id, (rows = readVerses(id)))
  return rows
}

/**
 * The scan's own folding: decompose, drop every combining mark and tatweel, lower-case, đ and ð (the
 * text writes Đ as the look-alike Ð) as d, final ς as σ.
 */
const scanWords = (text: string) =>
  (text
    .normalize('NFD')
    .replace(/[\p{M}\u0640]/gu, '')
    .toLowerCase()
    .replace(/[đð]/g, 'd')
    .replace(/ς/g, 'σ')
    .match(/[\p{L}\p{N}]+/gu) ?? []) as string[]

interface ScanTerm {
  words: string[]
  prefix?: boolean
}
function scan(id: string, terms: ScanTerm[]): string[] {
  const out: string[] = []
  for (const v of versesOf(id)) {
    const words = scanWords(v.text)
    const has = (t: ScanTerm) =>
      words.some((_, i) =>
        t.words.every((w, k) => (k === t.words.length - 1 && t.prefix ? words[i + k]?.startsWith(w) : words[i + k] === w)),
      )
    if (terms.every(has)) out.push(`${v.book} ${v.chapter}:${v.verse}`)
  }
  return out
}

/** Every hit of a query in one translation, through the API, canonical order, paging 1000 at a time. */
async function allHits(translation: string, q: string): Promise<{ refs: string[]; count: number }> {
  const refs: string[] = []
  let count = 0
  for (let offset = 0; ; offset += 1000) {
    const r = await app.json(
      'GET',
      `/api/v1/bible/${translation}/search?q=${encodeURIComponent(q)}&sort=canonical&limit=1000&offset=${offset}`,
      { form: 'bare' },
    )
    expect(r.status).toBe(200)
    count = r.body.count
    for (const h of r.body.results) refs.push(`${bookIdOf(h.book)} ${h.chapter}:${h.verse}`)
    if (r.body.results.length < 1000) break
  }
  return { refs, count }
}
const bookIds = new Map<string, number>()
const bookIdOf = (abbr: string) => bookIds.get(abbr)!

beforeAll(async () => {
  const r = await app.json('GET', '/api/v1/bible/web/books', { form: 'bare' })
  for (const b of r.body.results) bookIds.set(b.abbr, b.id)
})

describe('search results equal a brute-force scan', () => {
  test.each([
    ['kjv', 'love', [{ words: ['love'] }]],
    ['kjv', 'faith hope', [{ words: ['faith'] }, { words: ['hope'] }]],
    ['kjv', '"in the beginning"', [{ words: ['in', 'the', 'beginning'] }]],
    ['kjv', '"the lord is my shepherd"', [{ words: ['the', 'lord', 'is', 'my', 'shepherd'] }]],
    ['kjv', 'bless*', [{ words: ['bless'], prefix: true }]],
    ['kjv', 'shep* "the lord"', [{ words: ['shep'], prefix: true }, { words: ['the', 'lord'] }]],
    ['web', 'Tobias', [{ words: ['tobias'] }]],
    ['web', '"Most High" grac*', [{ words: ['most', 'high'] }, { words: ['grac'], prefix: true }]],
    ['elb1905', 'über', [{ words: ['uber'] }]],
    ['elb1905', 'uber', [{ words: ['uber'] }]],
    ['darbyfr', '"à la"', [{ words: ['a', 'la'] }]],
    ['synodal', 'Господь', [{ words: ['господь'] }]],
    ['synodal', 'ещё', [{ words: ['еще'] }]],
    ['vamvas', 'θεός', [{ words: ['θεοσ'] }]],
    ['vamvas', 'ΘΕΟΣ', [{ words: ['θεοσ'] }]],
    ['wlc', 'בראשית', [{ words: ['בראשית'] }]],
    ['wlc', 'בְּרֵאשִׁית', [{ words: ['בראשית'] }]],
    ['svd', 'الله', [{ words: ['الله'] }]],
    ['svd', 'اللهُ', [{ words: ['الله'] }]],
    ['vie1934', 'Đức', [{ words: ['duc'] }]],
  ] as [string, string, ScanTerm[]][])(
    '%s %s',
    async (translation, q, terms) => {
      const expected = scan(translation, terms)
      const { refs, count } = await allHits(translation, q)
      expect(count).toBe(expected.length)
      expect(refs).toEqual(expected)
      expect(expected.length).toBeGreaterThan(0)
    },
    // vie1934 `duc` pages through thousands of hits: ~4.8 s alone, past the 5 s default on a loaded machine.
    30_000,
  )

  test.each([
    ['cuv', '神愛世人'],
    ['cuv', '耶穌'],
    ['cuvs', '耶稣基督'],
    ['bungo', 'ヱホバ'],
    ['korrv', '하나님'],
  ])('%s %s: a run of CJK characters matches where the letters contain it', async (translation, q) => {
    const expected = versesOf(translation)
      .filter((v) => v.text.replace(/[^\p{L}\p{N}]/gu, '').includes(q))
      .map((v) => `${v.book} ${v.chapter}:${v.verse}`)
    const { refs, count } = await allHits(translation, q)
    expect(count).toBe(expected.length)
    expect(refs).toEqual(expected)
    expect(expected.length).toBeGreaterThan(0)
  })
})

describe('ordering, grouping, paging, snippets', () => {
  test('relevance and canonical orders hold the same hits', async () => {
    const canonical = await app.json('GET', '/api/v1/bible/kjv/search?q=shepherd&sort=canonical&limit=1000', { form: 'bare' })
    const relevance = await app.json('GET', '/api/v1/bible/kjv/search?q=shepherd&limit=1000', { form: 'bare' })
    const key = (h: any) => `${h.book} ${h.chapter}:${h.verse}`
    expect(relevance.body.results.map(key).sort()).toEqual(canonical.body.results.map(key).sort())
    expect(relevance.body.results.map(key)).not.toEqual(canonical.body.results.map(key))
    const [book, cv] = scan('kjv', [{ words: ['shepherd'] }])[0]!.split(' ')
    expect(`${bookIdOf(canonical.body.results[0].book)} ${canonical.body.results[0].chapter}:${canonical.body.results[0].verse}`).toBe(
      `${book} ${cv}`,
    )
  })

  test('all translations: grouped by translation in catalogue order, groups labelled and counted, paging across groups', async () => {
    const r = await app.json('GET', '/api/v1/bible/search?q=Jerusalem&limit=1000', { form: 'bare' })
    const groups = r.body.groups as { translation: string; count: number }[]
    expect(groups.length).toBeGreaterThan(5)
    expect(groups.reduce((s, g) => s + g.count, 0)).toBe(r.body.count)
    const order = groups.map((g) => g.translation)
    const seen = r.body.results.map((h: any) => h.translation)
    // Hits come in runs, one run per group, in the groups' order.
    expect([...new Set(seen)]).toEqual(order.slice(0, new Set(seen).size))
    expect(seen.filter((t: string) => t === order[0]).length).toBe(groups[0]!.count)
    // A page that straddles the first two groups.
    const first = groups[0]!.count
    const page = await app.json('GET', `/api/v1/bible/search?q=Jerusalem&limit=4&offset=${first - 2}`, { form: 'enveloped' })
    expect(page.body.total).toBe(r.body.count)
    expect(page.body.data.map((h: any) => h.translation)).toEqual([order[0], order[0], order[1], order[1]])
    expect(page.body.groups).toEqual(groups)
  })

  test('translations= keeps the order asked and only those; translation= one', async () => {
    const r = await app.json('GET', '/api/v1/bible/search?q=Jesus&translations=web,kjv&limit=3', { form: 'bare' })
    expect(r.body.groups.map((g: any) => g.translation)).toEqual(['web', 'kjv'])
    expect(r.body.results.every((h: any) => h.translation === 'web')).toBe(true)
    const one = await app.json('GET', '/api/v1/bible/search?q=Jesus&translation=kjv&limit=1', { form: 'bare' })
    expect(one.body.groups.map((g: any) => g.translation)).toEqual(['kjv'])
    const unknown = await app.json('GET', '/api/v1/bible/search?q=Jesus&translations=kjv,nope', { form: 'bare' })
    expect(unknown.status).toBe(404)
    expect(unknown.body.translations).toBe('nope')
    expect((await app.json('GET', '/api/v1/bible/nope/search?q=Jesus', { form: 'bare' })).body).toMatchObject({
      status: 404,
      translation: 'nope',
    })
    expect((await app.json('GET', '/api/v1/bible/search?q=Jesus&translation=nope', { form: 'bare' })).body).toMatchObject({
      status: 404,
      translation: 'nope',
    })
  })

  test('fields trims each hit, not the wrapper; Form A carries total and groups beside data', async () => {
    const b = await app.json('GET', '/api/v1/bible/kjv/search?q=shepherd&limit=2&fields=reference,translation', { form: 'bare' })
    expect(Object.keys(b.body).sort()).toEqual(['count', 'groups', 'results'])
    expect(b.body.results.map((h: any) => Object.keys(h).sort())).toEqual([
      ['reference', 'translation'],
      ['reference', 'translation'],
    ])
    const a = await app.json('GET', '/api/v1/bible/kjv/search?q=shepherd&limit=2', { form: 'enveloped' })
    expect(a.body).toMatchObject({ status: 'ok', error: null, total: b.body.count, groups: b.body.groups })
    expect(a.body.data.length).toBe(2)
    expect((await app.json('GET', '/api/v1/bible/kjv/search?q=shepherd&fields=nope', { form: 'bare' })).status).toBe(400)
    expect((await app.json('GET', '/api/v1/bible/kjv/search?q=zzzzqqq', { form: 'bare' })).body).toEqual({
      count: 0,
      groups: [],
      results: [],
    })
    expect((await app.json('GET', '/api/v1/bible/kjv/search?q=shepherd&sort=best', { form: 'bare' })).status).toBe(422)
    expect((await app.json('GET', '/api/v1/bible/kjv/search?q=shepherd&limit=0', { form: 'bare' })).status).toBe(422)
  })

  test('hits carry reference, text, translation and a snippet with <mark> around the matches', async () => {
    const r = await app.json('GET', '/api/v1/bible/kjv/search?q=%22only%20begotten%20son%22&sort=canonical&limit=1', { form: 'bare' })
    const h = r.body.results[0]
    expect(h).toMatchObject({ translation: 'kjv', reference: 'John 1:18', book: 'JHN', chapter: 1, verse: 18 })
    expect(h.snippet).toContain('<mark>only begotten Son</mark>')
    expect(h.snippet.replace(/<\/?mark>/g, '')).toBe(h.text)
    const heb = await app.json('GET', '/api/v1/bible/wlc/search?q=%D7%91%D7%A8%D7%90%D7%A9%D7%99%D7%AA&sort=canonical&limit=1', {
      form: 'bare',
    })
    expect(heb.body.results[0].snippet).toStartWith('<mark>בְּרֵאשִׁ֖ית</mark>')
    const zh = await app.json('GET', '/api/v1/bible/cuv/search?q=%E7%A5%9E%E6%84%9B%E4%B8%96%E4%BA%BA', { form: 'bare' })
    expect(zh.body.results[0].snippet).toStartWith('<mark>神愛世人</mark>')
    const pre = await app.json('GET', '/api/v1/bible/kjv/search?q=shepherd*&sort=canonical&limit=1', { form: 'bare' })
    expect(pre.body.results[0].snippet).toContain('<mark>shepherds</mark>')
  })
})

describe('hostile query text', () => {
  test('unusable queries are 422 problems naming q', async () => {
    for (const q of ['*', '""', 'ab*', '"  "', '-', 'a'.repeat(201), Array.from({ length: 17 }, (_, i) => `w${i}`).join(' ')]) {
      const r = await app.json('GET', `/api/v1/bible/search?q=${encodeURIComponent(q)}`, { form: 'bare' })
      expect({ q: q.slice(0, 20), status: r.status }).toEqual({ q: q.slice(0, 20), status: 422 })
      expect(r.body.errors[0].field).toBe('q')
    }
    expect((await app.json('GET', '/api/v1/bible/search', { form: 'bare' })).status).toBe(422)
  })

  test('FTS5 operators are words, not syntax', async () => {
    const or = await app.json('GET', '/api/v1/bible/kjv/search?q=love%20OR%20hate', { form: 'bare' })
    expect(or.body.count).toBe(scan('kjv', [{ words: ['love'] }, { words: ['or'] }, { words: ['hate'] }]).length)
    for (const q of [
      'NOT love',
      'love NOT',
      'NEAR(love hate)',
      'text:love',
      '^love',
      'love AND',
      '(love',
      'love)',
      '"love',
      '{text}: love',
      'love + hate',
    ]) {
      const r = await app.json('GET', `/api/v1/bible/search?q=${encodeURIComponent(q)}&limit=1`, { form: 'bare' })
      expect({ q, status: r.status }).toEqual({ q, status: 200 })
    }
  })

  test('seeded fuzz: 400 random queries of syntax characters, words and unicode: only 200 or 422', async () => {
    const random = rng(14)
    const pieces = [
      '"',
      '*',
      '(',
      ')',
      ':',
      '^',
      '-',
      '+',
      'AND',
      'OR',
      'NOT',
      'NEAR',
      '{',
      '}',
      ',',
      '.',
      "'",
      '\\',
      '\u0000',
      ' ',
      'love',
      'lo',
      'abc',
      'ß',
      'é',
      '\u05B0',
      'ב',
      '神',
      '🙂',
      '\uFEFF',
      '\u202E',
      '%',
      '_',
      'rowid',
      'text',
      'verses_fts',
      ';',
      '--',
      '/*',
    ]
    const statuses = new Set<number>()
    for (let i = 0; i < 400; i++) {
      const n = 1 + Math.floor(random() * 10)
      let q = ''
      for (let k = 0; k < n; k++) q += pieces[Math.floor(random() * pieces.length)]!
      const r = await app.request('GET', `/api/v1/bible/search?q=${encodeURIComponent(q)}&limit=2`, { form: 'bare' })
      statuses.add(r.status)
      if (r.status !== 200 && r.status !== 422) throw new Error(`q=${JSON.stringify(q)}: ${r.status} ${await r.text()}`)
    }
    expect([...statuses].sort()).toEqual([200, 422])
  })

  test('seeded fuzz in process: 3,000 strings of random code points and syntax: results or an invalid-q error, nothing else', () => {
    const service = openBibleService(bibleDb)
    const random = rng(1414)
    const syntax = '"*()^:-+{},.\'\\ '
    let ok = 0
    let invalid = 0
    for (let i = 0; i < 3000; i++) {
      let q = ''
      const n = 1 + Math.floor(random() * 24)
      for (let k = 0; k < n; k++) {
        const r = random()
        if (r < 0.3) q += syntax[Math.floor(random() * syntax.length)]
        else if (r < 0.6) q += String.fromCharCode(97 + Math.floor(random() * 26))
        else if (r < 0.8) q += String.fromCodePoint(Math.floor(random() * 0x3000))
        else q += String.fromCodePoint(0x3000 + Math.floor(random() * 0xd000))
      }
      try {
        service.search(q, random() < 0.5 ? ['kjv', 'cuv', 'wlc'] : undefined, random() < 0.5 ? 'relevance' : 'canonical', {
          limit: 3,
          offset: Math.floor(random() * 5),
        })
        ok++
      } catch (e) {
        if (!(e instanceof AlmanacError && e.kind === 'invalid')) throw new Error(`q=${JSON.stringify(q)}: ${e}`)
        invalid++
      }
    }
    expect(ok).toBeGreaterThan(100)
    expect(invalid).toBeGreaterThan(10)
  })
})
