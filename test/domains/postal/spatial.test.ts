/**
 * Exactness of the radius count and page where the fast paths decide: circles whose edge passes within
 * 0.1 mm of real points (so a point counted from a cell that is wrongly taken as inside, or an edge
 * point dropped or counted twice, changes `total_count`), centres on grid-cell corners (GeoNames
 * coordinates are often whole hundredths of a degree, exactly the cell lines), circles across the
 * antimeridian, and a country whose ids are not contiguous (the tree's country key finds it all the same). The oracle is
 * the raw mirror rows and a haversine written here.
 */
import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import { openDataDir } from '../../../src/data/open.ts'
import { openReadonlySqlite } from '../../../src/data/sqlite.ts'
import { buildPostalDatabase } from '../../../src/domains/postal/build.ts'
import postal from '../../../src/domains/postal/index.ts'
import { DEFAULT_WORK_BUDGET, type PostalService, openPostalService } from '../../../src/domains/postal/service.ts'
import { testApp, type TestApp } from '../../support/app.ts'
import { MIRROR } from '../../support/mirror.ts'
import { distanceKm } from '../../support/geo.ts'

let app: TestApp
beforeAll(async () => {
  app = await testApp({ domains: [postal] })
})
afterAll(() => app.close())

interface Point {
  code: string
  lat: number
  lng: number
}
const rawLines = (cc: string) =>
  gunzipSync(readFileSync(join(MIRROR, 'geonames-postal', `${cc}.txt.gz`)))
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
const rawPoints = (cc: string): Point[] =>
  rawLines(cc)
    .map((l) => l.split('\t'))
    .filter((c) => c[9] !== '' && c[10] !== '')
    .map((c) => ({ code: c[1]!, lat: Number(c[9]), lng: Number(c[10]) }))

/**
 * Radii that put the circle's edge 0.1 mm beyond and 0.1 mm short of the m-th nearest raw point, for
 * several m: the count must move by exactly the points at that distance.
 */
function edgeRadii(centre: { lat: number; lng: number }, points: Point[], picks: number[]): number[] {
  const sorted = points.map((p) => distanceKm(centre, p)).sort((a, b) => a - b)
  const radii: number[] = []
  for (const m of picks) {
    const d = sorted[Math.min(m, sorted.length - 1)]!
    if (d <= 0 || d > 500) continue
    radii.push(d + 1e-7)
    if (d - 1e-7 > 0) radii.push(d - 1e-7)
  }
  return radii
}

/**
 * The service as configured, and forced onto the cell path (`sparseBelow: 0`: the mirror's data is
 * sparse enough that the default measures every point) with two groupings of edge runs.
 */
let services: [string, PostalService][] = []
beforeAll(() => {
  const db = openReadonlySqlite(openDataDir().path('postal.sqlite'))
  // Exactness, not the budget, is tested here: a large circle's deep pages may read more than one request's budget.
  const budget = 100 * DEFAULT_WORK_BUDGET
  services = [
    ['default', openPostalService(db, {}, budget)],
    ['cells', openPostalService(db, { sparseBelow: 0 }, budget)],
    ['cells, 5-row edge boxes', openPostalService(db, { sparseBelow: 0, edgeRows: 5 }, budget)],
  ]
})

function expectExact(cc: string, points: Point[], centre: { lat: number; lng: number }, radius: number, page = { limit: 100, offset: 0 }) {
  const expected = points
    .filter((p) => distanceKm(centre, p) <= radius)
    .map((p) => distanceKm(centre, p))
    .sort((a, b) => a - b)
  for (const [path, service] of services) {
    const r = service.nearby(cc, { ...centre, radius_km: radius }, page)
    expect({ path, centre, radius, total: r.total }).toEqual({ path, centre, radius, total: expected.length })
    // The page: distances in order, as the oracle's (rounded to metres as the API does).
    expect(r.items.map((x) => x.distance_km)).toEqual(
      expected.slice(page.offset, page.offset + page.limit).map((d) => Math.round(d * 1000) / 1000),
    )
  }
}

describe('nearby total_count where the edge passes through real points', () => {
  test('Germany around Berlin and Munich, centres on and off the 0.01° grid lines', async () => {
    const points = rawPoints('DE')
    // Whole hundredths (cell corners), and a raw point itself (distance 0 to one code).
    const centres = [
      { lat: 52.52, lng: 13.4 },
      { lat: 48.13, lng: 11.57 },
      { lat: 52.51234, lng: 13.38765 },
      points.find((p) => p.code === '10115')!,
    ]
    let checked = 0
    for (const centre of centres) {
      for (const radius of edgeRadii(centre, points, [0, 1, 7, 60, 250, 900])) {
        expectExact('DE', points, centre, radius)
        checked++
      }
    }
    expect(checked).toBeGreaterThan(30)
  })

  test('offsets and the far end of a large circle match the oracle, in the service and over HTTP', async () => {
    const points = rawPoints('DE')
    const centre = { lat: 51.1, lng: 10.4 }
    const expected = points
      .map((p) => distanceKm(centre, p))
      .filter((d) => d <= 300)
      .sort((a, b) => a - b)
    expect(expected.length).toBeGreaterThan(3000)
    for (const offset of [0, 1000, expected.length - 10]) expectExact('DE', points, centre, 300, { limit: 20, offset })
    const r = await app.json('POST', '/api/v1/postal/DE/nearby', {
      form: 'enveloped',
      body: { ...centre, radius_km: 300, limit: 20, offset: 1000 },
    })
    expect(r.body.total_count).toBe(expected.length)
    expect(r.body.data.map((x: any) => x.distance_km)).toEqual(expected.slice(1000, 1020).map((d) => Math.round(d * 1000) / 1000))
  })

  test('across the antimeridian: Chukotka codes on both sides of 180°', async () => {
    const points = rawPoints('RU')
    const east = points.filter((p) => p.lng < -170).length
    const west = points.filter((p) => p.lng > 175).length
    expect(east).toBeGreaterThan(0)
    expect(west).toBeGreaterThan(0)
    for (const centre of [
      { lat: 65.5, lng: 180 },
      { lat: 65.5, lng: -180 },
      { lat: 66, lng: 179.5 },
      { lat: 64.8, lng: -179.99 },
    ]) {
      for (const radius of [...edgeRadii(centre, points, [0, 3, 10, 25]), 150, 500]) expectExact('RU', points, centre, radius)
    }
  })
})

describe('a country beside denser ones: its own points alone are read', () => {
  // Small countries inside or beside dense ones, and a border of Belarus with Poland: the circle's box holds
  // up to ~127,000 other points (a box over Gibraltar: Spain and Morocco).
  const CASES = [
    { cc: 'GI', centre: { lat: 36.14, lng: -5.35 } },
    { cc: 'LI', centre: { lat: 47.15, lng: 9.55 } },
    { cc: 'AD', centre: { lat: 42.5, lng: 1.5 } },
    { cc: 'SM', centre: { lat: 43.94, lng: 12.45 } },
    { cc: 'BY', centre: { lat: 51.5543, lng: 23.6068 } },
  ]
  const KM_PER_DEG = 111.2

  test('nearby 500 km, and within a box of that size: the oracle answers, for work near the country points in the box', () => {
    const [, service] = services[0]!
    for (const { cc, centre } of CASES) {
      const points = rawPoints(cc)
      const dLat = 500 / KM_PER_DEG
      const dLng = 500 / (KM_PER_DEG * Math.cos(((Math.abs(centre.lat) + dLat) * Math.PI) / 180))
      const box = { south: centre.lat - dLat, north: centre.lat + dLat, west: centre.lng - dLng, east: centre.lng + dLng }
      const inBox = points.filter((p) => p.lat >= box.south && p.lat <= box.north && p.lng >= box.west && p.lng <= box.east)
      expect({ cc, some: inBox.length > 0 }).toEqual({ cc, some: true })

      const near = service.nearby(cc, { ...centre, radius_km: 500 }, { limit: 1000, offset: 0 })
      expect({ cc, total: near.total }).toEqual({ cc, total: points.filter((p) => distanceKm(centre, p) <= 500).length })
      // Each candidate is read for the count, for the page and perhaps for its exact place: a few units
      // each. Another country's points read would be work too (they come before the scope's test).
      expect({ cc, work: service.lastWork <= 3 * inBox.length + 64 }).toEqual({ cc, work: true })

      const ring = [
        [box.west, box.south],
        [box.east, box.south],
        [box.east, box.north],
        [box.west, box.north],
        [box.west, box.south],
      ]
      const within = service.within(cc, { type: 'Polygon', coordinates: [ring] }, { limit: 1000, offset: 0 })
      expect({ cc, total: within.total }).toEqual({ cc, total: inBox.length })
      expect({ cc, work: service.lastWork <= 3 * inBox.length + 64 }).toEqual({ cc, work: true })
    }
  })
})

describe('the work of a radius count is every point it reads', () => {
  test('dense circles: the units spent are at least the rows the edge statement returned (one each)', () => {
    // SQLite once evaluated `work_unit()` once per searched box in the edge statement's join, not per point.
    let read = 0
    const db = openReadonlySqlite(openDataDir().path('postal.sqlite'))
    const query = db.query.bind(db)
    db.query = ((sql: string) => {
      const statement = query(sql)
      if (!sql.includes('CROSS JOIN places_rtree')) return statement
      const values = statement.values.bind(statement)
      statement.values = (...args: any[]) => {
        const rows = values(...args)
        read += rows.length
        return rows
      }
      return statement
    }) as typeof db.query
    const service = openPostalService(db, { sparseBelow: 0 }, 100 * DEFAULT_WORK_BUDGET) // the cell path
    for (const [cc, lat, lng, radius_km] of [
      ['PT', 38.72, -9.14, 25],
      ['PT', 41.15, -8.61, 10],
      ['SG', 1.35, 103.82, 5],
    ] as const) {
      read = 0
      service.nearby(cc, { lat, lng, radius_km }, { limit: 10, offset: 0 })
      expect({ cc, radius_km, some: read > 100 }).toEqual({ cc, radius_km, some: true })
      expect({ cc, radius_km, counted: service.lastWork >= read }).toEqual({ cc, radius_km, counted: true })
    }
    db.close()
  })
})

describe('a country whose ids are not contiguous', () => {
  const dir = mkdtempSync(join(tmpdir(), 'postal-spatial-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  test('allCountries with countries interleaved: nearby and within still select exactly one country', async () => {
    // LI and AT rows interleaved: neither country's ids form one range.
    const li = rawLines('LI')
    const at = rawLines('AT')
    const lines: string[] = []
    for (let i = 0; i < Math.max(li.length, at.length); i++) {
      if (i < at.length) lines.push(at[i]!)
      if (i < li.length) lines.push(li[i]!)
    }
    writeFileSync(join(dir, 'allCountries.txt'), lines.join('\n') + '\n')
    const out = join(dir, 'postal.sqlite')
    await buildPostalDatabase({
      postal: join(dir, 'allCountries.txt'),
      countryInfo: join(MIRROR, 'geonames-countryinfo/countryInfo.txt'),
      out,
    })
    const db = new Database(out, { readonly: true })
    try {
      const service = openPostalService(db, { sparseBelow: 0 })
      // Neither country's ids form one range: the tree's country key selects each all the same.
      const range = db.query<{ lo: number; hi: number; n: number }, [string]>(
        'SELECT MIN(id) AS lo, MAX(id) AS hi, COUNT(*) AS n FROM places WHERE country = ?',
      )
      for (const cc of ['AT', 'LI']) {
        const { lo, hi, n } = range.get(cc)!
        expect({ cc, interleaved: hi - lo + 1 > n }).toEqual({ cc, interleaved: true })
      }
      const centre = { lat: 47.16, lng: 9.52 } // Vaduz, with Austria a few km away
      for (const [cc, points] of [
        ['LI', rawPoints('LI')],
        ['AT', rawPoints('AT')],
      ] as const) {
        for (const radius of [5, 20, 80, ...edgeRadii(centre, points, [0, 5, 40])]) {
          const expected = points
            .map((p) => distanceKm(centre, p))
            .filter((d) => d <= radius)
            .sort((a, b) => a - b)
          const got = service.nearby(cc, { ...centre, radius_km: radius }, { limit: 30, offset: 0 })
          expect({ cc, radius, total: got.total }).toEqual({ cc, radius, total: expected.length })
          expect(got.items.map((r) => r.distance_km)).toEqual(expected.slice(0, 30).map((d) => Math.round(d * 1000) / 1000))
          expect(got.items.every((r) => r.country_code === cc)).toBe(true)
        }
        const ring = [
          [9.4, 47.0],
          [9.8, 47.0],
          [9.8, 47.3],
          [9.4, 47.3],
          [9.4, 47.0],
        ]
        const inside = points.filter((p) => p.lng > 9.4 && p.lng < 9.8 && p.lat > 47.0 && p.lat < 47.3)
        const within = service.within(cc, { type: 'Polygon', coordinates: [ring] }, { limit: 1000, offset: 0 })
        expect(within.total).toBe(inside.length)
        expect(within.items.map((r) => r.postal_code).sort()).toEqual(inside.map((p) => p.code).sort())
      }
    } finally {
      db.close()
    }
  })
})
