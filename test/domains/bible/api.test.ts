/**
 * The eleven Bible endpoints over the real built database, in both response forms: shapes, `fields`,
 * paging, quota headers, book spellings, verse references, and the 404/422 problems naming the part
 * that is wrong. Texts are checked against the verse table read directly (the oracle tests prove the
 * table against the mirror).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import bible from '../../../src/domains/bible/index.ts'
import { testApp, type TestApp } from '../../support/app.ts'
import { bibleDb as db } from './db.ts'

let app: TestApp
beforeAll(async () => {
  app = await testApp({ domains: [bible] })
})
afterAll(() => app.close())

/** Direct read of one verse (book by USFX code). */
const verseText = (translation: string, code: string, chapter: number, verse: number) =>
  (
    db
      .query(
        `SELECT v.text FROM verses v JOIN translations t ON v.id BETWEEN t.first_id AND t.last_id
         JOIN books b ON b.translation = t.idx AND b.book = v.book WHERE t.id = ? AND v.book = ? AND v.chapter = ? AND v.verse = ?`,
      )
      .get(translation, BOOK_IDS.get(code)!, chapter, verse) as { text: string } | null
  )?.text
const BOOK_IDS = new Map([
  ['GEN', 1],
  ['PSA', 19],
  ['SNG', 22],
  ['JHN', 43],
  ['1JN', 62],
  ['TOB', 67],
  ['REV', 66],
])

const get = (path: string, form: 'bare' | 'enveloped' = 'bare') => app.json('GET', `/api/v1/bible${path}`, { form })

describe('languages and translations', () => {
  test('languages: Form B {count, languages}, Form A data array; 28 languages, 34 translations', async () => {
    const b = await get('/languages')
    expect(b.status).toBe(200)
    expect(b.body.count).toBe(28)
    expect(b.body.languages.reduce((s: number, l: any) => s + l.translations, 0)).toBe(34)
    expect(b.body.languages.find((l: any) => l.code === 'en')).toEqual({ code: 'en', name: 'English', translations: 6 })
    expect(b.body.languages.find((l: any) => l.code === 'zh')).toEqual({ code: 'zh', name: 'Chinese', translations: 2 })
    const a = await get('/languages', 'enveloped')
    expect(a.body).toMatchObject({ status: 'ok', error: null, total: 28 })
    expect(a.body.data).toEqual(b.body.languages)
    for (const h of ['x-quota-limit', 'x-quota-remaining', 'x-quota-reset']) expect(a.headers.get(h)).not.toBeNull()
  })

  for (const form of ['bare', 'enveloped'] as const)
    test(`${form}: languages honour limit and offset (the count stays the total); bad values are 422s`, async () => {
      const items = (r: any) => (form === 'bare' ? r.body.languages : r.body.data)
      const total = (r: any) => (form === 'bare' ? r.body.count : r.body.total)
      const all = await get('/languages', form)
      expect(items(all)).toHaveLength(28)
      const page = await get('/languages?limit=5&offset=3', form)
      expect(page.status).toBe(200)
      expect(items(page)).toEqual(items(all).slice(3, 8))
      expect(total(page)).toBe(28)
      expect(items(await get('/languages?offset=26', form))).toEqual(items(all).slice(26))
      expect(items(await get('/languages?offset=28', form))).toEqual([])
      expect(items(await get('/languages?limit=1', form))).toEqual(items(all).slice(0, 1))
      // The whole list is still served after a page (the memoized whole is not the page).
      expect(items(await get('/languages', form))).toEqual(items(all))
      for (const bad of ['limit=abc', 'limit=0', 'limit=-1', 'offset=-1', 'offset=x', 'limit=1.5']) {
        const r = await get(`/languages?${bad}`, form)
        expect(r.status).toBe(422)
        expect((form === 'bare' ? r.body : r.body.error).errors[0].field).toBe(bad.split('=')[0])
      }
    })

  test('translations: filter, paging, fields', async () => {
    const all = await get('/translations')
    expect(all.body.count).toBe(34)
    expect(all.body.results[0]).toEqual({
      id: 'kjv',
      name: expect.any(String),
      language: 'en',
      language_name: 'English',
      year: 1611,
      license: 'GPL',
    })
    const de = await get('/translations?language=DE')
    expect(de.body.results.map((t: any) => t.id)).toEqual(['elb1905'])
    expect((await get('/translations?language=xx')).body).toEqual({ count: 0, results: [] })
    const page = await get('/translations?limit=2&offset=2&fields=id')
    expect(page.body).toEqual({ count: 34, results: [{ id: 'ylt' }, { id: 'darby' }] })
    const a = await get('/translations?limit=1', 'enveloped')
    expect(a.body).toMatchObject({ status: 'ok', total: 34, data: [{ id: 'kjv' }] })
    expect((await get('/translations?language=english')).status).toBe(422)
    expect((await get('/translations?fields=nope')).status).toBe(400)
  })

  test('translation detail with books; unknown id is a 404 naming it', async () => {
    const r = await get('/translations/SYNODAL')
    expect(r.body).toMatchObject({ id: 'synodal', language: 'ru', books: 78, verses: 37098, year: 1876 })
    expect((await get('/translations/wlc')).body).toMatchObject({ books: 39, language: 'he' })
    expect((await get('/translations/alb')).body.year).toBeNull()
    const nf = await get('/translations/klingon')
    expect(nf.status).toBe(404)
    expect(nf.body.detail).toContain('klingon')
    expect(nf.body.reason).toBe('unknown_translation')
  })
})

describe('books and chapters', () => {
  test('books of a translation: canonical ids, USFX codes, local names, testaments', async () => {
    const kjv = await get('/kjv/books')
    expect(kjv.body.count).toBe(66)
    expect(kjv.body.results[0]).toEqual({
      id: 1,
      abbr: 'GEN',
      name: 'Genesis',
      local_name: 'Genesis',
      testament: 'OT',
      chapters: 50,
      verses: 1533,
    })
    expect(kjv.body.results[65]).toMatchObject({ id: 66, abbr: 'REV', testament: 'NT' })
    const synodal = await get('/synodal/books')
    expect(synodal.body.count).toBe(78)
    expect(synodal.body.results.filter((b: any) => b.testament === 'DC').length).toBe(12)
    expect(synodal.body.results.find((b: any) => b.abbr === 'JHN').local_name).toBe('От Иоанна')
    const web = await get('/web/books?limit=5&offset=66', 'enveloped')
    expect(web.body.total).toBe(81)
    expect(web.body.data.map((b: any) => b.abbr)).toEqual(['TOB', 'JDT', 'ESG', 'WIS', 'SIR'])
    expect(web.body.data.every((b: any) => b.testament === 'DC')).toBe(true)
    // The Chinese Union file's own title (its <h> element).
    expect((await get('/cuv/books/gen')).body.local_name).toBe('創世紀')
  })

  test.each([
    ['JHN', 'JHN'],
    ['jhn', 'JHN'],
    ['john', 'JHN'],
    ['John', 'JHN'],
    ['jn', 'JHN'],
    ['1-john', '1JN'],
    ['1jn', '1JN'],
    ['1JN', '1JN'],
    ['1john', '1JN'],
    ['1 John', '1JN'],
    ['i-john', '1JN'],
    ['song-of-solomon', 'SNG'],
    ['song', 'SNG'],
    ['SNG', 'SNG'],
    ['song-of-songs', 'SNG'],
    ['gen', 'GEN'],
    ['Genesis', 'GEN'],
    ['ps', 'PSA'],
    ['psalm', 'PSA'],
    ['psalms', 'PSA'],
    ['PSA', 'PSA'],
    ['rev', 'REV'],
    ['revelation', 'REV'],
    ['phil', 'PHP'],
    ['philemon', 'PHM'],
    ['jude', 'JUD'],
    ['judges', 'JDG'],
  ])('book spelling %s is %s', async (spelling, code) => {
    const r = await get(`/kjv/books/${encodeURIComponent(spelling)}`)
    expect(r.status).toBe(200)
    expect(r.body.abbr).toBe(code)
  })

  test('a book unknown, or absent from the translation, is a 404 that says which', async () => {
    const unknown = await get('/kjv/books/hezekiah')
    expect(unknown.status).toBe(404)
    expect(unknown.body).toMatchObject({ reason: 'unknown_book', book: 'hezekiah' })
    const absent = await get('/kjv/books/tobit')
    expect(absent.status).toBe(404)
    expect(absent.body).toMatchObject({ reason: 'book_not_in_translation', book: 'TOB', translation: 'kjv' })
    expect((await get('/wlc/books/matthew')).body.reason).toBe('book_not_in_translation')
    for (const evil of ['constructor', '__proto__', 'toString']) expect((await get(`/kjv/books/${evil}`)).status).toBe(404)
  })

  test('chapters of a book with their verse counts', async () => {
    const r = await get('/kjv/ps/chapters')
    expect(r.body.count).toBe(150)
    expect(r.body.results[118]).toEqual({ chapter: 119, verses: 176 })
    const a = await get('/kjv/ps/chapters?limit=2&fields=verses', 'enveloped')
    expect(a.body).toMatchObject({ total: 150, data: [{ verses: 6 }, { verses: 12 }] })
  })
})

describe('chapters and verses', () => {
  test('a chapter: Form B reference/translation/verses, Form A verse result', async () => {
    const b = await get('/kjv/gen/1')
    expect(b.body.reference).toBe('Genesis 1')
    expect(b.body.translation).toBe('kjv')
    expect(b.body.verses.length).toBe(31)
    expect(b.body.verses[0]).toEqual({ number: 1, text: 'In the beginning God created the heaven and the earth.' })
    const a = await get('/kjv/gen/1', 'enveloped')
    expect(a.body.data).toMatchObject({
      translation_id: 'kjv',
      lang_code: 'en',
      lang_name: 'English',
      chapter: 1,
      reference: 'Genesis 1',
      book: { id: 1, abbr: 'GEN' },
    })
    expect(a.body.data.verses.length).toBe(31)
    expect(a.body.data.verses[30].text).toBe(verseText('kjv', 'GEN', 1, 31))
  })

  test('verse references: one, a range, a list', async () => {
    const one = await get('/kjv/jn/3/16')
    expect(one.body).toEqual({ reference: 'John 3:16', translation: 'kjv', verses: [{ number: 16, text: verseText('kjv', 'JHN', 3, 16) }] })
    expect(one.body.verses[0].text).toStartWith('For God so loved the world')
    const a = await get('/kjv/jn/3/16', 'enveloped')
    expect(a.body.data).toMatchObject({
      translation_id: 'kjv',
      translation_name: expect.any(String),
      chapter: 3,
      verse: { verse: 16, text: one.body.verses[0].text },
      reference: 'John 3:16',
    })
    expect(a.body.data.verses).toBeUndefined()
    const range = await get('/kjv/jn/3/16-18')
    expect(range.body.verses.map((v: any) => v.number)).toEqual([16, 17, 18])
    expect(range.body.reference).toBe('John 3:16-18')
    const listed = await get('/kjv/jn/3/16,18-20', 'enveloped')
    expect(listed.body.data.verses.map((v: any) => v.verse)).toEqual([16, 18, 19, 20])
    expect(listed.body.data.verse.verse).toBe(16)
    expect(listed.body.data.reference).toBe('John 3:16,18-20')
    expect((await get('/web/tob/1/2')).body.verses[0].text).toBe(verseText('web', 'TOB', 1, 2))
    expect((await get('/kjv/jn/3/16?fields=reference')).body).toEqual({ reference: 'John 3:16' })
  })

  test('out of range chapter or verse, unknown book or translation: 404 naming the part', async () => {
    const ch = await get('/kjv/jn/22')
    expect(ch.status).toBe(404)
    expect(ch.body).toMatchObject({ reason: 'chapter_out_of_range', chapter: 22, chapters: 21 })
    expect(ch.body.detail).toContain('Chapter 22')
    const v = await get('/kjv/jn/3/37')
    expect(v.body).toMatchObject({ status: 404, reason: 'verse_out_of_range', verse: 37, verses: 36 })
    expect((await get('/kjv/jn/3/30-40')).body).toMatchObject({ status: 404, verse: 40 })
    expect((await get('/kjv/xyz/3/16')).body).toMatchObject({ status: 404, reason: 'unknown_book', book: 'xyz' })
    expect((await get('/xyz/jn/3/16')).body).toMatchObject({ status: 404, reason: 'unknown_translation', translation: 'xyz' })
    const en = await get('/xyz/jn/3/16', 'enveloped')
    expect(en.body).toMatchObject({ status: 'error', data: null, error: { status: 404 } })
  })

  test('malformed references are 422 problems naming the path member', async () => {
    for (const bad of ['0', '18-16', 'abc', '1-2-3', '16,,18', '-1', '1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21']) {
      const r = await get(`/kjv/jn/3/${encodeURIComponent(bad)}`)
      expect({ bad, status: r.status }).toEqual({ bad, status: 422 })
      expect(r.body.errors[0].field).toBe('verse_ref')
    }
    const chapter = await get('/kjv/jn/x/1')
    expect(chapter.status).toBe(422)
    expect((await get('/kjv/jn/0')).status).toBe(422)
    expect((await get(`/kjv/${'a'.repeat(100)}/1`)).status).toBe(422)
  })
})

describe('credits', () => {
  test('the datasets endpoint credits the licences that ask for it (GPL markup, CC BY, CC BY-SA)', async () => {
    const r = await app.json('GET', '/api/v1/meta/datasets/bible', { form: 'bare' })
    expect(r.status).toBe(200)
    const text = JSON.stringify(r.body)
    expect(text).toContain('GPL-2.0')
    expect(text).toContain('CC-BY-3.0-BR')
    expect(text).toContain('Diego Santos, Mario Sérgio & Marco Teles')
    expect(text).toContain('CC-BY-SA-4.0')
    expect(text).toContain('Arabic Bible Outreach Ministry')
    expect(text).toContain('STEPBible.org')
  })
})
