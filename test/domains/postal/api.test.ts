/**
 * The nine postal endpoints over the real dataset built from the mirror (`datasets/out/postal.sqlite`).
 * Oracles are independent of the importer and the service: the raw GeoNames rows read straight from
 * the mirror's `XX.txt.gz`, a haversine and a winding-number point-in-polygon written here.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import postal from '../../../src/domains/postal/index.ts'
import { testApp, type TestApp } from '../../support/app.ts'
import { MIRROR } from '../../support/mirror.ts'
import { distanceKm } from '../../support/geo.ts'

let app: TestApp
beforeAll(async () => {
  app = await testApp({ domains: [postal] })
})
afterAll(() => app.close())

interface RawRow {
  code: string
  place: string
  admin1: string
  lat: number
  lng: number
}
const rawRows = (cc: string): RawRow[] =>
  gunzipSync(readFileSync(join(MIRROR, 'geonames-postal', `${cc}.txt.gz`)))
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split('\t'))
    .map((c) => ({ code: c[1]!, place: c[2]!, admin1: c[3]!, lat: Number(c[9]), lng: Number(c[10]) }))

/** Winding number (a different algorithm from the service's ray casting). */
function winding(x: number, y: number, ring: number[][]) {
  let wn = 0
  for (let i = 0; i < ring.length - 1; i++) {
    const [x1, y1] = ring[i]!
    const [x2, y2] = ring[i + 1]!
    const cross = (x2! - x1!) * (y - y1!) - (x - x1!) * (y2! - y1!)
    if (y1! <= y) {
      if (y2! > y && cross > 0) wn++
    } else if (y2! <= y && cross < 0) wn--
  }
  return wn !== 0
}

const get = (path: string, form: 'bare' | 'enveloped' = 'bare') => app.json('GET', `/api/v1/postal${path}`, { form })
const post = (path: string, body: unknown, form: 'bare' | 'enveloped' = 'bare') => app.json('POST', `/api/v1/postal${path}`, { form, body })

describe('lookup of well-known codes', () => {
  test.each([
    ['US', '90210', 'Beverly Hills', 'California'],
    ['DE', '10115', 'Berlin', 'Berlin'],
    ['FR', '75001', 'Paris', 'Île-de-France'],
    ['IN', '110001', 'New Delhi', 'Delhi'],
  ])('%s %s is %s', async (cc, code, place, admin) => {
    const b = await get(`/${cc}/${code}`)
    expect(b.status).toBe(200)
    expect(b.body).toMatchObject({ postal_code: code, country_code: cc, admin_name: admin })
    const a = await get(`/${cc}/${code}`, 'enveloped')
    expect(a.body.status).toBe('ok')
    const places = a.body.data.map((r: any) => r.place_name)
    expect(places.some((p: string) => p.startsWith(place))).toBe(true)
    // Form A returns every record the raw file has for the code, in the file's order.
    expect(places).toEqual(
      rawRows(cc)
        .filter((r) => r.code === code)
        .map((r) => r.place),
    )
    expect(Object.keys(a.body.data[0]).sort()).toEqual([
      'accuracy',
      'admin_code1',
      'admin_code2',
      'admin_code3',
      'admin_name1',
      'admin_name2',
      'admin_name3',
      'latitude',
      'longitude',
      'place_name',
      'postal_code',
    ])
  })

  test('alpha-3 and any case work on every path', async () => {
    expect((await get('/usa/90210')).body.place_name).toBe('Beverly Hills')
    expect((await get('/Deu/10115')).body.place_name).toBe('Berlin')
    expect((await get('/fra')).body).toMatchObject({ country_code: 'FR', country_name: 'France' })
    expect((await get('/ind/search?prefix=11000&limit=1')).body.count).toBeGreaterThan(0)
    expect((await get('/deu/codes?limit=1')).body.results.length).toBe(1)
    expect((await get('/usa/validate/90210')).body).toEqual({ country_code: 'US', postal_code: '90210', valid: true })
    expect((await post('/usa/nearby', { lat: 34.09, lng: -118.41, radius_km: 1 })).status).toBe(200)
    expect(
      (
        await post('/fra/within', {
          geometry: {
            type: 'Polygon',
            coordinates: [
              [
                [2.3, 48.8],
                [2.4, 48.8],
                [2.4, 48.9],
                [2.3, 48.8],
              ],
            ],
          },
        })
      ).status,
    ).toBe(200)
  })

  test('codes are normalised: case, spaces and dashes where the format allows', async () => {
    expect((await get('/PT/1000001')).body.postal_code).toBe('1000-001')
    expect((await get('/PT/1000%20001')).body.postal_code).toBe('1000-001')
    // The mirror's GB file holds outward codes only; a full code resolves to its district.
    expect((await get('/GB/sw1a%201aa')).body.postal_code).toBe('SW1A')
    expect((await get('/GB/sw1a1aa')).body.postal_code).toBe('SW1A')
    expect((await get('/LV/5101')).body.postal_code).toBe('LV-5101')
    // A dash where the format has none is not dropped.
    expect((await get('/DE/101-15')).status).toBe(404)
  })

  test('unknown country and unknown code are different 404s', async () => {
    const country = await get('/XX/10115')
    expect(country.status).toBe(404)
    expect(country.body.detail).toMatch(/not supported/)
    expect(country.body.reason).toBe('country_not_supported')
    const code = await get('/US/00000')
    expect(code.status).toBe(404)
    expect(code.body.detail).not.toMatch(/not supported/)
    expect(code.body.reason).toBe('postal_code_not_found')
    // A real country without data in this dataset (Japan is missing from the mirror), and one without a postal system.
    expect((await get('/JP/100-0001')).body.reason).toBe('country_not_supported')
    expect((await get('/AF/1001')).body.detail).toMatch(/no postal code system/)
    for (const path of ['/ZZZ', '/XX/codes', '/XX/search?q=a']) expect((await get(path)).status).toBe(404)
    expect((await post('/QQQ/nearby', { lat: 0, lng: 0, radius_km: 1 })).status).toBe(404)
  })

  test('fields trims the record', async () => {
    expect((await app.json('GET', '/api/v1/postal/US/90210?fields=postal_code,place_name', { form: 'bare' })).body).toEqual({
      postal_code: '90210',
      place_name: 'Beverly Hills',
    })
  })
})

describe('postal systems', () => {
  test('list with has_system and paging', async () => {
    const all = await get('/?limit=1000')
    const withSystem = await get('/?has_system=true&limit=1000')
    const without = await get('/?has_system=false&limit=1000')
    expect(withSystem.body.count + without.body.count).toBe(all.body.count)
    expect(without.body.results.every((s: any) => s.format === null)).toBe(true)
    expect(withSystem.body.results.every((s: any) => typeof s.format === 'string' && typeof s.regex === 'string')).toBe(true)
    const page2 = await get('/?limit=10&offset=10')
    expect(page2.body.results.map((s: any) => s.country_code)).toEqual(all.body.results.slice(10, 20).map((s: any) => s.country_code))
    const a = await get('/?limit=2', 'enveloped')
    expect(a.body.total).toBe(all.body.count)
    expect(Object.keys(a.body.data[0]).sort()).toEqual(['country', 'country_code', 'format', 'regex', 'total_codes', 'total_records'])
  })

  test('format_like matches an alternative, with * as a wildcard', async () => {
    const five = await get('/?format_like=%23%23%23%23%23&limit=1000')
    expect(five.body.results.map((s: any) => s.country_code)).toContain('DE')
    expect(five.body.results.every((s: any) => s.format.split(' / ').includes('#####'))).toBe(true)
    const gbLike = await get('/?format_like=AA%23%23%20%23AA&limit=1000')
    expect(gbLike.body.results.map((s: any) => s.country_code)).toContain('GB')
    const prefixed = await get('/?format_like=LV-*&limit=1000')
    expect(prefixed.body.results.map((s: any) => s.country_code)).toEqual(['LV'])
  })

  test('format_like with many stars is matched in linear time (30 stars and a Z took 11 s as a RegExp)', async () => {
    const all = (await get('/?has_system=true&limit=1000')).body.results as { country_code: string; format: string }[]
    const stars = await get(`/?format_like=${'*'.repeat(30)}Z&limit=1000`)
    expect(stars.status).toBe(200)
    // Any run before a final Z: exactly the systems with an alternative ending in a literal Z (FIQQ 1ZZ, ...).
    const endingInZ = all.filter((s) => s.format.split(' / ').some((f) => f.endsWith('Z'))).map((s) => s.country_code)
    expect(endingInZ.length).toBeGreaterThan(0)
    expect(stars.body.results.map((s: any) => s.country_code)).toEqual(endingInZ)
    const any = await get(`/?format_like=${'*'.repeat(30)}&limit=1000`)
    expect(any.body.count).toBe(all.length)
  })

  test('single system: total_codes counted from the raw data', async () => {
    for (const cc of ['DE', 'LI', 'PT']) {
      const b = await get(`/${cc}`)
      expect(b.body.total_codes).toBe(new Set(rawRows(cc).map((r) => r.code)).size)
    }
    expect((await get('/CA')).body.format).toBe('A#A #A#')
  })

  test('codes: distinct, in code order, paged without gaps or repeats', async () => {
    const expected = [...new Set(rawRows('LU').map((r) => r.code))].sort()
    const seen: string[] = []
    for (let offset = 0; offset < expected.length; offset += 1000) {
      const b = await get(`/LU/codes?limit=1000&offset=${offset}`)
      expect(b.body.count).toBe(expected.length)
      seen.push(...b.body.results.map((r: any) => r.postal_code))
    }
    expect(seen).toEqual(expected)
    const one = (await get('/LU/codes?limit=1')).body.results[0]
    expect(Object.keys(one).sort()).toEqual(['admin_name', 'place_name', 'postal_code'])
  })
})

describe('search', () => {
  test('place name: prefix, case- and accent-insensitive', async () => {
    const b = await get('/DE/search?q=MUNCHEN&limit=1000')
    const expected = rawRows('DE').filter((r) => r.place.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase().startsWith('munchen'))
    expect(b.body.count).toBe(expected.length)
    expect(b.body.results.every((r: any) => r.place_name.startsWith('München'))).toBe(true)
    expect((await get('/FR/search?q=%C3%AEle&limit=1')).body.count).toBe((await get('/FR/search?q=ile&limit=1')).body.count)
  })

  test('postal code prefix and admin_code, combined', async () => {
    const raw = rawRows('US')
    const prefix = await get('/US/search?prefix=902&limit=1000')
    expect(prefix.body.count).toBe(raw.filter((r) => r.code.startsWith('902')).length)
    const codes = prefix.body.results.map((r: any) => r.postal_code)
    expect(codes).toEqual([...codes].sort())
    const both = await get('/US/search?prefix=9&admin_code=ca&limit=1')
    expect(both.body.count).toBe(raw.filter((r) => r.code.startsWith('9') && r.admin1 === 'California').length)
  })

  test('no filter is a 422 naming the members', async () => {
    const b = await get('/DE/search?limit=5')
    expect(b.status).toBe(422)
    expect(b.body.detail).toMatch(/q.*prefix.*admin_code/)
  })
})

describe('nearby', () => {
  const berlin = { lat: 52.52, lng: 13.405 }

  test('every record within the radius, nearest first, matching an independent haversine', async () => {
    const radius = 10
    const b = await post('/DE/nearby', { ...berlin, radius_km: radius, limit: 1000 }, 'enveloped')
    expect(b.status).toBe(200)
    const expected = rawRows('DE').filter((r) => distanceKm(berlin, r) <= radius)
    expect(b.body.total_count).toBe(expected.length)
    expect(b.body.limit).toBe(1000)
    expect(b.body.offset).toBe(0)
    const got: any[] = b.body.data
    expect(got.length).toBe(expected.length)
    for (let i = 0; i < got.length; i++) {
      expect(Math.abs(got[i].distance_km - distanceKm(berlin, { lat: got[i].latitude, lng: got[i].longitude }))).toBeLessThan(0.001)
      if (i) expect(got[i].distance_km).toBeGreaterThanOrEqual(got[i - 1].distance_km)
    }
    const sortedOracle = expected.map((r) => distanceKm(berlin, r)).sort((a, b) => a - b)
    expect(got.map((r) => r.distance_km)).toEqual(sortedOracle.map((d) => Math.round(d * 1000) / 1000))
  })

  test('limit, offset and the default of 50', async () => {
    const all = await post('/DE/nearby', { ...berlin, radius_km: 25, limit: 1000 })
    const def = await post('/DE/nearby', { ...berlin, radius_km: 25 })
    expect(def.body.results.length).toBe(Math.min(50, all.body.count))
    const page = await post('/DE/nearby', { ...berlin, radius_km: 25, limit: 5, offset: 5 })
    expect(page.body.results.map((r: any) => r.distance_km)).toEqual(all.body.results.slice(5, 10).map((r: any) => r.distance_km))
  })

  for (const form of ['bare', 'enveloped'] as const)
    test(`${form}: limit and offset in the query string are honoured; in both places a 422 naming each`, async () => {
      const rows = (r: any) => (form === 'bare' ? r.body.results : r.body.data)
      const all = await post('/DE/nearby', { ...berlin, radius_km: 25, limit: 1000 }, form)
      const viaQuery = await post('/DE/nearby?limit=5&offset=5', { ...berlin, radius_km: 25 }, form)
      expect(viaQuery.status).toBe(200)
      expect(rows(viaQuery).map((r: any) => r.postal_code)).toEqual(
        rows(all)
          .slice(5, 10)
          .map((r: any) => r.postal_code),
      )
      if (form === 'enveloped') expect(viaQuery.body).toMatchObject({ limit: 5, offset: 5, total_count: all.body.total_count })
      // One member in each place is fine.
      const mixed = await post('/DE/nearby?offset=5', { ...berlin, radius_km: 25, limit: 5 }, form)
      expect(rows(mixed)).toEqual(rows(viaQuery))
      const both = await post('/DE/nearby?limit=5&offset=1', { ...berlin, radius_km: 25, limit: 5, offset: 1 }, form)
      expect(both.status).toBe(422)
      const problem = form === 'bare' ? both.body : both.body.error
      expect(problem.errors.map((e: any) => [e.in, e.field])).toEqual([
        ['query', 'limit'],
        ['query', 'offset'],
      ])
      expect(problem.detail).toContain('limit: given both in the query string (5) and in the body (5)')
      for (const bad of ['limit=0', 'limit=1001', 'limit=abc', 'offset=-1']) {
        const r = await post(`/DE/nearby?${bad}`, { ...berlin, radius_km: 25 }, form)
        expect(r.status).toBe(422)
        expect((form === 'bare' ? r.body : r.body.error).errors[0].field).toBe(bad.split('=')[0])
      }
    })

  test('radius, coordinates and limit out of range are 422s naming the member', async () => {
    for (const [body, field] of [
      [{ ...berlin, radius_km: 0 }, 'radius_km'],
      [{ ...berlin, radius_km: 501 }, 'radius_km'],
      [{ lat: 91, lng: 0, radius_km: 1 }, 'lat'],
      [{ lat: 0, lng: 181, radius_km: 1 }, 'lng'],
      [{ ...berlin, radius_km: 1, limit: 1001 }, 'limit'],
      [{ lng: 0, radius_km: 1 }, 'lat'],
    ] as const) {
      const r = await post('/DE/nearby', body)
      expect(r.status).toBe(422)
      expect(r.body.errors.map((e: any) => e.field)).toContain(field)
    }
  })

  test('across the antimeridian (Fiji has no data here; New Zealand codes near 180° are found by a query at -179.9°)', async () => {
    // NZ has no codes east of 180°; a circle centred just across the line must still reach Chatham-side and main-island points only
    // when in range.
    const raw = rawRows('NZ')
    const centre = { lat: -43.95, lng: -176.55 } // Chatham Islands
    const expected = raw.filter((r) => distanceKm(centre, r) <= 100).length
    const b = await post('/NZ/nearby', { ...centre, radius_km: 100, limit: 1000 })
    expect(b.body.count).toBe(expected)
    const wrap = { lat: -41, lng: -179.9 }
    const near = raw.filter((r) => distanceKm(wrap, r) <= 500).length
    expect((await post('/NZ/nearby', { ...wrap, radius_km: 500, limit: 1000 })).body.count).toBe(near)
    expect(near).toBeGreaterThan(0)
  })
})

describe('within', () => {
  // Central Paris with a hole over the 1st arrondissement area.
  const outer = [
    [2.28, 48.82],
    [2.42, 48.82],
    [2.42, 48.9],
    [2.28, 48.9],
    [2.28, 48.82],
  ]
  const hole = [
    [2.33, 48.855],
    [2.35, 48.855],
    [2.35, 48.867],
    [2.33, 48.867],
    [2.33, 48.855],
  ]

  test('polygon with a hole: exactly the raw points inside the outer ring and outside the hole', async () => {
    const raw = rawRows('FR')
    const expected = raw.filter((r) => winding(r.lng, r.lat, outer) && !winding(r.lng, r.lat, hole))
    const b = await post('/FR/within', { geometry: { type: 'Polygon', coordinates: [outer, hole] }, limit: 1000 }, 'enveloped')
    expect(b.status).toBe(200)
    expect(b.body.total_count).toBe(expected.length)
    expect(b.body.data.map((r: any) => r.postal_code).sort()).toEqual(expected.map((r) => r.code).sort())
    const inHole = raw.filter((r) => winding(r.lng, r.lat, hole)).length
    expect(inHole).toBeGreaterThan(0)
    const solid = await post('/FR/within', { geometry: { type: 'Polygon', coordinates: [outer] }, limit: 1 }, 'enveloped')
    expect(solid.body.total_count).toBe(raw.filter((r) => winding(r.lng, r.lat, outer)).length)
  })

  for (const form of ['bare', 'enveloped'] as const)
    test(`${form}: limit and offset in the query string are honoured; in both places a 422`, async () => {
      const rows = (r: any) => (form === 'bare' ? r.body.results : r.body.data)
      const geometry = { type: 'Polygon', coordinates: [outer] }
      const all = await post('/FR/within', { geometry, limit: 1000 }, form)
      const viaQuery = await post('/FR/within?limit=3&offset=2', { geometry }, form)
      expect(viaQuery.status).toBe(200)
      expect(rows(viaQuery)).toEqual(rows(all).slice(2, 5))
      if (form === 'enveloped') expect(viaQuery.body).toMatchObject({ limit: 3, offset: 2, total_count: all.body.total_count })
      const both = await post('/FR/within?limit=3', { geometry, limit: 4 }, form)
      expect(both.status).toBe(422)
      expect((form === 'bare' ? both.body : both.body.error).errors).toEqual([
        { in: 'query', field: 'limit', message: 'given both in the query string (3) and in the body (4); send it in one place' },
      ])
    })

  test('MultiPolygon: the union of its parts', async () => {
    const lyon = [
      [4.8, 45.72],
      [4.9, 45.72],
      [4.9, 45.8],
      [4.8, 45.8],
      [4.8, 45.72],
    ]
    const raw = rawRows('FR')
    const expected = raw.filter((r) => (winding(r.lng, r.lat, outer) && !winding(r.lng, r.lat, hole)) || winding(r.lng, r.lat, lyon)).length
    const b = await post('/FR/within', { geometry: { type: 'MultiPolygon', coordinates: [[outer, hole], [lyon]] }, limit: 1 })
    expect(b.body.count).toBe(expected)
  })

  test('invalid geometries are 422s naming the problem', async () => {
    const cases: [unknown, RegExp, string][] = [
      [
        {
          type: 'Polygon',
          coordinates: [
            [
              [2.3, 48.8],
              [2.4, 48.8],
              [2.4, 48.9],
              [2.3, 48.9],
            ],
          ],
        },
        /not closed/,
        'geometry.coordinates.0',
      ],
      [
        {
          type: 'Polygon',
          coordinates: [
            [
              [2.3, 48.8],
              [2.4, 48.8],
              [2.3, 48.8],
            ],
          ],
        },
        /at least 4 positions/,
        'geometry.coordinates.0',
      ],
      [
        {
          type: 'Polygon',
          coordinates: [
            [
              [200, 48.8],
              [2.4, 48.8],
              [2.4, 48.9],
              [200, 48.8],
            ],
          ],
        },
        /longitude 200/,
        'geometry.coordinates.0.0',
      ],
      [
        {
          type: 'Polygon',
          coordinates: [
            [
              [2.3, 95],
              [2.4, 48.8],
              [2.4, 48.9],
              [2.3, 95],
            ],
          ],
        },
        /latitude 95/,
        'geometry.coordinates.0.0',
      ],
      [
        {
          type: 'Polygon',
          coordinates: [
            outer,
            [
              [2.33, 48.855],
              [2.35, 48.855],
              [2.33, 48.855],
            ],
          ],
        },
        /hole 1/,
        'geometry.coordinates.1',
      ],
      [{ type: 'Point', coordinates: [2.3, 48.8] }, /Polygon/, 'geometry.type'],
    ]
    for (const [geometry, message, field] of cases) {
      const r = await post('/FR/within', { geometry })
      expect(r.status).toBe(422)
      expect(r.body.detail).toMatch(message)
      expect(r.body.errors.map((e: any) => e.field)).toContain(field)
    }
    const big = Array.from({ length: 10_001 }, (_, i) => [
      2 + Math.cos((i / 10_000) * 2 * Math.PI) * 0.1,
      48 + Math.sin((i / 10_000) * 2 * Math.PI) * 0.1,
    ])
    big[10_000] = big[0]!
    const r = await post('/FR/within', { geometry: { type: 'Polygon', coordinates: [big] } })
    expect(r.status).toBe(422)
    expect(r.body.detail).toMatch(/10,001 positions; at most 10,000/)
  })
})

describe('validate', () => {
  test('single: format only, per country', async () => {
    expect((await get('/GB/validate/SW1A%202AA')).body).toEqual({ country_code: 'GB', postal_code: 'SW1A 2AA', valid: true })
    expect((await get('/JP/validate/1000001')).body).toEqual({ country_code: 'JP', postal_code: '100-0001', valid: true })
    expect((await get('/DE/validate/1011')).body.valid).toBe(false)
    expect((await get('/AF/validate/1001')).body.valid).toBe(false)
  })

  test('single: an unknown country is not an error but valid: false (SPEC Errors), in both forms', async () => {
    for (const cc of ['XX', 'zzz', 'Q1']) {
      const b = await get(`/${cc}/validate/123`)
      expect(b.status).toBe(200)
      expect(b.body).toEqual({ country_code: cc.toUpperCase(), postal_code: '123', valid: false })
      const a = await get(`/${cc}/validate/123`, 'enveloped')
      expect(a.status).toBe(200)
      expect(a.body).toEqual({ status: 'ok', data: { country_code: cc.toUpperCase(), postal_code: '123', valid: false }, error: null })
    }
  })

  test('AE: format and regex agree (a space), a dash written in its place is normalised, in both forms', async () => {
    const system = await get('/AE')
    expect(system.body).toMatchObject({ country_code: 'AE', format: '##### #####', regex: '^(?:\\d{5} \\d{5})$' })
    expect(new RegExp(system.body.regex).test('12345 67890')).toBe(true)
    for (const written of ['12345 67890', '12345-67890', '1234567890']) {
      expect((await get(`/AE/validate/${written}`)).body).toEqual({ country_code: 'AE', postal_code: '12345 67890', valid: true })
      expect((await get(`/ARE/validate/${written}`, 'enveloped')).body.data).toEqual({
        country_code: 'AE',
        postal_code: '12345 67890',
        valid: true,
      })
    }
    expect((await get('/AE/validate/12345')).body.valid).toBe(false)
  })

  test('corrected formats: the real codes of GeoNames rows for AI, HN, MH and EC validate (they did not)', async () => {
    for (const cc of ['AI', 'HN', 'MH', 'EC']) {
      const code = rawRows(cc)[0]!.code
      expect((await get(`/${cc}/${code}`)).status).toBe(200)
      expect((await get(`/${cc}/validate/${code}`)).body).toEqual({ country_code: cc, postal_code: code, valid: true })
      const batch = await post('/validate', { codes: [{ country_code: cc, postal_code: code }] }, 'enveloped')
      expect(batch.body.data).toEqual([{ postal_code: code, country_code: cc, format_valid: true, exists: true }])
    }
    expect((await get('/EC')).body.format).toBe('######')
  })

  test('batch: format_valid and exists, mixing countries; unknown country is false/false', async () => {
    const codes = [
      { country_code: 'us', postal_code: '90210' },
      { country_code: 'DEU', postal_code: '99999' },
      { country_code: 'XX', postal_code: '12345' },
      { country_code: 'FR', postal_code: '7500' },
      { country_code: 'JP', postal_code: '100-0001' },
    ]
    const a = await post('/validate', { codes }, 'enveloped')
    expect(a.status).toBe(200)
    expect(a.body.data).toEqual([
      { postal_code: '90210', country_code: 'US', format_valid: true, exists: true },
      { postal_code: '99999', country_code: 'DE', format_valid: true, exists: false },
      { postal_code: '12345', country_code: 'XX', format_valid: false, exists: false },
      { postal_code: '7500', country_code: 'FR', format_valid: false, exists: false },
      { postal_code: '100-0001', country_code: 'JP', format_valid: true, exists: false },
    ])
    const b = await post('/validate', { codes: codes.slice(0, 1) })
    expect(b.body).toEqual({ results: [{ country_code: 'US', postal_code: '90210', valid: true, format_valid: true, exists: true }] })
  })

  test('batch exists agrees with lookup for codes straight from the mirror, loosely written and as full codes', async () => {
    // Raw rows from the mirror (shared codes such as IN 110001 have many places), rewritten the ways
    // callers write them, plus GB full codes whose district is all the data holds.
    const asked: { country_code: string; postal_code: string }[] = []
    for (const cc of ['IN', 'GB', 'NL', 'US', 'PT', 'CA']) {
      const rows = rawRows(cc)
      for (let i = 0; i < rows.length; i += Math.ceil(rows.length / 12)) {
        const code = rows[i]!.code
        asked.push(
          { country_code: cc, postal_code: code },
          { country_code: cc.toLowerCase(), postal_code: code.toLowerCase().replace(/[ -]/g, '') },
        )
      }
    }
    asked.push(
      { country_code: 'GB', postal_code: 'SW1A 1AA' },
      { country_code: 'GB', postal_code: 'ZZ9 9ZZ' },
      { country_code: 'IN', postal_code: '110001' },
    )
    for (let start = 0; start < asked.length; start += 100) {
      const batch = asked.slice(start, start + 100)
      const { body } = await post('/validate', { codes: batch })
      for (const [i, item] of batch.entries()) {
        const lookup = await get(`/${item.country_code}/${encodeURIComponent(item.postal_code)}`)
        expect({ item, exists: body.results[i].exists }).toEqual({ item, exists: lookup.status === 200 })
      }
    }
  })

  test('batch limits: 1 to 100 items; each item costs one credit', async () => {
    const over = await post('/validate', { codes: Array.from({ length: 101 }, () => ({ country_code: 'US', postal_code: '90210' })) })
    expect(over.status).toBe(422)
    expect((await post('/validate', { codes: [] })).status).toBe(422)
    const before = Number((await app.request('GET', '/api/v1/postal/US')).headers.get('x-quota-remaining'))
    const res = await app.request('POST', '/api/v1/postal/validate', {
      body: { codes: Array.from({ length: 10 }, () => ({ country_code: 'US', postal_code: '90210' })) },
    })
    expect(Number(res.headers.get('x-quota-remaining'))).toBe(before - 10)
  })
})
