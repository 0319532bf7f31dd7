/**
 * GeoNames postal files + countryInfo.txt -> `postal.sqlite`: one `places` row per GeoNames record,
 * a folded place-name column for accent-insensitive prefix search, an R*Tree over the coordinates for
 * radius and polygon queries, a `codes` table that pages distinct codes by position, and `systems`
 * (format, regex, counts) for every country of countryInfo.
 *
 * Built for the full 4.25M-row set: one transaction, one prepared insert, no journal and no fsync
 * while building, indexes and the R*Tree filled after the rows, then `VACUUM INTO` the artifact so the
 * file is compact and byte-for-byte the same for the same inputs.
 */
import { Database } from 'bun:sqlite'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import type { BuildContext, BuildResult, DatasetBuilder } from '../../data/types.ts'
import { parseCountryInfo } from './countryinfo.ts'
import { foldName } from './fold.ts'
import { CELL_DEGS, Grid } from './grid.ts'
import { bestRanks, discoverInputs, lineBatches, openInput, type PostalInput } from './inputs.ts'
import { FULL_CODE_COUNTRIES, fullCodeSource } from './sources.ts'

export const POSTAL_ARTIFACT = 'postal.sqlite'
export const POSTAL_SOURCE = 'geonames-postal'
export const COUNTRYINFO_SOURCE = 'geonames-countryinfo'

const SCHEMA =
  `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE systems (
  alpha2 TEXT PRIMARY KEY, alpha3 TEXT NOT NULL, name TEXT NOT NULL,
  geonames_format TEXT NOT NULL, geonames_regex TEXT NOT NULL, format TEXT, regex TEXT,
  total_codes INTEGER NOT NULL DEFAULT 0, total_records INTEGER NOT NULL DEFAULT 0,
  first_id INTEGER, last_id INTEGER
) WITHOUT ROWID;
CREATE TABLE admins (
  id INTEGER PRIMARY KEY, country TEXT NOT NULL,
  admin_name1 TEXT, admin_code1 TEXT, admin_name2 TEXT, admin_code2 TEXT, admin_name3 TEXT, admin_code3 TEXT
);
CREATE TABLE places (
  id INTEGER PRIMARY KEY, country TEXT NOT NULL, postal_code TEXT NOT NULL,
  place_name TEXT NOT NULL, place_folded TEXT NOT NULL, admin_id INTEGER NOT NULL,
  latitude REAL, longitude REAL, accuracy INTEGER
);
CREATE TABLE codes (country TEXT NOT NULL, seq INTEGER NOT NULL, postal_code TEXT NOT NULL, first_id INTEGER NOT NULL, PRIMARY KEY ` +
  `(country, seq)) WITHOUT ROWID;
-- The country is also a dimension: its key is its first place id, each point spanning key..key + 0.5, so a
-- query's country is searched by the tree with its box and another country's points are never read
-- (Gibraltar within 500 km read ~127,000 rows of Spain and Morocco for its one, ~50 ms; now one row). The
-- half-unit extent keeps the volume of a country's nodes spatial, so the tree's splits within a country
-- are as in two dimensions (the id itself as the dimension made London's dense searches ~20x slower).
-- Candidates are decided from their boxes; the few near a shape's edge have their coordinates read from places.
CREATE VIRTUAL TABLE places_rtree USING rtree(id, min_lat, max_lat, min_lng, max_lng, min_key, max_key, +country);
-- Points per grid cell (grid.ts, one grid per size: \`per_deg\` cells a degree) and country, as running
-- counts along each grid row: \`cum\` is the country's points in this cell and the cells before it in its
-- row (cells without points have no row). An exact radius count adds the cells wholly inside the circle,
-- each row's run of them as the difference of two running counts, and measures only the points of cells
-- on its edge.
CREATE TABLE cells (
  country TEXT NOT NULL, per_deg INTEGER NOT NULL, cell INTEGER NOT NULL, cum INTEGER NOT NULL,
  PRIMARY KEY (country, per_deg, cell)
) WITHOUT ROWID;
`

const INDEXES = `
CREATE INDEX places_code ON places (country, postal_code);
CREATE INDEX places_name ON places (country, place_folded);
CREATE INDEX places_admin ON places (admin_id);
CREATE INDEX admins_code ON admins (country, admin_code1 COLLATE NOCASE);
`

export interface PostalBuildOptions {
  /** Files or folders of GeoNames postal files (the most complete file of each country wins). */
  postal: string | readonly string[]
  countryInfo: string
  out: string
  progress?: BuildContext['progress']
  log?: (line: string) => void
}

const text = (s: string | undefined) => (s === undefined || s === '' ? null : s)

function coordinate(s: string | undefined, limit: number): number | null {
  if (!s) return null
  const n = Number(s)
  return Number.isFinite(n) && Math.abs(n) <= limit ? n : null
}

/** A database written once, start to end, by this process alone: no journal, no syncs, a large cache. */
function tuneForBulkLoad(db: Database) {
  db.run('PRAGMA journal_mode = OFF')
  db.run('PRAGMA synchronous = OFF')
  db.run('PRAGMA locking_mode = EXCLUSIVE')
  db.run('PRAGMA temp_store = MEMORY')
  db.run('PRAGMA cache_size = -262144')
  db.run('PRAGMA page_size = 4096')
}

interface Skipped {
  unknownCountry: Map<string, number>
  noCode: number
  malformed: number
  noCoordinates: number
}

/** What the build left out or kept unindexed, for its notes. */
function skippedNotes(skipped: Skipped): string[] {
  const notes: string[] = []
  for (const [cc, n] of skipped.unknownCountry) notes.push(`${n} rows of country ${cc}, which countryInfo.txt does not list, were skipped`)
  if (skipped.noCode) notes.push(`${skipped.noCode} rows without a postal code were skipped`)
  if (skipped.malformed) notes.push(`${skipped.malformed} lines with fewer than 11 columns were skipped`)
  if (skipped.noCoordinates) notes.push(`${skipped.noCoordinates} rows without valid coordinates are kept but not spatially indexed`)
  return notes
}

/** Builds the artifact at `out`; returns the counts. Usable outside the dataset runner (bench). */
export async function buildPostalDatabase(o: PostalBuildOptions): Promise<BuildResult> {
  const log = o.log ?? (() => {})
  const countries = parseCountryInfo(readFileSync(o.countryInfo, 'utf8'))
  const known = new Set(countries.map((c) => c.alpha2))
  const inputs = discoverInputs(o.postal)
  const best = bestRanks(inputs)
  // One file per country: the best-ranked, the first by name among equals.
  const owner = new Map<string, PostalInput>()
  for (const i of inputs) if (i.country && i.rank === best.get(i.country) && !owner.has(i.country)) owner.set(i.country, i)
  for (const i of inputs) if (i.rank === 3 && owner.get(i.country!) === i) log(`${i.country}: full postal codes from ${i.path}`)

  const work = `${o.out}.work`
  for (const p of [o.out, work]) rmSync(p, { force: true })
  const db = new Database(work, { create: true })
  const notes: string[] = []
  try {
    tuneForBulkLoad(db)
    db.exec(SCHEMA)
    const insert = db.prepare(
      'INSERT INTO places (country, postal_code, place_name, place_folded, admin_id, latitude, longitude, accuracy) VALUES ' +
        '(?,?,?,?,?,?,?,?)',
    )
    // The administrative names repeat across thousands of rows each; stored once, they halve the file.
    const insertAdmin = db.prepare(
      'INSERT INTO admins (id, country, admin_name1, admin_code1, admin_name2, admin_code2, admin_name3, admin_code3) VALUES ' +
        '(?,?,?,?,?,?,?,?)',
    )
    const admins = new Map<string, number>()
    const adminId = (country: string, c: string[]) => {
      const key = `${country}\t${c[3]}\t${c[4]}\t${c[5]}\t${c[6]}\t${c[7]}\t${c[8]}`
      let id = admins.get(key)
      if (id === undefined) {
        id = admins.size + 1
        admins.set(key, id)
        insertAdmin.run(
          id,
          country,
          text(c[3]?.trim()),
          text(c[4]?.trim()),
          text(c[5]?.trim()),
          text(c[6]?.trim()),
          text(c[7]?.trim()),
          text(c[8]?.trim()),
        )
      }
      return id
    }
    const skipped: Skipped = { unknownCountry: new Map(), noCode: 0, malformed: 0, noCoordinates: 0 }
    let rows = 0
    const bar = o.progress?.('rows')
    db.run('BEGIN')
    for (const input of inputs) {
      if (input.country && owner.get(input.country) !== input) {
        log(`skipping ${input.path}: ${owner.get(input.country)!.path} covers ${input.country} more fully`)
        continue
      }
      for (const stream of openInput(input)) {
        for await (const batch of lineBatches(stream)) {
          for (const line of batch) {
            const c = line.split('\t')
            if (c.length < 11) {
              skipped.malformed++
              continue
            }
            const country = c[0]!.trim().toUpperCase()
            if (!input.country && owner.has(country)) continue
            if (!known.has(country)) {
              skipped.unknownCountry.set(country, (skipped.unknownCountry.get(country) ?? 0) + 1)
              continue
            }
            const code = c[1]!.trim()
            if (!code) {
              skipped.noCode++
              continue
            }
            const place = c[2]!.trim()
            const lat = coordinate(c[9], 90)
            const lng = coordinate(c[10], 180)
            if (lat === null || lng === null) skipped.noCoordinates++
            const accuracy = c[11] ? Number.parseInt(c[11], 10) : NaN
            insert.run(
              country,
              code,
              place,
              foldName(place),
              adminId(country, c),
              lat === null || lng === null ? null : lat,
              lat === null || lng === null ? null : lng,
              Number.isFinite(accuracy) ? accuracy : null,
            )
            rows++
          }
          bar?.tick(batch.length)
        }
      }
    }
    bar?.done()
    if (!rows) throw new Error(`${[o.postal].flat().join(', ')}: no postal code rows were read`)

    const step = (label: string, sql: string | (() => void)) => {
      const t = performance.now()
      if (typeof sql === 'string') db.exec(sql)
      else sql()
      log(`${label} in ${((performance.now() - t) / 1000).toFixed(1)} s`)
    }
    step('indexes', INDEXES)
    step('spatial index', () => writeSpatialIndex(db))
    step(
      'code list',
      `INSERT INTO codes (country, seq, postal_code, first_id)
       SELECT country, row_number() OVER (PARTITION BY country ORDER BY postal_code) - 1, postal_code, first_id
       FROM (SELECT country, postal_code, MIN(id) AS first_id FROM places GROUP BY country, postal_code)`,
    )
    const system = db.prepare(
      'INSERT INTO systems (alpha2, alpha3, name, geonames_format, geonames_regex, format, regex) VALUES (?,?,?,?,?,?,?)',
    )
    for (const c of [...countries].sort((a, b) => a.alpha2.localeCompare(b.alpha2)))
      system.run(c.alpha2, c.alpha3, c.name, c.geonamesFormat, c.geonamesRegex, c.format, c.regex)
    // first_id is the country's key in the R*Tree (writeSpatialIndex); last_id is kept for inspection.
    db.exec(`UPDATE systems SET
      total_codes = (SELECT COUNT(*) FROM codes WHERE codes.country = systems.alpha2),
      total_records = (SELECT COUNT(*) FROM places WHERE places.country = systems.alpha2),
      first_id = (SELECT MIN(id) FROM places WHERE places.country = systems.alpha2),
      last_id = (SELECT MAX(id) FROM places WHERE places.country = systems.alpha2)`)
    step('grid cells', () => writeCells(db))
    const countriesWithData = (db.query('SELECT COUNT(*) AS n FROM systems WHERE total_records > 0').get() as { n: number }).n
    const codes = (db.query('SELECT COUNT(*) AS n FROM codes').get() as { n: number }).n
    const meta = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)')
    meta.run('records', String(rows))
    meta.run('countries', String(countriesWithData))
    meta.run('cell_degs', JSON.stringify(CELL_DEGS))
    db.run('COMMIT')
    step('statistics', 'ANALYZE')

    notes.push(...skippedNotes(skipped))
    for (const n of notes) log(n)

    step('compaction', `VACUUM INTO '${o.out.replace(/'/g, "''")}'`)
    return { counts: { records: rows, codes, countries: countriesWithData, systems: countries.filter((c) => c.format).length }, notes }
  } finally {
    db.close()
    for (const suffix of ['', '-journal', '-wal', '-shm']) if (existsSync(work + suffix)) rmSync(work + suffix, { force: true })
  }
}

/** The R*Tree of the places with coordinates, over latitude, longitude and country key (see the schema). */
function writeSpatialIndex(db: Database) {
  // The R*Tree keeps its coordinates as 32-bit floats: a key and its half are exact below 2^23.
  const lastId = (db.query('SELECT MAX(id) AS id FROM places').get() as { id: number }).id
  if (lastId >= 2 ** 23) throw new Error(`${lastId} places: the R*Tree's country keys (first ids) must stay below 2^23`)
  db.exec(
    `WITH firsts AS (SELECT country, MIN(id) AS key FROM places GROUP BY country)
     INSERT INTO places_rtree (id, min_lat, max_lat, min_lng, max_lng, min_key, max_key, country)
     SELECT p.id, p.latitude, p.latitude, p.longitude, p.longitude, f.key, f.key + 0.5, p.country
     FROM places p JOIN firsts f ON f.country = p.country WHERE p.latitude IS NOT NULL ORDER BY p.id`,
  )
}

/**
 * Running counts of R*Tree points per grid cell and country along each grid row, for each grid. The cell
 * comes from the R*Tree's own stored (32-bit, rounded-down) corner, as the service computes it for
 * candidates it reads back.
 */
function writeCells(db: Database) {
  // Per grid, per country, the points of each cell: one pass over the R*Tree for every grid.
  const grids = CELL_DEGS.map((deg) => ({ grid: new Grid(deg), counts: new Map<string, Map<number, number>>() }))
  for (const { country, min_lat, min_lng } of db
    .query<{ country: string; min_lat: number; min_lng: number }, []>('SELECT country, min_lat, min_lng FROM places_rtree')
    .iterate())
    for (const { grid, counts } of grids) {
      let cells = counts.get(country)
      if (!cells) counts.set(country, (cells = new Map()))
      const key = grid.keyOf(min_lat, min_lng)
      cells.set(key, (cells.get(key) ?? 0) + 1)
    }
  const insert = db.prepare('INSERT INTO cells (country, per_deg, cell, cum) VALUES (?, ?, ?, ?)')
  for (const { grid, counts } of grids)
    for (const country of [...counts.keys()].sort()) {
      const cells = counts.get(country)!
      let lastRow = -1
      let cum = 0
      for (const key of [...cells.keys()].sort((a, b) => a - b)) {
        const row = grid.rowOfKey(key)
        if (row !== lastRow) [lastRow, cum] = [row, 0] // each grid row's running count starts again
        cum += cells.get(key)!
        insert.run(country, grid.perDeg, key, cum)
      }
    }
}

const FULL_SOURCES = FULL_CODE_COUNTRIES.map(fullCodeSource)

export const postalBuilder: DatasetBuilder = {
  id: 'postal',
  sources: [POSTAL_SOURCE, COUNTRYINFO_SOURCE, ...FULL_SOURCES],
  artifacts: [POSTAL_ARTIFACT],
  optional: FULL_SOURCES,
  // 5: the country as an R*Tree dimension (4 had the id, slow on dense countries); the tree no longer
  // repeats each point's coordinates (unread). 6: the cells hold running counts along each grid row,
  // for cells of 0.0025° and of 0.01°.
  revision: 6,
  async build(ctx) {
    const postal = await ctx.source(POSTAL_SOURCE)
    const info = await ctx.source(COUNTRYINFO_SOURCE)
    const full = await Promise.all(FULL_SOURCES.filter((id) => ctx.has(id)).map((id) => ctx.source(id)))
    return buildPostalDatabase({
      postal: [postal.path, ...full.map((f) => f.path)],
      countryInfo: info.path,
      out: ctx.out(POSTAL_ARTIFACT),
      progress: ctx.progress,
      log: ctx.log,
    })
  },
}
