/**
 * The postal service: every question the nine endpoints ask, as functions over the read-only
 * `postal.sqlite`. Country systems (252 rows) are held in memory; records are always read through an
 * index: the code index for lookups, the folded-name index for place search, the R*Tree for space.
 */
import { wildcardMatch } from '../../lib/wildcard.ts'
import type { Database, Statement } from 'bun:sqlite'
import type { Static } from 'elysia'
import { AlmanacError, invalid, notFound, type FieldError } from '../../lib/errors.ts'
import { inlineOr, NotInline, type QueryPool } from '../../lib/query-pool.ts'
import { WorkBudget, WorkMeter } from '../../lib/work-budget.ts'
import type { Page, Paged } from '../../lib/page.ts'
import { foldName, prefixEnd } from './fold.ts'
import { codeCandidates, districtOf, matchFormat, postalFormat } from '../../lib/postal-formats.ts'
import { parsePolygons } from './geo.ts'
import type { FormatCheckSchema, PostalCheckSchemas, PostalCodeSchema } from './schemas.ts'
import { Spatial, type CountryScope, type SpatialTuning } from './spatial.ts'

export interface PostalSystem {
  alpha2: string
  alpha3: string
  name: string
  /** The pattern codes are laid out in (GeoNames notation, corrected: formats.ts). */
  pattern: string
  /** SPEC notation, null without a postal system. */
  format: string | null
  regex: string | null
  totalCodes: number
  totalRecords: number
  /** How spatial queries select the country's points (spatial.ts). */
  scope: CountryScope
}

export interface PostalRecord {
  id: number
  postal_code: string
  country_code: string
  place_name: string
  admin_name1: string | null
  admin_code1: string | null
  admin_name2: string | null
  admin_code2: string | null
  admin_name3: string | null
  admin_code3: string | null
  latitude: number | null
  longitude: number | null
  accuracy: number | null
  distance_km?: number
}

export interface SearchFilters {
  q?: string
  prefix?: string
  admin_code?: string
}

/** A batch check: the same members as Form A's answer, as its schema states them. */
export type FormatCheck = Static<typeof PostalCheckSchemas.enveloped>

/**
 * Places are read without their admin names, which come from a cache of admin rows (62k rows shared by
 * 1.3M places; a lookup touches a handful). Measured on a one-row lookup: the join cost 5 µs more than
 * the place row alone, the cached admin row nothing.
 */
const PLACES =
  `SELECT p.id, p.postal_code, p.country AS country_code, p.place_name, p.admin_id, p.latitude, p.longitude, p.accuracy ` + `FROM places p`

type PlaceRow = Omit<PostalRecord, 'admin_name1' | 'admin_code1' | 'admin_name2' | 'admin_code2' | 'admin_name3' | 'admin_code3'> & {
  admin_id: number
}
type AdminRow = Pick<PostalRecord, 'admin_name1' | 'admin_code1' | 'admin_name2' | 'admin_code2' | 'admin_name3' | 'admin_code3'>

export const NEARBY_MAX_RADIUS_KM = 500

/**
 * Default work budget of one search, nearby or within request, in rows read (and polygon edge tests,
 * 64 to a row). 0.2–0.5 µs a unit on the 2-core build machine: 50,000 units is at most ~25 ms, half
 * the 50 ms an answer may hold the event loop (docs/postal.md, "Work budget").
 */
export const DEFAULT_WORK_BUDGET = 50_000

/**
 * Work a search, nearby or within may do on the event loop before it is run again on a query worker
 * under the whole budget: ~1 ms (docs/postal.md, "Where a query runs").
 */
export const INLINE_WORK = 2_000

/** The queries whose work depends on the caller's input: budgeted, and run on a worker past the inline work. */
export type Heavy = 'search' | 'nearby' | 'within'

/**
 * The service over an open postal database (the domain's only way to make one). `tuning` sets the spatial
 * index's thresholds (tests); `workBudget` the units of work one search, nearby or within may spend.
 */
export function openPostalService(db: Database, tuning: Partial<SpatialTuning> = {}, workBudget?: number): PostalService {
  return new PostalService(db, tuning, workBudget)
}

export class PostalService {
  private readonly spatial: Spatial
  private readonly byCode = new Map<string, PostalSystem & { re: RegExp | null }>()
  readonly systems: PostalSystem[]
  readonly records: number

  private readonly meter: WorkMeter

  constructor(
    private readonly db: Database,
    tuning: Partial<SpatialTuning> = {},
    /** Units of work one search, nearby or within may spend (see DEFAULT_WORK_BUDGET). */
    readonly workBudget = DEFAULT_WORK_BUDGET,
  ) {
    this.meter = WorkMeter.of(db)
    this.byCodeStmt = db.query(`${PLACES} WHERE p.country = ? AND p.postal_code = ?`)
    this.codeExistsStmt = db.query('SELECT 1 AS found FROM places WHERE country = ? AND postal_code = ? LIMIT 1')
    this.adminStmt = db.query(
      'SELECT admin_name1, admin_code1, admin_name2, admin_code2, admin_name3, admin_code3 FROM admins WHERE id = ?',
    )
    const rows = db
      .query(
        'SELECT alpha2, alpha3, name, geonames_format, geonames_regex, total_codes, total_records, first_id FROM systems ORDER ' +
          'BY alpha2',
      )
      .all() as any[]
    this.systems = rows.map((r) => ({
      alpha2: r.alpha2,
      alpha3: r.alpha3,
      name: r.name,
      // From the upstream columns, with today's corrections (formats.ts), whatever the artifact's build stored.
      ...postalFormat(r.alpha2, r.geonames_format, r.geonames_regex),
      totalCodes: r.total_codes,
      totalRecords: r.total_records,
      scope: { alpha2: r.alpha2, key: r.total_records ? r.first_id : null },
    }))
    this.spatial = new Spatial(db, tuning)
    for (const s of this.systems) {
      const entry = { ...s, re: s.regex ? new RegExp(s.regex) : null }
      this.byCode.set(s.alpha2, entry)
      this.byCode.set(s.alpha3, entry)
    }
    this.records = Number((db.query("SELECT value FROM meta WHERE key = 'records'").get() as { value: string }).value)
  }

  /** The country of an alpha-2 or alpha-3 code in any case, or undefined. */
  find(code: string) {
    return this.byCode.get(code.trim().toUpperCase())
  }

  /** The country of a path parameter; a 404 that says the country is not supported otherwise. */
  country(code: string) {
    const system = this.find(code)
    if (!system) {
      throw notFound(
        `Country ${JSON.stringify(code)} is not supported: it is not an ISO 3166-1 alpha-2 or alpha-3 code of a country in the postal ` +
          `dataset.`,
        {
          reason: 'country_not_supported',
          country_code: code,
        },
      )
    }
    return system
  }

  /** A country whose postal codes are in the data; a 404 saying why not otherwise. */
  private withData(code: string) {
    const system = this.country(code)
    if (!system.totalRecords) {
      const why = system.format ? 'this dataset holds no postal codes for it' : 'it has no postal code system'
      throw notFound(`Postal codes of ${system.name} (${system.alpha2}) are not supported: ${why}.`, {
        reason: 'country_not_supported',
        country_code: system.alpha2,
      })
    }
    return system
  }

  listSystems(filter: { hasSystem?: boolean; formatLike?: string }, page: Page): Paged<PostalSystem> {
    let list = this.systems
    if (filter.hasSystem !== undefined) list = list.filter((s) => (s.format !== null) === filter.hasSystem)
    if (filter.formatLike !== undefined) {
      const match = formatMatcher(filter.formatLike)
      list = list.filter((s) => s.format !== null && s.format.split(' / ').some(match))
    }
    return { total: list.length, items: list.slice(page.offset, page.offset + page.limit) }
  }

  private readonly admins = new Map<number, AdminRow>()
  private readonly adminStmt: Statement<AdminRow, [number]>

  /** Place rows completed with their admin names, in the order given. */
  private withAdmins(rows: PlaceRow[]): PostalRecord[] {
    return rows.map(({ admin_id, ...place }) => {
      let admin = this.admins.get(admin_id)
      if (!admin) this.admins.set(admin_id, (admin = this.adminStmt.get(admin_id)!))
      return {
        id: place.id,
        postal_code: place.postal_code,
        country_code: place.country_code,
        place_name: place.place_name,
        ...admin,
        latitude: place.latitude,
        longitude: place.longitude,
        accuracy: place.accuracy,
      }
    })
  }

  // No ORDER BY: index entries with equal keys are stored in rowid order, so rows come in id order
  // already, and an ORDER BY made SQLite sort anyway (7 µs of a 9 µs lookup).
  private readonly byCodeStmt: Statement<PlaceRow, [string, string]>
  /** Existence only (batch validate): one index probe, no rows read, however many places share the code. */
  private readonly codeExistsStmt: Statement<{ found: number }, [string, string]>

  /**
   * The first spelling of `input` the data holds, trying those the country's format allows, then the
   * district part of a full code when the data holds only districts (GB outward codes, CA FSAs, NL
   * digits, US ZIP of ZIP+4); `fetch` reads what the caller needs for a spelling, or null.
   */
  private firstHeld<T>(system: PostalSystem, input: string, fetch: (code: string) => T | null): { code: string; found: T } | null {
    if (!input.trim() || input.length > 64) return null
    const candidates = codeCandidates(input, system.alpha2, system.pattern)
    for (const code of candidates) {
      const found = fetch(code)
      if (found !== null) return { code, found }
    }
    for (const full of candidates) {
      const district = districtOf(full)
      const found = district ? fetch(district) : null
      if (found !== null) return { code: district!, found }
    }
    return null
  }

  /** Records of one code (see `firstHeld` for the spellings tried). */
  private resolve(system: PostalSystem, input: string): { code: string; records: PostalRecord[] } | null {
    const held = this.firstHeld(system, input, (code) => {
      const rows = this.byCodeStmt.all(system.alpha2, code)
      return rows.length ? rows : null
    })
    return held && { code: held.code, records: this.withAdmins(held.found) }
  }

  /** The spelling of one code the data holds, without reading its records. */
  private held(system: PostalSystem, input: string): string | null {
    return this.firstHeld(system, input, (code) => this.codeExistsStmt.get(system.alpha2, code))?.code ?? null
  }

  lookup(country: string, code: string): { system: PostalSystem; records: PostalRecord[] } {
    const system = this.withData(country)
    const found = this.resolve(system, code)
    if (!found) {
      throw notFound(`No postal code ${JSON.stringify(code)} in ${system.name} (${system.alpha2}).`, {
        reason: 'postal_code_not_found',
        country_code: system.alpha2,
        postal_code: code,
      })
    }
    return { system, records: found.records }
  }

  codes(country: string, page: Page): Paged<Static<typeof PostalCodeSchema>> {
    const system = this.withData(country)
    const items = this.db
      .query(
        `SELECT c.postal_code, p.place_name, a.admin_name1 AS admin_name FROM codes c JOIN places p ON p.id = c.first_id JOIN admins a ` +
          `ON a.id = p.admin_id
         WHERE c.country = ? AND c.seq >= ? AND c.seq < ? ORDER BY c.seq`,
      )
      .all(system.alpha2, page.offset, page.offset + page.limit) as any[]
    return { total: system.totalCodes, items }
  }

  search(country: string, filters: SearchFilters, page: Page): Paged<PostalRecord> {
    const q = filters.q !== undefined ? foldName(filters.q) : ''
    const prefix = filters.prefix !== undefined ? filters.prefix.trim().toUpperCase().replace(/\s+/g, ' ') : ''
    const admin = filters.admin_code?.trim() ?? ''
    if (!q && !prefix && !admin)
      throw invalid('q', 'give at least one of q (place name), prefix (postal code prefix) or admin_code', 'query')
    const system = this.withData(country)
    const where = ['p.country = ?']
    const args: (string | number)[] = [system.alpha2]
    if (q) {
      where.push('p.place_folded >= ? AND p.place_folded < ?')
      args.push(q, prefixEnd(q))
    }
    if (prefix) {
      where.push('p.postal_code >= ? AND p.postal_code < ?')
      args.push(prefix, prefixEnd(prefix))
    }
    if (admin) {
      where.push('p.admin_id IN (SELECT id FROM admins WHERE country = ? AND admin_code1 = ? COLLATE NOCASE)')
      args.push(system.alpha2, admin)
    }
    // Every row either statement examines (the index range SQLite chose, the rows it sorts or skips
    // for OFFSET) is spent from the request's budget; a counted row is read from the index alone and
    // costs about a quarter of one the page query reads, sorts or skips (measured 0.06 against 0.26 µs).
    const condition = where.join(' AND ')
    const given = (['q', 'prefix', 'admin_code'] as const).filter((f) => filters[f] !== undefined)
    const narrow = [...given, ...(page.offset ? ['offset'] : [])].map((field) => ({ in: 'query' as const, field }))
    return this.metered('This search', narrow, 'a longer q or prefix, an admin_code, or a smaller offset', () => {
      const total = (
        this.db.query(`SELECT COUNT(*) AS n FROM places p WHERE work_unit(0.25, p.id) AND ${condition}`).get(...args) as { n: number }
      ).n
      const items =
        total > page.offset
          ? this.withAdmins(
              this.db
                .query(`${PLACES} WHERE work_unit(1, p.id) AND ${condition} ORDER BY p.postal_code, p.place_folded, p.id LIMIT ? OFFSET ?`)
                .all(...args, page.limit, page.offset) as PlaceRow[],
            )
          : []
      return { total, items }
    })
  }

  /**
   * Runs `fn` under a fresh work budget. Over budget it stops where the work is (inside SQLite's scan or
   * the polygon loop) with a 422 naming the inputs to narrow and how.
   */
  private metered<T>(what: string, narrow: Omit<FieldError, 'message'>[], advice: string, fn: () => T): T {
    const limit = this.workBudget
    const message = `narrow it: ${advice}`
    // Inline (see `anywhere`), running out of the smaller inline budget means: run it on a worker.
    const inline = this.inlineWork < limit ? this.inlineWork : undefined
    const over = () =>
      inline !== undefined
        ? new NotInline()
        : new AlmanacError(
            'invalid',
            `${what} needs more than ${limit.toLocaleString('en')} rows read, the work budget of one request; ${message}.`,
            {
              errors: narrow.map((f) => ({ ...f, message })),
              extra: { reason: 'work_budget_exceeded', work_budget: limit },
            },
          )
    const budget = new WorkBudget(inline ?? limit, over)
    try {
      return this.meter.run(budget, fn)
    } finally {
      this.lastWork = budget.spent
    }
  }

  /** Units of work the last search, nearby or within spent (for measurement and tests). */
  lastWork = 0

  /** The work budget of the call `anywhere` is running inline (Infinity otherwise: the whole budget applies). */
  private inlineWork = Infinity

  /** Where queries too costly for the event loop run (index.ts sets it); unset, everything runs inline. */
  offload: { pool: QueryPool; inlineWork: number } | undefined

  /** A search, nearby or within by name (the routes and the query worker run them so). */
  heavy<M extends Heavy>(method: M, args: Parameters<PostalService[M]>): Paged<PostalRecord> {
    return (this[method] as (...a: Parameters<PostalService[M]>) => Paged<PostalRecord>)(...args)
  }

  /**
   * A search, nearby or within, or what is made of one (`inline`), on the event loop under `offload.inlineWork`
   * units (most queries: a few hundred rows); when that runs out, the worker's `job` (the same query, by name,
   * made into the same answer there) under the whole budget for `caller`. The count of work depends only on
   * the input and the data, so the answer, or the 422, is the one a whole-budget run on the event loop gives.
   */
  anywhere<R>(inline: () => R, job: { method: string; args: unknown[] }, caller?: string): R | Promise<R> {
    const offload = this.offload
    if (!offload) return inline()
    return inlineOr(
      () => {
        this.inlineWork = offload.inlineWork
        try {
          return inline()
        } finally {
          this.inlineWork = Infinity
        }
      },
      () => offload.pool.run<R>(job.method, job.args, caller),
    )
  }

  /** Records by id, in the order of `ids`. */
  private recordsInOrder(ids: number[]): PostalRecord[] {
    if (!ids.length) return []
    const rows = this.withAdmins(
      this.db.query(`${PLACES} WHERE p.id IN (SELECT value FROM json_each(?))`).all(JSON.stringify(ids)) as PlaceRow[],
    )
    const byId = new Map(rows.map((r) => [r.id, r]))
    return ids.map((id) => byId.get(id)!)
  }

  nearby(country: string, at: { lat: number; lng: number; radius_km: number }, page: Page): Paged<PostalRecord> {
    const { lat, lng, radius_km } = at
    if (!(lat >= -90 && lat <= 90)) throw invalid('lat', `latitude ${lat} is outside -90..90`)
    if (!(lng >= -180 && lng <= 180)) throw invalid('lng', `longitude ${lng} is outside -180..180`)
    if (!(radius_km > 0 && radius_km <= NEARBY_MAX_RADIUS_KM))
      throw invalid('radius_km', `must be greater than 0 and at most ${NEARBY_MAX_RADIUS_KM} km, got ${radius_km}`)
    const system = this.withData(country)
    const narrow = [{ in: 'body' as const, field: 'radius_km' }, ...(page.offset ? [{ in: 'body' as const, field: 'offset' }] : [])]
    return this.metered('This radius query', narrow, 'a smaller radius_km or offset', () => {
      const total = this.spatial.countWithin(system.scope, lat, lng, radius_km)
      if (page.offset >= total) return { total, items: [] }
      const hits = this.spatial.nearest(system.scope, lat, lng, radius_km, page.offset + page.limit, total).slice(page.offset)
      const records = this.recordsInOrder(hits.map((h) => h.id))
      return { total, items: records.map((r, i) => ({ ...r, distance_km: Math.round(hits[i]!.km * 1000) / 1000 })) }
    })
  }

  /** Records inside the polygons, in dataset order (GeoNames' own order, by country then code). */
  within(country: string, geometry: unknown, page: Page): Paged<PostalRecord> {
    const polygons = parsePolygons(geometry)
    const system = this.withData(country)
    const advice = 'a smaller polygon, fewer parts or fewer vertices (or several requests over parts of the area)'
    return this.metered('This polygon', [{ in: 'body', field: 'geometry' }], advice, () => {
      const { total, ids } = this.spatial.within(system.scope, polygons, page.offset + page.limit)
      return { total, items: this.recordsInOrder(ids.slice(page.offset)) }
    })
  }

  /**
   * Format check of one code (GET validate): against the country's regex, in any spelling its format allows;
   * an unknown country, or one without a postal system, is `valid: false`.
   */
  validateFormat(country: string, code: string): Static<typeof FormatCheckSchema> {
    // SPEC Errors: an unknown country in a validate request is not an error but `valid: false`.
    const system = this.find(country)
    if (!system) return { country_code: country.trim().toUpperCase(), postal_code: code.trim(), valid: false }
    const match = this.formatMatch(system, code)
    return { country_code: system.alpha2, postal_code: match ?? code.trim(), valid: match !== null }
  }

  /** Batch check (POST validate): format and existence; an unknown country is false/false, never an error. */
  check(country: string, code: string): FormatCheck {
    const system = this.find(country)
    if (!system) return { country_code: country, postal_code: code, format_valid: false, exists: false }
    const match = this.formatMatch(system, code)
    const held = system.totalRecords ? this.held(system, code) : null
    return { country_code: system.alpha2, postal_code: match ?? held ?? code.trim(), format_valid: match !== null, exists: held !== null }
  }

  /** The first spelling of `code` that the country's regex accepts, or null. */
  private formatMatch(system: PostalSystem & { re: RegExp | null }, code: string): string | null {
    if (!system.re || code.length > 64) return null
    return matchFormat(code, system.alpha2, system.pattern, system.re)
  }
}

/**
 * `format_like`: `*` (or `%`) stands for any run of characters, `@` is accepted for `A`; without a
 * wildcard the pattern must equal one of the country's alternatives.
 */
function formatMatcher(like: string): (alternative: string) => boolean {
  const pattern = like.trim().replace(/@/g, 'A').replace(/%/g, '*')
  return (alternative) => wildcardMatch(pattern, alternative)
}
