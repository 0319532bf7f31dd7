/**
 * The verse of the day over the real database, with the service's clock fixed per test (no wall
 * clock): the same verse for every call on a UTC date and filters, other verses on other dates, spread
 * over the filtered set, filters honoured, and 404s for filters that leave nothing. Then the HTTP route.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import bible from '../../../src/domains/bible/index.ts'
import { type BibleService, openBibleService } from '../../../src/domains/bible/service.ts'
import { AlmanacError } from '../../../src/lib/errors.ts'
import { testApp, type TestApp } from '../../support/app.ts'
import { bibleDb as db } from './db.ts'

let clock = new Date('2026-03-01T00:00:00Z')
const service = openBibleService(db, { now: () => clock })
const at = (iso: string) => {
  clock = new Date(iso)
}
const ref = (p: { translation: { id: string }; reference: string }) => `${p.translation.id} ${p.reference}`

let app: TestApp
beforeAll(async () => {
  app = await testApp({ domains: [bible] })
})
afterAll(() => app.close())

describe('daily mode', () => {
  test('same verse all day (UTC) for the same filters; the default translation is kjv', () => {
    at('2026-03-01T00:00:00Z')
    const first = service.daily({}, 'daily')
    expect(first.translation.id).toBe('kjv')
    expect(first.date).toBe('2026-03-01')
    for (const t of ['2026-03-01T09:30:00Z', '2026-03-01T23:59:59.999Z']) {
      at(t)
      expect(ref(service.daily({}, 'daily'))).toBe(ref(first))
    }
    at('2026-03-02T00:00:00Z')
    expect(service.daily({}, 'daily').date).toBe('2026-03-02')
  })

  test('over 200 dates: many distinct verses, drawn from the whole Bible', () => {
    const refs = new Set<string>()
    const books = new Set<number>()
    for (let d = 0; d < 200; d++) {
      at(new Date(Date.UTC(2026, 0, 1) + d * 86400000).toISOString())
      const p = service.daily({}, 'daily')
      refs.add(ref(p))
      books.add(p.book.book.id)
    }
    expect(refs.size).toBeGreaterThan(190)
    expect(books.size).toBeGreaterThan(40)
  })

  test('filters: translation, language, testament, book; each changes the pool and stays stable', () => {
    at('2026-05-05T12:00:00Z')
    const nt = service.daily({ testament: 'NT' }, 'daily')
    expect(nt.book.book.testament).toBe('NT')
    expect(ref(service.daily({ testament: 'nt' }, 'daily'))).toBe(ref(nt))
    const ps = service.daily({ translation: 'web', book: 'ps' }, 'daily')
    expect(ps.translation.id).toBe('web')
    expect(ps.book.book.abbr).toBe('PSA')
    const dc = service.daily({ translation: 'vulgclem', testament: 'DC' }, 'daily')
    expect(dc.book.book.testament).toBe('DC')
    const de = service.daily({ language: 'de' }, 'daily')
    expect(de.translation.language).toBe('de')
    const en = service.daily({ language: 'en' }, 'daily')
    expect(en.translation.language).toBe('en')
    for (let i = 0; i < 3; i++) expect(ref(service.daily({ language: 'en' }, 'daily'))).toBe(ref(en))
    expect(ps.verses[0]!.text.length).toBeGreaterThan(0)
  })

  test('a filter that leaves nothing is a 404', () => {
    const notFound = (f: Parameters<BibleService['daily']>[0]) => {
      try {
        service.daily(f, 'daily')
      } catch (e) {
        return e instanceof AlmanacError && e.kind === 'not_found'
      }
      return false
    }
    expect(notFound({ translation: 'wlc', testament: 'NT' })).toBe(true)
    expect(notFound({ translation: 'kjv', testament: 'DC' })).toBe(true)
    expect(notFound({ translation: 'kjv', book: 'tobit' })).toBe(true)
    expect(notFound({ testament: 'OT', book: 'john' })).toBe(true)
    expect(notFound({ language: 'xx' })).toBe(true)
    expect(notFound({ translation: 'kjv', language: 'de' })).toBe(true)
    expect(notFound({ translation: 'nope' })).toBe(true)
    expect(notFound({ book: 'nope' })).toBe(true)
  })
})

describe('random mode', () => {
  test('a new verse per call', () => {
    const refs = new Set<string>()
    for (let i = 0; i < 20; i++) refs.add(ref(service.daily({}, 'random')))
    expect(refs.size).toBeGreaterThan(15)
  })
})

describe('GET /bible/daily', () => {
  test('both forms carry the verse and the date; repeated calls agree; random differs', async () => {
    const b1 = await app.json('GET', '/api/v1/bible/daily?testament=NT', { form: 'bare' })
    const b2 = await app.json('GET', '/api/v1/bible/daily?testament=NT', { form: 'bare' })
    expect(b1.status).toBe(200)
    expect(b1.body).toEqual(b2.body)
    expect(Object.keys(b1.body).sort()).toEqual(['date', 'reference', 'translation', 'verses'])
    const a = await app.json('GET', '/api/v1/bible/daily?testament=NT', { form: 'enveloped' })
    expect(a.body.data).toMatchObject({
      translation_id: 'kjv',
      translation_name: expect.any(String),
      lang_code: 'en',
      lang_name: 'English',
      book: { testament: 'NT' },
      verse: { text: b1.body.verses[0].text },
    })
    expect(a.body.data.reference).toBe(b1.body.reference)
    const randoms = new Set<string>()
    for (let i = 0; i < 10; i++) randoms.add((await app.json('GET', '/api/v1/bible/daily?mode=random', { form: 'bare' })).body.reference)
    expect(randoms.size).toBeGreaterThan(5)
    expect((await app.json('GET', '/api/v1/bible/daily?mode=weekly', { form: 'bare' })).status).toBe(422)
    expect((await app.json('GET', '/api/v1/bible/daily?testament=XX', { form: 'bare' })).status).toBe(422)
    const none = await app.json('GET', '/api/v1/bible/daily?translation=wlc&testament=NT', { form: 'bare' })
    expect(none.status).toBe(404)
  })
})
