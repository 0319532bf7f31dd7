/**
 * Postal speed and scale. Builds (1) the mirror set and (2) a synthetic 4.25-million-row set written
 * here in GeoNames format (the mirror's real rows as `allCountries.txt`, plus `GB_full.txt`,
 * `CA_full.txt`, `NL_full.txt` with full-length codes scattered around the real districts, as
 * GeoNames' full files are) through the real importer, and prints build time and size of each. Then,
 * at 4.25M rows, in-process latency percentiles of lookup, nearby (25 km in dense areas) and within (a
 * city-sized polygon), and HTTP lookup throughput as a ratio of hello-world measured in the same run.
 * Prints figures; asserts nothing.
 * Run: `bun bench/postal.ts` (needs ~2 GB of free space in TMPDIR;
 * `--keep` leaves the synthetic files there).
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import { openReadonlySqlite } from '../src/data/sqlite.ts'
import { buildPostalDatabase } from '../src/domains/postal/build.ts'
import { openPostalService } from '../src/domains/postal/service.ts'
import { AlmanacError } from '../src/lib/errors.ts'
import { sha256OfFile } from '../src/data/integrity.ts'
import { progress } from '../src/lib/progress.ts'
import { compareWithHello, percentile, ROOT } from './lib.ts'
import { rng } from '../test/support/random.ts'

// The mirror beside the checkout, as .ci/run uses it, unless ALMANAC_MIRROR says otherwise.
const MIRROR = process.env.ALMANAC_MIRROR ?? join(ROOT, '../shared/mirror')
const POSTAL_DIR = join(MIRROR, 'geonames-postal')
const COUNTRY_INFO = join(MIRROR, 'geonames-countryinfo/countryInfo.txt')
const TARGET_ROWS = 4_250_000
const work = mkdtempSync(join(tmpdir(), 'almanac-postal-bench-'))
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`

const random = rng(42)
const LETTERS = 'ABDEFGHJLNPQRSTUWXYZ'
const letter = () => LETTERS[Math.floor(random() * LETTERS.length)]!
const digit = () => String(Math.floor(random() * 10))

async function build(label: string, postal: string, out: string) {
  const t0 = performance.now()
  const result = await buildPostalDatabase({
    postal,
    countryInfo: COUNTRY_INFO,
    out,
    progress: (l, total) => progress(`${label}: ${l}`, total, console.error),
    log: (l) => console.error(`${label}: ${l}`),
  })
  const seconds = (performance.now() - t0) / 1000
  return { label, seconds, bytes: statSync(out).size, rows: result.counts.records! }
}

/** The synthetic set: real rows of every country, and full codes for GB, CA and NL around their real districts. */
async function writeSynthetic(dir: string): Promise<number> {
  mkdirSync(dir, { recursive: true })
  const files = readdirSync(POSTAL_DIR)
    .filter((f) => f.endsWith('.txt.gz'))
    .sort()
  const all = Bun.file(join(dir, 'allCountries.txt')).writer()
  const districts: Record<string, string[][]> = { GB: [], CA: [], NL: [] }
  let others = 0
  for (const f of files) {
    const text = gunzipSync(readFileSync(join(POSTAL_DIR, f))).toString('utf8')
    all.write(text.endsWith('\n') ? text : text + '\n')
    const cc = f.slice(0, 2)
    const rows = text.split('\n').filter(Boolean)
    if (cc in districts) districts[cc] = rows.map((l) => l.split('\t'))
    else others += rows.length
  }
  await all.end()
  // Shares of GeoNames' full files (GB 1.7M, CA 0.9M, NL 0.46M), scaled to reach the target.
  const remaining = TARGET_ROWS - others
  const shares: Record<string, number> = { GB: 1.7, CA: 0.9, NL: 0.46 }
  const shareSum = 1.7 + 0.9 + 0.46
  const fullCode: Record<string, (district: string) => string> = {
    GB: (d) => `${d} ${digit()}${letter()}${letter()}`,
    CA: (d) => `${d} ${digit()}${letter()}${digit()}`,
    NL: (d) => `${d} ${letter()}${letter()}`,
  }
  let written = others
  for (const cc of ['GB', 'CA', 'NL']) {
    const want = Math.round((remaining * shares[cc]!) / shareSum)
    const base = districts[cc]!
    const writer = Bun.file(join(dir, `${cc}_full.txt`)).writer()
    for (let i = 0; i < want; i++) {
      const d = base[i % base.length]!
      // Within about 1.5 km of the district's point: full codes cluster around their district as real ones do.
      const lat = Number(d[9]) + (random() - 0.5) * 0.027
      const lng = Number(d[10]) + (random() - 0.5) * 0.04
      writer.write(
        [cc, fullCode[cc]!(d[1]!), d[2], d[3], d[4], d[5], d[6], d[7], d[8], lat.toFixed(5), lng.toFixed(5), '6'].join('\t') + '\n',
      )
    }
    await writer.end()
    written += want
  }
  return written
}

function percentiles(label: string, rounds: number, fn: (i: number) => unknown) {
  const times: number[] = []
  // A query the work budget refuses is a row saying so, not the end of the run.
  try {
    fn(0)
  } catch (e) {
    if (!(e instanceof AlmanacError)) throw e
    console.log(`| ${label} | refused: ${e.kind}, ${e.detail.slice(0, 60)}… | | | |`)
    return
  }
  for (let i = 0; i < Math.min(50, rounds); i++) fn(i) // warm-up
  for (let i = 0; i < rounds; i++) {
    const t = performance.now()
    fn(i)
    times.push(performance.now() - t)
  }
  const at = (p: number) => percentile(times, p).toFixed(3)
  console.log(`| ${label} | ${rounds.toLocaleString('en')} | ${at(50)} | ${at(99)} | ${Math.max(...times).toFixed(3)} |`)
}

try {
  const mirrorDb = join(work, 'mirror.sqlite')
  const builds = [await build('mirror set', POSTAL_DIR, mirrorDb)]
  const synthDir = join(work, 'synthetic')
  const t0 = performance.now()
  const rowsWritten = await writeSynthetic(synthDir)
  console.error(`synthetic: wrote ${rowsWritten.toLocaleString('en')} rows in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
  const synthDb = join(work, 'synthetic.sqlite')
  builds.push(await build('synthetic 4.25M set', synthDir, synthDb))
  rmSync(mirrorDb, { force: true })

  console.log('\nBuild (real importer, one process)')
  console.log('| set | rows | build s | rows/s | database |')
  console.log('|---|---:|---:|---:|---:|')
  for (const b of builds)
    console.log(
      `| ${b.label} | ${b.rows.toLocaleString('en')} | ${b.seconds.toFixed(1)} | ${Math.round(b.rows / b.seconds).toLocaleString('en')} ` +
        `| ${mb(b.bytes)} |`,
    )

  const db = openReadonlySqlite(synthDb)
  const service = openPostalService(db)
  const sample = db.query('SELECT country, postal_code FROM places WHERE id % 2113 = 0').all() as { country: string; postal_code: string }[]
  const page = { limit: 50, offset: 0 }
  const count = (country: string, lat: number, lng: number) => service.nearby(country, { lat, lng, radius_km: 25 }, page).total
  const box = (lng: number, lat: number, w: number, h: number) => ({
    type: 'Polygon',
    coordinates: [
      [
        [lng, lat],
        [lng + w, lat],
        [lng + w, lat + h],
        [lng, lat + h],
        [lng, lat],
      ],
    ],
  })
  const paris = box(2.25, 48.815, 0.17, 0.09)
  const london = box(-0.2, 51.46, 0.16, 0.09)
  // A city-outline-sized polygon: many vertices, so the cost of testing each candidate shows.
  const outline = Array.from({ length: 2000 }, (_, i) => [
    -0.1278 + 0.173 * Math.cos((i / 2000) * 2 * Math.PI),
    51.5074 + 0.108 * Math.sin((i / 2000) * 2 * Math.PI),
  ])
  const londonOutline = { type: 'Polygon', coordinates: [[...outline, outline[0]!]] }

  console.log(`\nIn-process latency at ${service.records.toLocaleString('en')} rows (ms)`)
  console.log(
    `Candidates: 25 km around London ${count('GB', 51.5074, -0.1278).toLocaleString('en')} codes, around ` +
      `Berlin ${count('DE', 52.52, 13.405).toLocaleString('en')}; within Paris ` +
      `box ${service.within('FR', paris, page).total.toLocaleString('en')}, London ` +
      `box ${service.within('GB', london, page).total.toLocaleString('en')}`,
  )
  console.log('| query | calls | p50 | p99 | max |')
  console.log('|---|---:|---:|---:|---:|')
  percentiles(`lookup (${sample.length.toLocaleString('en')} codes of every country, round robin)`, 20_000, (i) =>
    service.lookup(sample[i % sample.length]!.country, sample[i % sample.length]!.postal_code),
  )
  percentiles('lookup, loosely written (GB `sw1a1aa`-style, no space)', 5_000, (i) => {
    const gb = sample.filter((s) => s.country === 'GB')
    return service.lookup('gbr', gb[i % gb.length]!.postal_code.replace(' ', '').toLowerCase())
  })
  const jitter = rng(7)
  percentiles('nearby 25 km, Berlin (DE), limit 50', 500, () =>
    service.nearby('DE', { lat: 52.52 + (jitter() - 0.5) * 0.05, lng: 13.405 + (jitter() - 0.5) * 0.05, radius_km: 25 }, page),
  )
  percentiles('nearby 25 km, central London (GB full codes), limit 50', 200, () =>
    service.nearby('GB', { lat: 51.5074 + (jitter() - 0.5) * 0.05, lng: -0.1278 + (jitter() - 0.5) * 0.05, radius_km: 25 }, page),
  )
  percentiles('nearby 25 km, central London, limit 100 at offset 1,000', 200, () =>
    service.nearby(
      'GB',
      { lat: 51.5074 + (jitter() - 0.5) * 0.05, lng: -0.1278 + (jitter() - 0.5) * 0.05, radius_km: 25 },
      { limit: 100, offset: 1000 },
    ),
  )
  percentiles('nearby 100 km, central London, limit 50', 200, () =>
    service.nearby('GB', { lat: 51.5074 + (jitter() - 0.5) * 0.05, lng: -0.1278 + (jitter() - 0.5) * 0.05, radius_km: 100 }, page),
  )
  percentiles('nearby 5 km, central London (GB full codes), limit 50', 500, () =>
    service.nearby('GB', { lat: 51.5074 + (jitter() - 0.5) * 0.05, lng: -0.1278 + (jitter() - 0.5) * 0.05, radius_km: 5 }, page),
  )
  percentiles('within Paris box (~12 x 10 km), limit 50', 500, () => service.within('FR', paris, page))
  percentiles('within London box (~11 x 10 km, GB full codes), limit 50', 200, () => service.within('GB', london, page))
  percentiles('within London 12 km circle as a 2,000-vertex polygon, limit 50', 200, () => service.within('GB', londonOutline, page))
  percentiles("search q='ber' in DE, limit 50", 2_000, () => service.search('DE', { q: 'ber' }, page))
  db.close()

  // HTTP: a data directory holding only the synthetic postal dataset.
  const dataDir = join(work, 'data')
  mkdirSync(dataDir)
  copyFileSync(synthDb, join(dataDir, 'postal.sqlite'))
  rmSync(synthDb)
  writeFileSync(
    join(dataDir, 'manifest.json'),
    JSON.stringify({
      generated: new Date().toISOString(),
      datasets: {
        postal: {
          id: 'postal',
          version: 'bench-synthetic',
          built: new Date().toISOString(),
          revision: 0,
          inputs: '',
          sources: [],
          counts: {},
          // The server checks each artifact against its sha256 before serving it (an empty one disabled the domain).
          artifacts: [
            {
              name: 'postal.sqlite',
              bytes: statSync(join(dataDir, 'postal.sqlite')).size,
              sha256: await sha256OfFile(join(dataDir, 'postal.sqlite')),
            },
          ],
        },
      },
    }),
  )
  const gbCode = encodeURIComponent(sample.find((s) => s.country === 'GB')!.postal_code)
  await compareWithHello(
    `Postal over HTTP at ${rowsWritten.toLocaleString('en')} rows (wrk, 32 connections, 5 s each)`,
    [
      { name: 'GET /postal/US/90210 (Form B)', path: '/api/v1/postal/US/90210', headers: { 'x-response-form': 'bare' } },
      { name: 'GET /postal/US/90210 (Form A)', path: '/api/v1/postal/US/90210', headers: { 'x-response-form': 'enveloped' } },
      { name: `GET /postal/gbr/${gbCode} (full GB code)`, path: `/api/v1/postal/gbr/${gbCode}` },
      {
        name: 'POST /postal/DE/nearby 25 km Berlin',
        method: 'POST',
        path: '/api/v1/postal/DE/nearby',
        body: { lat: 52.52, lng: 13.405, radius_km: 25 },
      },
      {
        name: 'POST /postal/validate (10 codes)',
        method: 'POST',
        path: '/api/v1/postal/validate',
        body: {
          codes: Array.from({ length: 10 }, (_, i) => ({
            country_code: ['US', 'DE', 'FR', 'GB', 'IN'][i % 5],
            postal_code: ['90210', '10115', '75001', 'SW1A 1AA', '110001'][i % 5],
          })),
        },
      },
    ],
    { ALMANAC_DATA_DIR: dataDir },
  )
} finally {
  if (!process.argv.includes('--keep')) rmSync(work, { recursive: true, force: true })
  else console.error(`kept ${work}`)
}
