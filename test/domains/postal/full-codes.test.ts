/**
 * GeoNames' full unit postcodes (`GB_full.csv.zip`, `CA_full.csv.zip`, `NL_full.csv.zip`) are optional
 * sources the build downloads by default. A loopback server plays download.geonames.org: a synthetic
 * allCountries.zip (GB outward codes, as GeoNames ships them there), the mirror's countryInfo.txt, and
 * a synthetic GB_full.csv.zip in GeoNames' layout (`GB_full.txt`, 12 tab-separated columns, and a
 * readme). With the file, `SW1A 1AA` answers with its own row and GB's outward rows are gone; without
 * it the build says which source is missing (log, manifest, /readyz, /api/v1/meta/datasets) and serves
 * the outward codes. The ZIPs are written by Python's zipfile, an implementation independent of ours.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildDatasets } from '../../../src/data/build.ts'
import postal from '../../../src/domains/postal/index.ts'
import { FULL_CODE_COUNTRIES, fullCodeSource } from '../../../src/domains/postal/sources.ts'
import { testApp } from '../../support/app.ts'
import { MIRROR } from '../../support/mirror.ts'
import { tempDirs } from '../../support/temp.ts'

const tempDir = tempDirs('almanac-postal-full-')
const row = (...c: (string | number)[]) => c.join('\t')

// allCountries.zip carries the outward code only; GB_full.txt the unit postcodes, admin3 filled in.
const GB_OUTWARD = [
  row('GB', 'SW1A', 'Westminster', 'England', 'ENG', 'Greater London', '11609024', '', '', 51.5018, -0.1328, 4),
  row('GB', 'EC1A', 'London', 'England', 'ENG', 'Greater London', '11609024', '', '', 51.5203, -0.0976, 4),
]
const GB_FULL = [
  row('GB', 'SW1A 1AA', 'London', 'England', 'ENG', 'Greater London', '11609024', 'Westminster', 'E09000033', 51.501, -0.1416, 6),
  row('GB', 'SW1A 2AA', 'London', 'England', 'ENG', 'Greater London', '11609024', 'Westminster', 'E09000033', 51.5034, -0.1276, 6),
  row('GB', 'EC1A 1BB', 'London', 'England', 'ENG', 'Greater London', '11609024', 'City of London', 'E09000001', 51.5201, -0.0977, 6),
]
const DE = [row('DE', '10115', 'Berlin', 'Berlin', 'BE', '', '00', 'Berlin, Stadt', '11000', 52.5323, 13.3846, 6)]

function pythonZip(path: string, entries: Record<string, string>) {
  const script = `
import json, sys, zipfile
with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:
    for name, text in json.loads(sys.argv[2]).items():
        z.writestr(name, text.encode('utf-8'))
`
  const r = Bun.spawnSync(['python3', '-c', script, path, JSON.stringify(entries)])
  if (r.exitCode !== 0) throw new Error(`python3 zipfile failed: ${r.stderr.toString()}`)
  return readFileSync(path)
}

const files = new Map<string, Uint8Array>()
const served: string[] = []
let server: ReturnType<typeof Bun.serve>
let base = ''

beforeAll(() => {
  const dir = tempDir()
  files.set(
    '/download.geonames.org/export/zip/allCountries.zip',
    pythonZip(join(dir, 'allCountries.zip'), { 'allCountries.txt': [...DE, ...GB_OUTWARD].join('\n') + '\n', 'readme.txt': 'GeoNames' }),
  )
  files.set('/download.geonames.org/export/dump/countryInfo.txt', readFileSync(join(MIRROR, 'geonames-countryinfo/countryInfo.txt')))
  server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(req) {
      const path = new URL(req.url).pathname
      served.push(path)
      const body = files.get(path)
      return body ? new Response(body) : new Response('not here', { status: 404 })
    },
  })
  base = `http://127.0.0.1:${server.port}`
})
afterAll(() => server?.stop(true))

async function buildAndServe() {
  const out = tempDir()
  const lines: string[] = []
  const manifest = await buildDatasets([postal], {
    outDir: out,
    mirror: tempDir(),
    offline: false,
    upstreamBase: base,
    log: (l) => lines.push(l),
  })
  const app = await testApp({ env: { ALMANAC_DATA_DIR: out }, domains: [postal] })
  return { entry: manifest.datasets.postal!, lines, app }
}

describe('GeoNames full unit postcodes', () => {
  test('the three _full files are optional sources of the postal build, each at its GeoNames URL', () => {
    const builder = postal.builders![0]!
    for (const country of FULL_CODE_COUNTRIES) {
      const id = fullCodeSource(country)
      expect(builder.sources).toContain(id)
      expect(builder.optional).toContain(id)
      expect(postal.sources!.find((s) => s.id === id)!.url).toBe(`https://download.geonames.org/export/zip/${country}_full.csv.zip`)
    }
  })

  test('without them the build reports each missing and serves outward codes', async () => {
    const { entry, lines, app } = await buildAndServe()
    try {
      expect(served).toContain('/download.geonames.org/export/zip/GB_full.csv.zip')
      expect(entry.unavailable!.map((u) => u.id).sort()).toEqual([
        'geonames-postal-ca-full',
        'geonames-postal-gb-full',
        'geonames-postal-nl-full',
      ])
      const gb = entry.unavailable!.find((u) => u.id === 'geonames-postal-gb-full')!
      expect(gb.reason).toContain('https://download.geonames.org/export/zip/GB_full.csv.zip')
      expect(gb.reason).toContain('HTTP 404')
      expect(lines.some((l) => l.includes('optional source geonames-postal-gb-full is unavailable'))).toBe(true)
      expect(entry.counts.records).toBe(DE.length + GB_OUTWARD.length)

      // A unit postcode answers with its district, the only row the data has.
      const unit = await app.json('GET', '/api/v1/postal/GB/SW1A%201AA', { form: 'bare' })
      expect(unit.status).toBe(200)
      expect(unit.body).toMatchObject({ postal_code: 'SW1A', place_name: 'Westminster', latitude: 51.5018 })
      const ready = await app.json('GET', '/readyz')
      expect(ready.body.domains.find((d: { domain: string }) => d.domain === 'postal').signals_unavailable).toEqual([
        { dataset: 'postal', sources: ['geonames-postal-gb-full', 'geonames-postal-ca-full', 'geonames-postal-nl-full'] },
      ])
      const meta = await app.json('GET', '/api/v1/meta/datasets', { form: 'bare' })
      const dataset = meta.body.results.find((d: { id: string }) => d.id === 'postal')
      expect(dataset.unavailable_sources.map((u: { id: string }) => u.id)).toContain('geonames-postal-gb-full')
    } finally {
      await app.close()
    }
  })

  test('with GB_full.csv.zip upstream, a unit postcode answers with its own row and the outward rows are replaced', async () => {
    files.set(
      '/download.geonames.org/export/zip/GB_full.csv.zip',
      pythonZip(join(tempDir(), 'GB_full.csv.zip'), { 'GB_full.txt': GB_FULL.join('\n') + '\n', 'readme.txt': 'GeoNames full codes' }),
    )
    const { entry, lines, app } = await buildAndServe()
    try {
      expect(entry.unavailable!.map((u) => u.id).sort()).toEqual(['geonames-postal-ca-full', 'geonames-postal-nl-full'])
      expect(entry.sources.map((s) => s.id)).toContain('geonames-postal-gb-full')
      expect(lines.some((l) => l.includes('GB: full postal codes from'))).toBe(true)
      expect(entry.counts.records).toBe(DE.length + GB_FULL.length)

      const unit = await app.json('GET', '/api/v1/postal/GB/SW1A%201AA', { form: 'bare' })
      expect(unit.status).toBe(200)
      expect(unit.body).toMatchObject({ postal_code: 'SW1A 1AA', place_name: 'London', latitude: 51.501, longitude: -0.1416 })
      expect((await app.json('GET', '/api/v1/postal/GB/EC1A%201BB', { form: 'bare' })).body).toMatchObject({
        postal_code: 'EC1A 1BB',
        latitude: 51.5201,
      })
      // The outward rows are gone: the code list holds the unit postcodes only.
      const codes = await app.json('GET', '/api/v1/postal/GB/codes?limit=10', { form: 'bare' })
      expect(codes.body.results.map((c: { postal_code: string }) => c.postal_code)).toEqual(['EC1A 1BB', 'SW1A 1AA', 'SW1A 2AA'])
      expect((await app.json('GET', '/api/v1/postal/DE/10115', { form: 'bare' })).status).toBe(200)
      const ready = await app.json('GET', '/readyz')
      expect(ready.body.domains.find((d: { domain: string }) => d.domain === 'postal').signals_unavailable).toEqual([
        { dataset: 'postal', sources: ['geonames-postal-ca-full', 'geonames-postal-nl-full'] },
      ])
    } finally {
      await app.close()
    }
  })
})
