/**
 * Country facts beyond ISO 3166, merged at build time: GeoNames countryInfo.txt (area, population, TLD,
 * neighbours, postal code format), world-countries (native names, alternative spellings, latitude and
 * longitude, TLDs), tzdata's zone tables (timezones) and CLDR (first day of the week). Pure functions:
 * build.ts reads the files and stores what `countryFacts` returns as one JSON column.
 */
import { effectiveRegex, specFormat } from '../../lib/postal-formats.ts'

export interface GeoNamesCountry {
  alpha2: string
  area_km2: number | null
  population: number | null
  tld: string | null
  neighbours: string[]
  postalFormat: string
  postalRegex: string
}

/** countryInfo.txt columns (tab-separated, `#` comments, CRLF upstream). */
const COL = { alpha2: 0, area: 6, population: 7, tld: 9, postalFormat: 13, postalRegex: 14, neighbours: 17 } as const

const number = (text: string | undefined) => {
  const n = Number(text?.trim())
  return text?.trim() && Number.isFinite(n) ? n : null
}

export function parseGeoNamesCountries(text: string): Map<string, GeoNamesCountry> {
  const out = new Map<string, GeoNamesCountry>()
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r$/, '')
    if (!line || line.startsWith('#')) continue
    const c = line.split('\t')
    if (c.length < 18 || !/^[A-Z]{2}$/.test(c[COL.alpha2]!))
      throw new Error(`countryInfo.txt: unexpected line ${JSON.stringify(line.slice(0, 80))}`)
    out.set(c[COL.alpha2]!, {
      alpha2: c[COL.alpha2]!,
      area_km2: number(c[COL.area]),
      population: number(c[COL.population]),
      tld: c[COL.tld]!.trim() || null,
      neighbours: c[COL.neighbours]!.split(',')
        .map((s) => s.trim())
        .filter(Boolean),
      postalFormat: c[COL.postalFormat]!.trim(),
      postalRegex: c[COL.postalRegex]!.trim(),
    })
  }
  if (out.size < 200) throw new Error(`countryInfo.txt: only ${out.size} countries found; the file looks truncated`)
  return out
}

/** `zone1970.tab` and `zone.tab` rows -> alpha-2 -> zone names (both tables, as the timezones domain reads them). */
export function zonesByCountry(tables: string[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>()
  for (const text of tables) {
    for (const line of text.split('\n')) {
      if (!line || line.startsWith('#')) continue
      const [codes, , name] = line.split('\t')
      if (!codes || !name) continue
      for (const code of codes.split(',')) {
        let names = out.get(code)
        if (!names) out.set(code, (names = new Set()))
        names.add(name.trim())
      }
    }
  }
  return out
}

const DAYS: Record<string, string> = {
  mon: 'monday',
  tue: 'tuesday',
  wed: 'wednesday',
  thu: 'thursday',
  fri: 'friday',
  sat: 'saturday',
  sun: 'sunday',
}

/** CLDR `weekData.firstDay` -> alpha-2 -> day name; territories CLDR does not list take its world default (`001`). */
export function firstDays(weekData: { supplemental: { weekData: { firstDay: Record<string, string> } } }) {
  const firstDay = weekData.supplemental.weekData.firstDay
  const fallback = DAYS[firstDay['001'] ?? 'mon']!
  return (alpha2: string) => DAYS[firstDay[alpha2] ?? ''] ?? fallback
}

/** The flag emoji: the two regional indicator symbols of the alpha-2 code (how Unicode defines flags). */
export const flagEmoji = (alpha2: string) => String.fromCodePoint(...[...alpha2].map((ch) => 0x1f1e6 + ch.charCodeAt(0) - 65))

export interface WorldFacts {
  name: { native?: Record<string, { official: string; common: string }> }
  altSpellings?: string[]
  latlng?: number[]
  tld?: string[]
}

export interface CountryFacts {
  flag: string
  native_names: Record<string, { common: string; official: string }>
  alt_spellings: string[]
  area_km2: number | null
  population: { value: number; source: string; as_of: string } | null
  borders: string[]
  latitude: number | null
  longitude: number | null
  tlds: string[]
  timezones: string[]
  start_of_week: string
  postal_code: { format: string; regex: string } | null
}

export interface FactInputs {
  alpha2: string
  geonames: GeoNamesCountry | undefined
  world: WorldFacts | undefined
  zones: Set<string> | undefined
  startOfWeek: string
  /** Current ISO alpha-2 codes: neighbours outside them (XK) are left out. */
  current: Set<string>
  /** Date of the GeoNames file the population figure comes from. */
  populationAsOf: string
}

export function countryFacts(i: FactInputs): CountryFacts {
  const g = i.geonames
  const native: CountryFacts['native_names'] = {}
  for (const [language, n] of Object.entries(i.world?.name.native ?? {}).sort(([a], [b]) => (a < b ? -1 : 1)))
    native[language] = { common: n.common, official: n.official }
  const [lat, lng] = i.world?.latlng ?? []
  const format = g?.postalFormat ? specFormat(g.postalFormat) : null
  const regex = g?.postalFormat ? effectiveRegex(g.postalRegex || g.postalFormat.replace(/#/g, '\\d').replace(/@/g, '[A-Z]')) : null
  return {
    flag: flagEmoji(i.alpha2),
    native_names: native,
    alt_spellings: [...new Set(i.world?.altSpellings ?? [])],
    area_km2: g?.area_km2 ?? null,
    population:
      g?.population !== null && g?.population !== undefined
        ? { value: g.population, source: 'GeoNames countryInfo.txt', as_of: i.populationAsOf }
        : null,
    borders: [...new Set((g?.neighbours ?? []).filter((n) => i.current.has(n)))].sort(),
    latitude: typeof lat === 'number' ? lat : null,
    longitude: typeof lng === 'number' ? lng : null,
    tlds: [...new Set([g?.tld, ...(i.world?.tld ?? [])].filter((t): t is string => !!t))],
    timezones: [...(i.zones ?? [])].sort(),
    start_of_week: i.startOfWeek,
    postal_code: format && regex ? { format, regex } : null,
  }
}
