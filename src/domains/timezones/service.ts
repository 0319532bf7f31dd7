/**
 * The timezones service over the compiled tzdata: name and abbreviation resolution, the timezone record,
 * the list, conversion and difference. Instants are seconds since the epoch; every function takes `now`
 * so callers (and tests) decide what "current" means.
 */
import { readFileSync } from 'node:fs'
import type { Static } from 'elysia'
import { nearest } from '../../lib/did-you-mean.ts'
import { AlmanacError, invalid } from '../../lib/errors.ts'
import type { TimezonesArtifact } from './artifacts.ts'
import { daysFromCivil, daysInMonth } from './calendar.ts'
import { formatDate, formatDifference, formatOffset, formatTime12Long, formatTime12Short, formatTime24 } from './format.ts'
import { Zone } from './zone.ts'
import type { LocalTimeType } from './tzif.ts'
import type { ConversionSchema, DifferenceSchema, MOMENT, TimezoneListItemSchema, TimezoneRecordSchema } from './schemas.ts'

/** A name as the caller may use it: a zone, or a link answering under its own name. */
export interface NamedZone {
  name: string
  zone: Zone
  /** The zone a link points to; undefined for a zone. */
  linkTo?: string
  countries: string[]
}

/** What a request's `from`/`to`/`tz_name` resolved to. */
export interface Resolved extends NamedZone {
  /** The abbreviation the caller gave, when the name was one. */
  abbreviation?: string
}

export interface AbbreviationUse {
  abbreviation: string
  offsets: number[]
  /** Zones (not links) using the abbreviation within the window, sorted by name. */
  zones: string[]
  /** The zone a single-offset abbreviation answers with. */
  chosen?: string
}

// The records are the responses in both forms (there is no presenter): typed by the schemas the routes declare.
export type TimezoneRecord = Static<typeof TimezoneRecordSchema>

/**
 * Members beyond the SPEC's, named as worldtimeapi names them: the instant in ISO 8601 with the local
 * offset, Unix time, the current daylight-saving period and the next transition (worldtimeapi has no such
 * member; its users compute it).
 */
export type TimezoneMoment = Pick<TimezoneRecord, keyof typeof MOMENT>

export type TimezoneListItem = Static<typeof TimezoneListItemSchema>
export type Conversion = Static<typeof ConversionSchema>
export type Difference = Static<typeof DifferenceSchema>

/** How many changes are walked at most looking for a visible change or the edge of a DST period. */
const MAX_WALK = 64

const sameType = (a: LocalTimeType, b: LocalTimeType) => a.offset === b.offset && a.isDst === b.isDst && a.abbreviation === b.abbreviation

/** `2026-03-08T07:30:00Z` */
export const isoUtc = (t: number) => `${formatDate(t)}T${formatTime24(t)}Z`

/** The first change after `t` that changes what a clock shows (tzdata has changes that change nothing). */
export function nextVisibleChange(zone: Zone, t: number): { at: number; type: LocalTimeType } | undefined {
  const here = zone.typeAt(t)
  for (let i = 0, from = t; i < MAX_WALK; i++) {
    const c = zone.nextChange(from)
    if (!c || !sameType(c.type, here)) return c
    from = c.at
  }
  return undefined
}

/** Start and end (exclusive) of the daylight-saving period around `t`, or nulls outside DST. */
export function dstPeriod(zone: Zone, t: number): { from: number | null; until: number | null } {
  if (!zone.typeAt(t).isDst) return { from: null, until: null }
  let from: number | null = null
  for (let i = 0, c = zone.previousChange(t); c && i < MAX_WALK; i++, c = zone.previousChange(c.at - 1)) {
    from = c.at
    if (!zone.typeAt(c.at - 1).isDst) break
  }
  let until: number | null = null
  for (let i = 0, at = t; i < MAX_WALK; i++) {
    const c = zone.nextChange(at)
    if (!c) break
    if (!c.type.isDst) {
      until = c.at
      break
    }
    at = c.at
  }
  return { from, until }
}

function moment(zone: Zone, type: LocalTimeType, now: number): TimezoneMoment {
  const wall = now + type.offset
  const dst = dstPeriod(zone, now)
  const next = nextVisibleChange(zone, now)
  return {
    datetime: `${formatDate(wall)}T${formatTime24(wall)}${formatOffset(type.offset)}`,
    utc_datetime: isoUtc(now),
    unixtime: now,
    dst_from: dst.from === null ? null : isoUtc(dst.from),
    dst_until: dst.until === null ? null : isoUtc(dst.until),
    next_transition: next
      ? {
          at: isoUtc(next.at),
          unixtime: next.at,
          utc_offset: formatOffset(next.type.offset),
          abbreviation: next.type.abbreviation,
          is_dst: next.type.isDst,
        }
      : null,
  }
}

/** Abbreviations are read over the coming year: a zone's standard and daylight names both count. */
const ABBREVIATION_WINDOW = 366 * 86400
/** The abbreviation table is recomputed when it is older than this (a long-running server crosses rule changes). */
const ABBREVIATION_REFRESH = 86400

/**
 * tzdata says which zones use an abbreviation, not which one people mean by it. When an abbreviation has
 * one offset but several zones, the answer is the first of these that uses it (the city most callers
 * mean: EST/EDT New York, CET/CEST Paris, AEST Sydney …); abbreviations none of these use fall back to
 * the rule in principalZone.
 */
export const PRINCIPAL_ZONES = [
  'Etc/UTC',
  'America/New_York',
  'America/Chicago',
  'America/Denver',
  'America/Los_Angeles',
  'America/Anchorage',
  'Pacific/Honolulu',
  'America/Halifax',
  'America/St_Johns',
  'America/Puerto_Rico',
  'Europe/London',
  'Europe/Paris',
  'Europe/Athens',
  'Europe/Lisbon',
  'Europe/Moscow',
  'Africa/Johannesburg',
  'Africa/Lagos',
  'Africa/Nairobi',
  'Africa/Maputo',
  'Asia/Tokyo',
  'Asia/Seoul',
  'Asia/Jakarta',
  'Asia/Karachi',
  'Asia/Jerusalem',
  'Australia/Sydney',
  'Australia/Adelaide',
  'Pacific/Auckland',
  'Pacific/Guam',
  'Pacific/Pago_Pago',
]

/**
 * Abbreviations tzdata shares between offsets but that the SPEC names as accepted, with the meaning
 * callers intend. Since tzdata 2024b Asia/Manila writes PST (+08:00), which would make the SPEC's own
 * example ambiguous; Philippine callers can name Asia/Manila.
 */
export const CONVENTIONAL_ABBREVIATIONS: Record<string, string> = { PST: 'America/Los_Angeles' }

const isNumericAbbreviation = (a: string) => /^[+-]/.test(a)

/** The service over the compiled artifact at `path` (the domain's only way to make one). */
export function openTimezonesService(path: string): TimezonesService {
  return new TimezonesService(JSON.parse(readFileSync(path, 'utf8')))
}

/** The last part of a zone name: `New_York` of `America/New_York`. */
const cityOf = (name: string) => name.slice(name.lastIndexOf('/') + 1)

export class TimezonesService {
  readonly version: string
  private readonly byName = new Map<string, NamedZone>()
  /** Every accepted name in tzdata's spelling, sorted. */
  readonly names: string[]
  private readonly countryNames: Record<string, string>
  /** lower-case region -> its names in order */
  private readonly byRegion = new Map<string, string[]>()
  private readonly regionNames: string[]
  private abbreviations?: { at: number; table: Map<string, AbbreviationUse> }

  constructor(artifact: TimezonesArtifact) {
    this.version = artifact.version
    this.countryNames = artifact.countryNames
    const zones = new Map<string, Zone>()
    for (const [name, stored] of Object.entries(artifact.zones)) zones.set(name, new Zone(name, stored))
    for (const [name, zone] of zones) this.byName.set(name.toLowerCase(), { name, zone, countries: artifact.countries[name] ?? [] })
    for (const [name, target] of Object.entries(artifact.links)) {
      this.byName.set(name.toLowerCase(), { name, zone: zones.get(target)!, linkTo: target, countries: artifact.countries[name] ?? [] })
    }
    this.names = [...this.byName.values()].map((z) => z.name).sort()
    for (const name of this.names) {
      const slash = name.indexOf('/')
      if (slash < 0) continue
      const region = name.slice(0, slash)
      const inRegion = this.byRegion.get(region.toLowerCase()) ?? []
      this.byRegion.set(region.toLowerCase(), inRegion)
      inRegion.push(name)
    }
    this.regionNames = [...new Set(this.names.filter((n) => n.includes('/')).map((n) => n.slice(0, n.indexOf('/'))))].sort()
  }

  /** A zone or link by name, case-insensitively. */
  zoneNamed(name: string): NamedZone | undefined {
    return this.byName.get(name.toLowerCase())
  }

  /**
   * The abbreviation table: every non-numeric abbreviation some zone uses between `now` and a year later,
   * with its offsets and zones. Cached for a day.
   */
  abbreviationTable(now: number): Map<string, AbbreviationUse> {
    if (this.abbreviations && Math.abs(now - this.abbreviations.at) < ABBREVIATION_REFRESH) return this.abbreviations.table
    const uses = new Map<string, { offsets: Set<number>; zones: Map<string, { standard: boolean }> }>()
    for (const entry of this.byName.values()) {
      if (entry.linkTo) continue
      for (const type of typesBetween(entry.zone, now, now + ABBREVIATION_WINDOW)) {
        if (isNumericAbbreviation(type.abbreviation)) continue
        const key = type.abbreviation.toUpperCase()
        const use = uses.get(key) ?? { offsets: new Set(), zones: new Map() }
        uses.set(key, use)
        use.offsets.add(type.offset)
        const seen = use.zones.get(entry.name)
        use.zones.set(entry.name, { standard: (seen?.standard ?? false) || !type.isDst })
      }
    }
    const table = new Map<string, AbbreviationUse>()
    for (const [key, use] of uses) {
      const zones = [...use.zones.keys()].sort()
      const offsets = [...use.offsets].sort((a, b) => a - b)
      const conventional = CONVENTIONAL_ABBREVIATIONS[key]
      const chosen =
        offsets.length === 1 ? this.principalZone(zones, use.zones) : conventional && use.zones.has(conventional) ? conventional : undefined
      table.set(key, { abbreviation: key, offsets, zones, chosen })
    }
    this.abbreviations = { at: now, table }
    return table
  }

  /**
   * The zone a single-offset abbreviation answers with: the first of PRINCIPAL_ZONES that uses it, else a
   * zone that uses it as standard time, then the zone most names lead to (its own name, its links, the
   * countries zone1970.tab/zone.tab give it), then the first in alphabetical order.
   */
  private principalZone(zones: string[], uses: Map<string, { standard: boolean }>): string {
    const principal = PRINCIPAL_ZONES.find((z) => uses.has(z))
    if (principal) return principal
    const weight = new Map<string, number>()
    for (const entry of this.byName.values()) {
      const zone = entry.linkTo ?? entry.name
      if (uses.has(zone)) weight.set(zone, (weight.get(zone) ?? 0) + 1 + entry.countries.length)
    }
    return [...zones].sort(
      (a, b) => Number(uses.get(b)!.standard) - Number(uses.get(a)!.standard) || weight.get(b)! - weight.get(a)! || (a < b ? -1 : 1),
    )[0]!
  }

  /**
   * A name from a request: zone or link names first (so EST, GMT, UTC, CET are zones), then abbreviations.
   * Unknown -> 404 naming it; an abbreviation with several offsets -> 400 listing its zones.
   */
  resolve(input: string, now: number, parameter = 'tz_name'): Resolved {
    const trimmed = input.trim()
    // No tz name has a space, but an unencoded `+` in a query string arrives as one (Etc/GMT+5).
    const named = this.zoneNamed(trimmed) ?? (trimmed.includes(' ') ? this.zoneNamed(trimmed.replaceAll(' ', '+')) : undefined)
    if (named) return named
    const use = this.abbreviationTable(now).get(trimmed.toUpperCase())
    if (use?.chosen) return { ...this.zoneNamed(use.chosen)!, abbreviation: use.abbreviation }
    if (use) {
      throw new AlmanacError(
        'ambiguous',
        `${parameter}: the abbreviation ${use.abbreviation} is used with ${use.offsets.length} different UTC offsets ` +
          `(${use.offsets.map(formatOffset).join(', ')}); name one of its IANA zones instead.`,
        {
          extra: { abbreviation: use.abbreviation, offsets: use.offsets.map(formatOffset), zones: use.zones },
          errors: [
            { in: parameter === 'tz_name' ? 'path' : 'query', field: parameter, message: `ambiguous abbreviation ${use.abbreviation}` },
          ],
        },
      )
    }
    const near = this.nearestName(trimmed)
    const guess = near ? ` (did you mean ${near}?)` : ''
    throw new AlmanacError(
      'not_found',
      `${parameter}: unknown timezone ${JSON.stringify(trimmed)}: not an IANA zone or link name, nor an abbreviation in ` +
        `current use${guess}.`,
      {
        extra: { [parameter]: trimmed },
        errors: [{ in: parameter === 'tz_name' ? 'path' : 'query', field: parameter, message: `unknown timezone${guess}` }],
      },
    )
  }

  /**
   * The accepted name nearest one that is none, for its 404: `Europe/Berln` and `berlin` mean Europe/Berlin,
   * `New York` America/New_York (a city alone names the zone, not a link, that ends with it). No name is
   * over 64 characters, so a longer input is near none.
   */
  nearestName(input: string): string | undefined {
    if (input.length > 64) return undefined
    const spelled = input.replaceAll(' ', '_')
    const whole = nearest(spelled, this.names)
    if (whole) return whole
    const byCity = this.zonesByCity()
    const city = nearest(cityOf(spelled), byCity.keys())
    return city && byCity.get(city)
  }

  /** A zone name by its last part (a zone rather than a link where both end so), made at the first unknown name. */
  private byCity: Map<string, string> | undefined
  private zonesByCity(): Map<string, string> {
    if (this.byCity) return this.byCity
    const byCity = new Map<string, string>()
    const isLink = (name: string) => this.byName.get(name.toLowerCase())!.linkTo !== undefined
    for (const name of this.names) {
      const held = byCity.get(cityOf(name))
      if (!held || (isLink(held) && !isLink(name))) byCity.set(cityOf(name), name)
    }
    this.byCity = byCity
    return byCity
  }

  record(input: string, now: number): TimezoneRecord {
    const z = this.resolve(input, now)
    const type = z.zone.typeAt(now)
    const wall = now + type.offset
    return {
      timezone: z.name,
      abbreviation: type.abbreviation,
      utc_offset: formatOffset(type.offset),
      is_dst: type.isDst,
      current_time_24h: formatTime24(wall),
      current_time_12h: formatTime12Short(wall),
      current_date: formatDate(wall),
      country_codes: z.countries,
      ...moment(z.zone, type, now),
    }
  }

  /** Distinct first path segments (`Africa`, `America`, `Etc`, `US` …). */
  regions(): string[] {
    return this.regionNames
  }

  list(
    filter: { region?: string; country?: string; limit: number; offset: number },
    now: number,
  ): { total: number; items: TimezoneListItem[] } {
    let names = this.names
    if (filter.region !== undefined) {
      const inRegion = this.byRegion.get(filter.region.trim().toLowerCase())
      if (!inRegion)
        throw invalid('region', `unknown region ${JSON.stringify(filter.region)}; regions: ${this.regions().join(', ')}`, 'query')
      names = inRegion
    }
    if (filter.country !== undefined) {
      const code = filter.country.trim().toUpperCase()
      if (!this.countryNames[code]) throw invalid('country', `unknown ISO 3166-1 alpha-2 code ${JSON.stringify(filter.country)}`, 'query')
      names = names.filter((n) => this.zoneNamed(n)!.countries.includes(code))
    }
    const items = names.slice(filter.offset, filter.offset + filter.limit).map((name) => {
      const z = this.zoneNamed(name)!
      const type = z.zone.typeAt(now)
      return {
        timezone: z.name,
        utc_offset: formatOffset(type.offset),
        abbreviation: type.abbreviation,
        is_dst: type.isDst,
        country_codes: z.countries,
        link_to: z.linkTo ?? null,
      }
    })
    return { total: names.length, items }
  }

  /**
   * Converts wall-clock `time` on `date` in `from` to `to`. Without a date, today's date in `from` is
   * used. Skipped and repeated wall times follow Zone.instantOf's rule and are flagged in from_time_status.
   */
  convert(q: { from: string; to: string; time: string; date?: string }, now: number): Conversion {
    const seconds = parseTime(q.time)
    const days = q.date === undefined ? undefined : parseDate(q.date)
    const from = this.resolve(q.from, now, 'from')
    const to = this.resolve(q.to, now, 'to')
    const day = days ?? Math.floor((now + from.zone.typeAt(now).offset) / 86400)
    const { instant, status } = from.zone.instantOf(day * 86400 + seconds)
    const fromType = from.zone.typeAt(instant)
    const toType = to.zone.typeAt(instant)
    const fromWall = instant + fromType.offset
    const toWall = instant + toType.offset
    return {
      from_timezone: from.name,
      to_timezone: to.name,
      from_time_12h: formatTime12Long(fromWall),
      to_time_12h: formatTime12Long(toWall),
      from_time_24h: formatTime24(fromWall),
      to_time_24h: formatTime24(toWall),
      from_date: formatDate(fromWall),
      to_date: formatDate(toWall),
      from_utc_offset: formatOffset(fromType.offset),
      to_utc_offset: formatOffset(toType.offset),
      from_abbreviation: fromType.abbreviation,
      to_abbreviation: toType.abbreviation,
      from_time_status: status,
      utc_time: `${formatDate(instant)}T${formatTime24(instant)}Z`,
    }
  }

  /** How far `to` is ahead of `from` now (negative when behind). */
  difference(q: { from: string; to: string }, now: number): Difference {
    const from = this.resolve(q.from, now, 'from')
    const to = this.resolve(q.to, now, 'to')
    const a = from.zone.typeAt(now)
    const b = to.zone.typeAt(now)
    const diff = b.offset - a.offset
    return {
      from_timezone: from.name,
      to_timezone: to.name,
      diff_hours: Math.round((diff / 3600) * 1e6) / 1e6,
      diff_formatted: formatDifference(diff),
      from_current_time_24h: formatTime24(now + a.offset),
      to_current_time_24h: formatTime24(now + b.offset),
      from_utc_offset: formatOffset(a.offset),
      to_utc_offset: formatOffset(b.offset),
    }
  }
}

/** Every local time type a zone uses in [from, to]. */
function typesBetween(zone: Zone, from: number, to: number): LocalTimeType[] {
  const out = [zone.typeAt(from)]
  for (let t = from, guard = 0; guard < 64; guard++) {
    const next = zone.nextChange(t)
    if (!next || next.at > to) break
    out.push(next.type)
    t = next.at
  }
  return out
}

/** `HH:MM` or `HH:MM:SS` (24-hour; one-digit hours accepted) -> seconds after midnight; else a 422 naming `time`. */
export function parseTime(text: string): number {
  const m = /^([01]?\d|2[0-3]):([0-5]\d)(?::([0-5]\d))?$/.exec(text.trim())
  if (!m) throw invalid('time', `expected a 24-hour time HH:MM (or HH:MM:SS), got ${JSON.stringify(text)}`, 'query')
  return Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3] ?? 0)
}

/** `YYYY-MM-DD` (a real calendar date, years 0001-9999) -> days since the epoch; else a 422 naming `date`. */
export function parseDate(text: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text.trim())
  const bad = (why: string) => invalid('date', `${why}, got ${JSON.stringify(text)}`, 'query')
  if (!m) throw bad('expected a date YYYY-MM-DD')
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])]
  if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) throw bad('no such calendar date')
  return daysFromCivil(y, mo, d)
}
