/**
 * Countries and subdivisions over the read-only `countries.sqlite`: lookups by any ISO code form, filtered
 * and searched lists, validation, and withdrawn codes answered with their successors. No HTTP here.
 */
import type { Database } from 'bun:sqlite'
import type { Static } from 'elysia'
import { openReadonlySqlite } from '../../data/sqlite.ts'
import { AlmanacError, invalid, notFound } from '../../lib/errors.ts'
import type { Page, Paged } from '../../lib/page.ts'
import type { CountryFacts } from './facts.ts'
import { fold } from './normalize.ts'
import type { CodeValidationSchema, CountrySchemas, SubdivisionDetailSchema } from './schemas.ts'

/** A country as the service holds it: Form B's shape (its codes spelt `alpha2`/`alpha3`), as the schema states it. */
export type Country = Static<typeof CountrySchemas.bare>

export interface CountryDetail extends Country, CountryFacts {
  languages: string[]
  currencies: string[]
  calling_codes: string[]
}

/** A subdivision with its country: the single-subdivision response, as its schema states it. */
export type Subdivision = Static<typeof SubdivisionDetailSchema>

export interface Withdrawn {
  code: string
  kind: 'country' | 'subdivision'
  name: string
  withdrawn: string
  successors: string[]
  comment: string | null
}

/** One answer of the validate routes, which list the service's results as they are. */
export type ValidationResult = Static<typeof CodeValidationSchema>

export interface CountryFilter {
  region?: string
  sub_region?: string
  q?: string
}

export interface SubdivisionFilter {
  type?: string
  q?: string
}

type CountryRow = Country & { languages: string; currencies: string; calling_codes: string; facts: string }
type WithdrawnRow = Omit<Withdrawn, 'successors'> & { successors: string }

/** A record held in memory with the folded text a `q` filter searches. */
interface Searchable<T> {
  item: T
  search: string
}

const pageOf = <T>(matches: Searchable<T>[], page: Page): Paged<T> => ({
  total: matches.length,
  items: matches.slice(page.offset, page.offset + page.limit).map((m) => m.item),
})

const COUNTRY_COLUMNS = 'alpha2, alpha3, numeric, name, official_name, region, sub_region, intermediate_region, capital'
const SUBDIVISION_COLUMNS = 'code, name, type, parent, country'

const ALPHA2 = /^[A-Z]{2}$/
const ALPHA3 = /^[A-Z]{3}$/
const ALPHA4 = /^[A-Z]{4}$/
const NUMERIC = /^\d{1,3}$/
/** ISO 3166-2: the alpha-2 code, a hyphen, one to three letters or digits. */
const SUBDIVISION_CODE = /^[A-Z]{2}-[A-Z0-9]{1,3}$/

const COUNTRY_CODE_HELP = 'expected an ISO 3166-1 alpha-2 (US), alpha-3 (USA) or numeric (840) code'
const SUBDIVISION_CODE_HELP = 'expected an ISO 3166-2 code: alpha-2, hyphen, one to three letters or digits (US-CA, GB-ENG, FR-75C)'

export type CountriesService = ReturnType<typeof openCountriesService>

export function openCountriesService(path: string) {
  const db = openReadonlySqlite(path)
  return countriesService(db)
}

const pathCode = (raw: string, pattern: (c: string) => boolean, help: string) => {
  const code = raw.trim().toUpperCase()
  if (!pattern(code)) throw invalid('code', help, 'path')
  return code
}

/** Folded `q`; a query with no letter or digit is a 422 rather than a silent match-all. */
const searchQuery = (q: string | undefined): string | undefined => {
  if (q === undefined) return undefined
  const folded = fold(q)
  if (!folded) throw invalid('q', 'must contain at least one letter or digit', 'query')
  // Names are stored framed by spaces (`searchText`): ` query` matches at the start of a word.
  return ' ' + folded
}

/** The stored spelling of a filter value, matched case-insensitively; a 422 listing the valid ones otherwise. */
const oneOf = (field: string, value: string | undefined, valid: string[]) => {
  if (value === undefined) return undefined
  const wanted = value.trim().toLowerCase()
  const found = valid.find((v) => v.toLowerCase() === wanted)
  if (!found)
    throw new AlmanacError('invalid', `${field}: unknown value ${JSON.stringify(value)}; valid values: ${valid.join(', ')}.`, {
      errors: [{ in: 'query', field, message: `unknown value; valid values: ${valid.join(', ')}` }],
    })
  return found
}

const toDetail = ({ facts, ...row }: CountryRow): CountryDetail => ({
  ...row,
  languages: JSON.parse(row.languages),
  currencies: JSON.parse(row.currencies),
  calling_codes: JSON.parse(row.calling_codes),
  ...(JSON.parse(facts) as CountryFacts),
})

/** The values of a one-column query (`SELECT … AS v`). */
const distinct = (db: Database, sql: string) =>
  db
    .query<{ v: string }, []>(sql)
    .all()
    .map((r) => r.v)

/** The 404 of a withdrawn code: its former entries and their successors. */
function withdrawnError(asked: string, kind: Withdrawn['kind'], former: Withdrawn[]): AlmanacError {
  const successors = [...new Set(former.flatMap((f) => f.successors))]
  const names = former.map((f) => `${f.name} (withdrawn ${f.withdrawn})`).join('; ')
  return notFound(
    `${asked} is a withdrawn ${kind === 'country' ? 'ISO 3166-1' : 'ISO 3166-2'} code: ${names}. ${
      successors.length
        ? `Use ${successors.length > 1 ? 'one of its successors' : 'its successor'}: ${successors.join(', ')}.`
        : 'It has no single successor code.'
    }`,
    {
      code: asked,
      withdrawn: true,
      successors,
      former: former.map(({ name, withdrawn, successors, comment }) => ({
        name,
        withdrawn,
        successors,
        ...(comment ? { comment } : {}),
      })),
    },
  )
}

export function countriesService(db: Database) {
  const byAlpha2 = db.query<CountryRow, [string]>(
    `SELECT ${COUNTRY_COLUMNS}, languages, currencies, calling_codes, facts FROM countries WHERE alpha2 = ?`,
  )
  const subdivisionByCode = db.query<Subdivision, [string]>(`SELECT ${SUBDIVISION_COLUMNS} FROM subdivisions WHERE code = ?`)
  const subdivisionsByCountry = new Map<string, { items: Subdivision[]; searchable: Searchable<Subdivision>[] }>()
  const subdivisionsOfCountry = db.query<Subdivision & { search: string }, [string]>(
    `SELECT ${SUBDIVISION_COLUMNS}, search FROM subdivisions WHERE country = ? ORDER BY code`,
  )
  const withdrawnByCode = db.query<WithdrawnRow, [string, string]>(
    `SELECT code, kind, name, withdrawn, successors, comment FROM withdrawn WHERE code = ? AND kind = ? ORDER BY withdrawn`,
  )

  const regions = distinct(db, 'SELECT DISTINCT region AS v FROM countries WHERE region IS NOT NULL ORDER BY 1')
  const subRegions = distinct(
    db,
    'SELECT DISTINCT sub_region AS v FROM countries WHERE sub_region IS NOT NULL UNION SELECT DISTINCT intermediate_region FROM ' +
      'countries WHERE intermediate_region IS NOT NULL ORDER BY 1',
  )
  const subdivisionTypes = distinct(db, 'SELECT DISTINCT type AS v FROM subdivisions ORDER BY 1')
  // 249 countries in list order, held with their search text: a list filters them in memory, ~100x faster
  // than SQLite counting and sorting the table for every request.
  const listed: Searchable<Country>[] = db
    .query<Country & { search: string }, []>(`SELECT ${COUNTRY_COLUMNS}, search FROM countries ORDER BY sort_key, alpha2`)
    .all()
    .map(({ search, ...item }) => ({ item, search }))
  /** Every current code (alpha-2, alpha-3, numeric) -> its country. */
  const byAnyCode = new Map<string, Country>(
    listed.flatMap(({ item }) => [
      [item.alpha2, item],
      [item.alpha3, item],
      [item.numeric, item],
    ]),
  )
  /** The current country an upper-case code names (numeric codes padded to three digits), if any. */
  const current = (code: string): Country | undefined => byAnyCode.get(NUMERIC.test(code) ? code.padStart(3, '0') : code)
  const meta = Object.fromEntries(
    db
      .query<{ key: string; value: string }, []>('SELECT key, value FROM meta')
      .all()
      .map((r) => [r.key, r.value]),
  )

  const withdrawnAs = (code: string, kind: Withdrawn['kind']): Withdrawn[] =>
    withdrawnByCode.all(code, kind).map((w) => ({ ...w, successors: JSON.parse(w.successors) as string[] }))

  /** 404 for a code that is not current: with the former entries and their successors when it was withdrawn. */
  function gone(asked: string, code: string, kind: Withdrawn['kind']): AlmanacError {
    const former = withdrawnAs(kind === 'country' && NUMERIC.test(code) ? code.padStart(3, '0') : code, kind)
    const what = kind === 'country' ? 'country' : 'subdivision'
    if (!former.length) return notFound(`No ${what} has the code ${asked}.`)
    return withdrawnError(asked, kind, former)
  }

  /** Countries already read in full, by alpha-2 (249 at most). */
  const details = new Map<string, Readonly<CountryDetail>>()

  /** One country by alpha-2, alpha-3 or numeric code, any case. Read once: the data never changes while open. */
  function country(raw: string): Readonly<CountryDetail> {
    const code = pathCode(raw, (c) => ALPHA2.test(c) || ALPHA3.test(c) || ALPHA4.test(c) || NUMERIC.test(c), COUNTRY_CODE_HELP)
    const found = current(code)
    if (!found) throw gone(raw, code, 'country')
    let detail = details.get(found.alpha2)
    if (!detail) details.set(found.alpha2, (detail = Object.freeze(toDetail(byAlpha2.get(found.alpha2)!))))
    return detail
  }

  /** A country's subdivisions with their search text, read once per country (≤ 5,046 rows in all). */
  const subdivisionsOf = (alpha2: string) => {
    let found = subdivisionsByCountry.get(alpha2)
    if (!found) {
      const searchable = subdivisionsOfCountry.all(alpha2).map(({ search, ...item }) => ({ item, search }))
      subdivisionsByCountry.set(alpha2, (found = { items: searchable.map((s) => s.item), searchable }))
    }
    return found
  }

  return {
    /** iso-codes release and date the artifact was built from. */
    meta,
    regions,
    subRegions,
    subdivisionTypes,

    listCountries(filter: CountryFilter, page: Page): Paged<Country> {
      const region = oneOf('region', filter.region, regions)
      // An M.49 intermediate region (Caribbean, South America …) is accepted as a sub-region too.
      const subRegion = oneOf('sub_region', filter.sub_region, subRegions)
      const q = searchQuery(filter.q)
      return pageOf(
        listed.filter(
          ({ item, search }) =>
            (!region || item.region === region) &&
            (!subRegion || item.sub_region === subRegion || item.intermediate_region === subRegion) &&
            (!q || search.includes(q)),
        ),
        page,
      )
    },

    country,

    /** Every subdivision of a country, ordered by code (Form A embeds them in the country). */
    allSubdivisions: (alpha2: string): Subdivision[] => subdivisionsOf(alpha2).items,

    subdivisionsOf(raw: string, filter: SubdivisionFilter, page: Page): Paged<Subdivision> {
      const { alpha2 } = country(raw)
      let type: string | undefined
      if (filter.type !== undefined) {
        const wanted = filter.type.trim().toLowerCase()
        // A type no subdivision anywhere has matches nothing, like a type this country lacks.
        type = subdivisionTypes.find((t) => t.toLowerCase() === wanted) ?? '\0'
      }
      const q = searchQuery(filter.q)
      return pageOf(
        subdivisionsOf(alpha2).searchable.filter(({ item, search }) => (!type || item.type === type) && (!q || search.includes(q))),
        page,
      )
    },

    subdivision(raw: string): Subdivision {
      const code = pathCode(raw, (c) => SUBDIVISION_CODE.test(c), SUBDIVISION_CODE_HELP)
      const row = subdivisionByCode.get(code)
      if (!row) throw gone(raw, code, 'subdivision')
      return row
    },

    /** Unknown, withdrawn and malformed codes alike are `valid: false, name: null` (SPEC: not an error). */
    validateCountries(codes: string[]): ValidationResult[] {
      return codes.map((code) => {
        const found = current(code.trim().toUpperCase())
        return { code, valid: !!found, name: found?.name ?? null }
      })
    },

    validateSubdivisions(codes: string[]): ValidationResult[] {
      return codes.map((code) => {
        const upper = code.trim().toUpperCase()
        const row = SUBDIVISION_CODE.test(upper) ? subdivisionByCode.get(upper) : null
        return { code, valid: !!row, name: row?.name ?? null }
      })
    },

    close() {
      db.close()
    },
  }
}
