/**
 * The country facts beyond the SPEC (docs/countries.md) for every ISO 3166-1 country, in both forms,
 * against their upstreams read here independently of the builder: GeoNames countryInfo.txt by its own
 * header row, world-countries' JSON, tzdata's zone tables, and for the first day of the week the ICU
 * copy of CLDR inside the runtime (Intl.Locale#getWeekInfo), a separate implementation of the same data.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import world from 'world-countries/countries.json'
import countriesDomain from '../../../src/domains/countries/index.ts'
import postalDomain from '../../../src/domains/postal/index.ts'
import timezonesDomain from '../../../src/domains/timezones/index.ts'
import { testApp, type TestApp } from '../../support/app.ts'
import { MIRROR } from '../../support/mirror.ts'

let app: TestApp
/** alpha-2 -> the single-country answer, Form B and Form A. */
const bare = new Map<string, any>()
const enveloped = new Map<string, any>()

/** countryInfo.txt as a table keyed by its own header names (`#ISO`, `Area(in sq km)`, `neighbours` …). */
function geonames(): Map<string, Record<string, string>> {
  const lines = readFileSync(join(MIRROR, 'geonames-countryinfo/countryInfo.txt'), 'utf8').split(/\r?\n/)
  const header = lines.find((l) => l.startsWith('#ISO\t'))!.split('\t')
  const rows = lines.filter((l) => l && !l.startsWith('#')).map((l) => Object.fromEntries(l.split('\t').map((v, i) => [header[i]!, v])))
  return new Map(rows.map((r) => [r['#ISO']!, r]))
}

/** The date the mirror records for its copy of countryInfo.txt (`upstream_date` in MANIFEST.json). */
function geonamesDate(): string {
  const manifest = JSON.parse(readFileSync(join(MIRROR, 'MANIFEST.json'), 'utf8'))
  const entry = manifest.files.find((f: any) => f.path === 'geonames-countryinfo/countryInfo.txt')
  return /(\d{4}-\d{2}-\d{2})/.exec(entry.upstream_date)![1]!
}

beforeAll(async () => {
  app = await testApp({ domains: [countriesDomain, timezonesDomain, postalDomain] })
  const { body } = await app.json('GET', '/api/v1/countries?limit=1000', { form: 'bare' })
  for (const c of body.results) {
    bare.set(c.alpha2, (await app.json('GET', `/api/v1/countries/${c.alpha2}`, { form: 'bare' })).body)
    enveloped.set(c.alpha2, (await app.json('GET', `/api/v1/countries/${c.alpha2}`, { form: 'enveloped' })).body.data)
  }
}, 60_000)
afterAll(() => app.close())

const FACTS = [
  'flag',
  'native_names',
  'alt_spellings',
  'area_km2',
  'population',
  'borders',
  'latitude',
  'longitude',
  'tlds',
  'timezones',
  'start_of_week',
  'postal_code',
]

describe('country facts', () => {
  test('all 249 countries carry every fact, the same in both forms', () => {
    expect(bare.size).toBe(249)
    for (const [code, b] of bare) {
      for (const f of FACTS) expect(Object.hasOwn(b, f), `${code} ${f}`).toBe(true)
      expect(Object.fromEntries(FACTS.map((f) => [f, enveloped.get(code)[f]]))).toEqual(Object.fromEntries(FACTS.map((f) => [f, b[f]])))
    }
  })

  test('area, population, first TLD, borders and postal format are GeoNames countryInfo.txt', () => {
    const rows = geonames()
    const asOf = geonamesDate()
    let compared = 0
    for (const [code, b] of bare) {
      const g = rows.get(code)
      if (!g) {
        expect([b.area_km2, b.population, b.borders, b.postal_code], code).toEqual([null, null, [], null])
        continue
      }
      compared++
      expect(b.area_km2, code).toBe(Number(g['Area(in sq km)']))
      expect(b.population, code).toEqual({ value: Number(g.Population), source: 'GeoNames countryInfo.txt', as_of: asOf })
      if (g.tld) expect(b.tlds[0], code).toBe(g.tld)
      const neighbours = g
        .neighbours!.split(',')
        .filter((n) => n && bare.has(n))
        .sort()
      expect(b.borders, code).toEqual(neighbours)
      expect(b.postal_code === null, code).toBe(!g['Postal Code Format'])
    }
    expect(compared).toBeGreaterThan(240)
  })

  test('the postal code format is the one GET /api/v1/postal/{code} gives', async () => {
    for (const code of ['US', 'GB', 'FR', 'NL', 'JP', 'BR', 'CA']) {
      const { body } = await app.json('GET', `/api/v1/postal/${code}`, { form: 'bare' })
      expect(bare.get(code).postal_code).toEqual({ format: body.format, regex: body.regex })
    }
    // Independently of the postal domain: GeoNames' own regex accepts what ours accepts for a sample.
    expect(new RegExp(bare.get('US').postal_code.regex).test('90210-1234')).toBe(true)
    expect(new RegExp(bare.get('GB').postal_code.regex).test('SW1A 1AA')).toBe(true)
    expect(new RegExp(bare.get('NL').postal_code.regex).test('1234')).toBe(false)
  })

  test('flag, native names, alternative spellings and position are world-countries', () => {
    const byCode = new Map((world as any[]).map((w) => [w.cca2, w]))
    let compared = 0
    for (const [code, b] of bare) {
      const w = byCode.get(code)
      if (!w) continue
      compared++
      // world-countries leaves a few empty (BQ); ours is still the code's regional indicator pair.
      if (w.flag) expect(b.flag, code).toBe(w.flag)
      else expect([...b.flag].map((ch: string) => String.fromCharCode(ch.codePointAt(0)! - 0x1f1e6 + 65)).join(''), code).toBe(code)
      expect(b.native_names, code).toEqual(w.name.native ?? {})
      expect(b.alt_spellings, code).toEqual([...new Set(w.altSpellings)])
      expect([b.latitude, b.longitude], code).toEqual(w.latlng)
      for (const tld of w.tld) expect(b.tlds, code).toContain(tld)
    }
    expect(compared).toBe(249)
  })

  test("timezones are those tzdata's zone tables give the country, as the timezones domain lists them", async () => {
    const tables = ['zone1970.tab', 'zone.tab'].map((f) => readFileSync(join('/usr/share/zoneinfo', f), 'utf8'))
    const expected = new Map<string, Set<string>>()
    for (const line of tables.join('\n').split('\n')) {
      if (line.startsWith('#') || !line.trim()) continue
      const [codes, , zone] = line.split('\t')
      for (const code of codes!.split(',')) expected.set(code, (expected.get(code) ?? new Set()).add(zone!))
    }
    for (const [code, b] of bare) expect(b.timezones, code).toEqual([...(expected.get(code) ?? [])].sort())
    for (const code of ['US', 'NO', 'AQ', 'FR', 'RU']) {
      const { body } = await app.json('GET', `/api/v1/timezones?country=${code}&limit=500&fields=timezone`, { form: 'bare' })
      expect(bare.get(code).timezones).toEqual(body.results.map((r: any) => r.timezone).sort())
    }
  })

  test("the first day of the week is CLDR's, as the runtime's ICU has it", () => {
    const DAYS = ['', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday']
    const differ: string[] = []
    for (const [code, b] of bare) {
      const icu = (new Intl.Locale(`und-${code}`) as any).getWeekInfo().firstDay as number
      if (b.start_of_week !== DAYS[icu]) differ.push(`${code}: ${b.start_of_week} vs ICU ${DAYS[icu]}`)
    }
    // Both read CLDR (ours version 48, the runtime's ICU its own): they may part on a few territories only.
    expect(differ.length, differ.join('; ')).toBeLessThanOrEqual(3)
    expect(bare.get('US').start_of_week).toBe('sunday')
    expect(bare.get('FR').start_of_week).toBe('monday')
  })
})
