/**
 * The six countries endpoints through the real app: both response forms, `fields`, paging, filters and
 * search, withdrawn codes, validation limits and quota cost, and the definitions date header.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import countriesDomain from '../../../src/domains/countries/index.ts'
import { testApp, type TestApp } from '../../support/app.ts'
import { MIRROR } from '../../support/mirror.ts'

let app: TestApp
beforeAll(async () => {
  app = await testApp({ domains: [countriesDomain], env: { ALMANAC_RESPONSE_FORM: 'bare' } })
})
afterAll(() => app.close())

const get = (path: string, form: 'bare' | 'enveloped' = 'bare') => app.json('GET', `/api/v1${path}`, { form })
const post = (path: string, body: unknown, form: 'bare' | 'enveloped' = 'bare') => app.json('POST', `/api/v1${path}`, { body, form })

describe('GET /countries/{code}', () => {
  test('Form B: alpha2/alpha3 plus languages, currencies, calling codes; no subdivisions', async () => {
    const { status, body } = await get('/countries/fr')
    expect(status).toBe(200)
    expect(body).toMatchObject({
      alpha2: 'FR',
      alpha3: 'FRA',
      numeric: '250',
      name: 'France',
      official_name: 'French Republic',
      region: 'Europe',
      sub_region: 'Western Europe',
      capital: 'Paris',
    })
    expect(body.currencies).toEqual(['EUR'])
    expect(body.calling_codes).toEqual(['+33'])
    expect(body.languages).toEqual(['French'])
    expect(body).not.toHaveProperty('subdivisions')
    expect(body).not.toHaveProperty('alpha_2')
  })

  test('Form A: enveloped, alpha_2/alpha_3, with every subdivision', async () => {
    const { status, body } = await get('/countries/FRA', 'enveloped')
    expect(status).toBe(200)
    expect(body.status).toBe('ok')
    expect(body.error).toBeNull()
    expect(body.data).toMatchObject({ alpha_2: 'FR', alpha_3: 'FRA', numeric: '250' })
    expect(body.data).not.toHaveProperty('alpha2')
    const list = await get('/countries/FR/subdivisions?limit=1000')
    expect(body.data.subdivisions).toEqual(list.body.results)
    expect(body.data.subdivisions.length).toBe(list.body.count)
    expect(body.data.subdivisions.find((s: any) => s.code === 'FR-75C')).toEqual({
      code: 'FR-75C',
      name: 'Paris',
      type: 'Metropolitan collectivity with special status',
      parent: 'FR-IDF',
    })
  })

  test('numeric codes with or without leading zeros, any case of letters', async () => {
    for (const code of ['076', '76', 'bra', 'Br', 'BRA']) expect((await get(`/countries/${code}`)).body.alpha2).toBe('BR')
    expect((await get('/countries/840')).body.alpha2).toBe('US')
  })

  test('fields keeps only the named members, in either form', async () => {
    expect((await get('/countries/de?fields=alpha2,calling_codes')).body).toEqual({ alpha2: 'DE', calling_codes: ['+49'] })
    expect((await get('/countries/de?fields=alpha_2,name', 'enveloped')).body.data).toEqual({ alpha_2: 'DE', name: 'Germany' })
    const bad = await get('/countries/de?fields=alpha_2')
    expect(bad.status).toBe(400)
    expect(bad.body.detail).toContain('alpha_2')
  })

  test('unknown codes are a 404; malformed ones a 422 naming the path member', async () => {
    const unknown = await get('/countries/QQ')
    expect(unknown.status).toBe(404)
    expect(unknown.body.detail).toContain('QQ')
    expect(unknown.body).not.toHaveProperty('successors')
    expect((await get('/countries/999')).status).toBe(404)
    for (const code of ['U', 'USAAA', 'U1', '1234']) {
      const r = await get(`/countries/${code}`)
      expect(r.status).toBe(422)
      expect(r.body.errors).toEqual([expect.objectContaining({ in: 'path', field: 'code' })])
    }
  })

  test('withdrawn ISO 3166-3 codes are a 404 naming their successors', async () => {
    const yu = await get('/countries/YU')
    expect(yu.status).toBe(404)
    expect(yu.body).toMatchObject({ code: 'YU', withdrawn: true, successors: ['RS', 'ME'] })
    expect(yu.body.detail).toContain('Yugoslavia')
    const ant = await get('/countries/ant')
    expect(ant.body).toMatchObject({ withdrawn: true, successors: ['BQ', 'CW', 'SX'] })
    // CS named two countries in turn; both are reported.
    const cs = await get('/countries/CS')
    expect(cs.body.former.map((f: any) => f.name)).toEqual(['Czechoslovakia, Czechoslovak Socialist Republic', 'Serbia and Montenegro'])
    expect(cs.body.successors).toEqual(['CZ', 'SK', 'RS', 'ME'])
    expect((await get('/countries/ZR')).body.successors).toEqual(['CD'])
    expect((await get('/countries/BUMM')).body.successors).toEqual(['MM'])
    // A code that is current again answers as the current country, not as its withdrawn namesake.
    expect((await get('/countries/BY')).body.alpha2).toBe('BY')
    expect((await get('/countries/104')).body.alpha2).toBe('MM')
    // Form A wraps the same problem.
    const a = await get('/countries/YU', 'enveloped')
    expect(a.body).toMatchObject({ status: 'error', data: null, error: { status: 404, successors: ['RS', 'ME'] } })
  })

  test('every successor named by a withdrawn code is a current country', async () => {
    const iso3 = JSON.parse(readFileSync(join(MIRROR, 'iso-codes', 'iso_3166-3.json'), 'utf8'))['3166-3'] as { alpha_4: string }[]
    // The four-letter ISO 3166-3 code is never reused (alpha-3 ATF, for one, is current again: TF).
    for (const f of iso3) {
      const r = await get(`/countries/${f.alpha_4}`)
      expect(r.status).toBe(404)
      expect(r.body.withdrawn).toBe(true)
      for (const s of r.body.successors) expect((await get(`/countries/${s}`)).status).toBe(200)
    }
  })

  test('GET on the validate path is a 405 pointing at POST', async () => {
    const r = await get('/countries/validate')
    expect(r.status).toBe(405)
    expect(r.headers.get('allow')).toBe('POST')
  })
})

describe('GET /countries', () => {
  test('default limit 50, count before paging, stable pages', async () => {
    const first = await get('/countries')
    expect(first.body.count).toBe(249)
    expect(first.body.results.length).toBe(50)
    const all = (await get('/countries?limit=1000')).body.results.map((c: any) => c.alpha2)
    const page = await get('/countries?limit=10&offset=245')
    expect(page.body.count).toBe(249)
    expect(page.body.results.map((c: any) => c.alpha2)).toEqual(all.slice(245))
    expect((await get('/countries?offset=5000')).body).toEqual({ count: 249, results: [] })
  })

  test('Form A: data array with total', async () => {
    const { body } = await get('/countries?limit=3&region=oceania', 'enveloped')
    expect(body.status).toBe('ok')
    expect(body.data.length).toBe(3)
    expect(body.total).toBeGreaterThan(20)
    expect(body.data[0]).toHaveProperty('alpha_2')
    expect(body.data[0]).not.toHaveProperty('subdivisions')
  })

  test('list items carry no detail members', async () => {
    const { body } = await get('/countries?limit=1')
    expect(Object.keys(body.results[0]).sort()).toEqual([
      'alpha2',
      'alpha3',
      'capital',
      'intermediate_region',
      'name',
      'numeric',
      'official_name',
      'region',
      'sub_region',
    ])
  })

  test('region and sub_region are exact, case-insensitive filters', async () => {
    const europe = await get('/countries?region=EUROPE&limit=1000')
    expect(europe.body.count).toBeGreaterThan(40)
    for (const c of europe.body.results) expect(c.region).toBe('Europe')
    const eastern = await get('/countries?sub_region=eastern%20asia&limit=1000')
    expect(eastern.body.results.map((c: any) => c.alpha2).sort()).toEqual(['CN', 'HK', 'JP', 'KP', 'KR', 'MN', 'MO', 'TW'])
    // An intermediate region is accepted too.
    const carib = await get('/countries?sub_region=Caribbean&limit=1000')
    expect(carib.body.results.map((c: any) => c.alpha2)).toContain('JM')
    for (const c of carib.body.results) expect(c.intermediate_region).toBe('Caribbean')
    const both = await get('/countries?region=africa&sub_region=northern%20africa')
    expect(both.body.results.map((c: any) => c.alpha2).sort()).toEqual(['DZ', 'EG', 'EH', 'LY', 'MA', 'SD', 'TN'])
    // Exact, not a prefix.
    expect((await get('/countries?region=Eur')).status).toBe(422)
  })

  test('an unknown region is a 422 listing the valid ones', async () => {
    const r = await get('/countries?region=Atlantis')
    expect(r.status).toBe(422)
    expect(r.body.errors[0]).toMatchObject({ in: 'query', field: 'region' })
    expect(r.body.detail).toContain('Africa, Americas, Asia, Europe, Oceania')
    expect((await get('/countries?sub_region=Atlantis')).body.errors[0].field).toBe('sub_region')
  })

  test('q: accent- and case-insensitive word prefixes over common, official and ISO names', async () => {
    const codes = async (q: string) =>
      (await get(`/countries?limit=1000&q=${encodeURIComponent(q)}`)).body.results.map((c: any) => c.alpha2).sort()
    expect(await codes('cote')).toEqual(['CI'])
    expect(await codes('CÔTE D’IV')).toEqual(['CI'])
    expect(await codes('aland')).toEqual(['AX'])
    expect(await codes('ivory')).toEqual(['CI']) // world-countries' common name
    expect(await codes('united k')).toEqual(['GB'])
    expect(await codes('Great Britain')).toEqual(['GB']) // official name
    expect(await codes('plurinational')).toEqual(['BO']) // ISO name "Bolivia, Plurinational State of"
    expect(await codes('korea')).toEqual(['KP', 'KR'])
    expect(await codes('south korea')).toEqual(['KR'])
    expect(await codes('nether')).toEqual(['BQ', 'NL']) // BQ: world-countries' "Caribbean Netherlands"
    expect(await codes('therlands')).toEqual([]) // inside a word: not a prefix
    const counted = await get('/countries?q=united&limit=1')
    expect(counted.body.count).toBeGreaterThan(3)
    expect(counted.body.results.length).toBe(1)
  })

  test('bad query members are 422s naming them', async () => {
    for (const [query, field] of [
      ['limit=0', 'limit'],
      ['limit=abc', 'limit'],
      ['offset=-1', 'offset'],
      ['q=%20!!', 'q'],
      ['q=', 'q'],
    ]) {
      const r = await get(`/countries?${query}`)
      expect(r.status).toBe(422)
      expect(r.body.errors.map((e: any) => e.field)).toContain(field)
    }
  })
})

describe('GET /countries/{code}/subdivisions and /subdivisions/{code}', () => {
  test('type filter is exact and case-insensitive; parents are included', async () => {
    const r = await get('/countries/gb/subdivisions?type=country&limit=100')
    expect(r.body.results).toEqual([
      { code: 'GB-ENG', name: 'England', type: 'Country', parent: null },
      { code: 'GB-SCT', name: 'Scotland', type: 'Country', parent: null },
      { code: 'GB-WLS', name: 'Wales [Cymru GB-CYM]', type: 'Country', parent: null },
    ])
    expect(r.body.count).toBe(3)
    const councils = await get('/countries/GBR/subdivisions?type=COUNCIL%20AREA&limit=100')
    expect(councils.body.count).toBe(32)
    for (const s of councils.body.results) expect(s.parent).toBe('GB-SCT')
    expect((await get('/countries/gb/subdivisions?type=no%20such%20type')).body).toEqual({ count: 0, results: [] })
  })

  test('q, paging and count', async () => {
    const q = await get('/countries/mx/subdivisions?q=ciudad')
    expect(q.body.results).toEqual([{ code: 'MX-CMX', name: 'Ciudad de México', type: 'Federal entity', parent: null }])
    expect((await get('/countries/mx/subdivisions?q=MEXICO')).body.results.map((s: any) => s.code).sort()).toEqual(['MX-CMX', 'MX-MEX'])
    const us = await get('/countries/us/subdivisions')
    expect(us.body.count).toBe(57)
    expect(us.body.results.length).toBe(50)
    const tail = await get('/countries/us/subdivisions?offset=50&limit=50')
    expect(tail.body.results.length).toBe(7)
    const fields = await get('/countries/us/subdivisions?fields=code&limit=2')
    expect(fields.body.results).toEqual([{ code: 'US-AK' }, { code: 'US-AL' }])
  })

  test('a country without subdivisions lists none; an unknown country is a 404', async () => {
    expect((await get('/countries/AQ/subdivisions')).body).toEqual({ count: 0, results: [] })
    expect((await get('/countries/QQ/subdivisions')).status).toBe(404)
    expect((await get('/countries/YU/subdivisions')).body.successors).toEqual(['RS', 'ME'])
  })

  test('single subdivision: country and parent, both forms', async () => {
    const b = await get('/subdivisions/gb-abd')
    expect(b.body).toEqual({ code: 'GB-ABD', name: 'Aberdeenshire', type: 'Council area', country: 'GB', parent: 'GB-SCT' })
    const a = await get('/subdivisions/US-CA', 'enveloped')
    expect(a.body).toEqual({
      status: 'ok',
      data: { code: 'US-CA', name: 'California', type: 'State', country: 'US', parent: null },
      error: null,
    })
  })

  test('changed and withdrawn subdivision codes are 404s naming their successors', async () => {
    const dif = await get('/subdivisions/MX-DIF')
    expect(dif.status).toBe(404)
    expect(dif.body).toMatchObject({ withdrawn: true, successors: ['MX-CMX'] })
    expect((await get('/subdivisions/GB-NTH')).body.successors).toEqual(['GB-NNH', 'GB-WNH'])
    expect((await get('/subdivisions/in-or')).body.successors).toEqual(['IN-OD'])
    const none = await get('/subdivisions/NP-ME')
    expect(none.body).toMatchObject({ withdrawn: true, successors: [] })
    const never = await get('/subdivisions/US-ZZ')
    expect(never.status).toBe(404)
    expect(never.body).not.toHaveProperty('withdrawn')
    expect((await get('/subdivisions/california')).status).toBe(422)
  })
})

describe('POST /countries/validate and /subdivisions/validate', () => {
  test('known, unknown, withdrawn and malformed codes; the input is echoed', async () => {
    const { status, body } = await post('/countries/validate', { codes: ['us', 'DEU', '076', 'XX', 'YU', 'not a code', ''] })
    expect(status).toBe(200)
    expect(body).toEqual({
      results: [
        { code: 'us', valid: true, name: 'United States' },
        { code: 'DEU', valid: true, name: 'Germany' },
        { code: '076', valid: true, name: 'Brazil' },
        { code: 'XX', valid: false, name: null },
        { code: 'YU', valid: false, name: null },
        { code: 'not a code', valid: false, name: null },
        { code: '', valid: false, name: null },
      ],
    })
    const subs = await post('/subdivisions/validate', { codes: ['gb-sct', 'MX-DIF', 'US-ZZ', 'US'] }, 'enveloped')
    expect(subs.body).toEqual({
      status: 'ok',
      data: [
        { code: 'gb-sct', valid: true, name: 'Scotland' },
        { code: 'MX-DIF', valid: false, name: null },
        { code: 'US-ZZ', valid: false, name: null },
        { code: 'US', valid: false, name: null },
      ],
      error: null,
    })
  })

  test('a non-string item is a 422 naming its index', async () => {
    for (const path of ['/countries/validate', '/subdivisions/validate']) {
      const r = await post(path, { codes: ['US', 'FR', 'DE', 840] })
      expect(r.status).toBe(422)
      expect(r.body.errors.map((e: any) => e.field)).toContain('codes.3')
    }
  })

  test('more than 100 codes, none, or no array at all are rejected', async () => {
    const many = await post('/countries/validate', { codes: Array.from({ length: 101 }, () => 'US') })
    expect([413, 422]).toContain(many.status)
    expect(JSON.stringify(many.body.errors)).toContain('codes')
    expect((await post('/subdivisions/validate', { codes: [] })).status).toBe(422)
    expect((await post('/countries/validate', { code: 'US' })).status).toBe(422)
    expect((await post('/countries/validate', 'US')).status).toBeOneOf([400, 422])
    const exactly = await post('/countries/validate', { codes: Array.from({ length: 100 }, () => 'US') })
    expect(exactly.status).toBe(200)
    expect(exactly.body.results.length).toBe(100)
  })

  test('each code costs one quota credit', async () => {
    const remaining = async (r: Promise<{ headers: Headers }>) => Number((await r).headers.get('x-quota-remaining'))
    const before = await remaining(get('/countries/US'))
    const after7 = await remaining(post('/countries/validate', { codes: ['US', 'FR', 'DE', 'IT', 'ES', 'PT', 'NL'] }))
    expect(before - after7).toBe(7)
    const after10 = await remaining(post('/subdivisions/validate', { codes: Array.from({ length: 3 }, () => 'US-CA') }))
    expect(after7 - after10).toBe(3)
    const single = await remaining(get('/countries/US'))
    expect(after10 - single).toBe(1)
  })
})

test('every countries response carries X-Definitions-Updated: the iso-codes release date of the mirror', async () => {
  const manifest = JSON.parse(readFileSync(join(MIRROR, 'MANIFEST.json'), 'utf8'))
  const entry = manifest.files.find((f: any) => f.path === 'iso-codes/iso_3166-1.json')
  const date = /(\d{4}-\d{2}-\d{2})/.exec(entry.upstream_date)![1]
  for (const r of [
    get('/countries'),
    get('/countries/US'),
    get('/countries/QQ'),
    get('/countries/US/subdivisions'),
    get('/subdivisions/US-CA'),
    post('/countries/validate', { codes: ['US'] }),
    post('/subdivisions/validate', { codes: [1] }),
  ]) {
    expect((await r).headers.get('x-definitions-updated')).toBe(date)
  }
  // Problems that happen before routing: no key (401), malformed JSON (400), a path no route has (404).
  const early = [
    app.request('GET', '/api/v1/countries/US', { key: null }),
    app.request('POST', '/api/v1/countries/validate', { body: '{"codes": [', headers: { 'content-type': 'application/json' } }),
    app.request('GET', '/api/v1/subdivisions/US-CA/nothing/here'),
  ]
  for (const r of early) {
    const res = await r
    expect({ status: res.status, date: res.headers.get('x-definitions-updated') }).toEqual({ status: expect.any(Number), date })
    expect(res.status).toBeGreaterThanOrEqual(400)
  }
  // Only under the domain's prefixes.
  expect((await app.request('GET', '/api/v1/countriesx')).headers.get('x-definitions-updated')).toBeNull()
  expect((await app.request('GET', '/api/v1/meta/datasets')).headers.get('x-definitions-updated')).toBeNull()
})
