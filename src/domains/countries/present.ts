/**
 * Canonical countries and subdivisions -> the two response forms of the SPEC. Form B names the codes
 * `alpha2`/`alpha3`; Form A `alpha_2`/`alpha_3` and embeds the subdivisions in the single country.
 */
import type { ResponseForm } from '../../http/reply/reply.ts'
import type { Country, CountryDetail, Subdivision } from './service.ts'

export function presentCountry(c: Country, form: ResponseForm) {
  const codes = form === 'enveloped' ? { alpha_2: c.alpha2, alpha_3: c.alpha3 } : { alpha2: c.alpha2, alpha3: c.alpha3 }
  return {
    ...codes,
    numeric: c.numeric,
    name: c.name,
    official_name: c.official_name,
    region: c.region,
    sub_region: c.sub_region,
    intermediate_region: c.intermediate_region,
    capital: c.capital,
  }
}

/** The single-country response; Form A also carries `subdivisions` (pass them for that form). */
export function presentCountryDetail(c: CountryDetail, form: ResponseForm, subdivisions: Subdivision[] = []) {
  const detail = {
    ...presentCountry(c, form),
    languages: c.languages,
    currencies: c.currencies,
    calling_codes: c.calling_codes,
    // Beyond the SPEC, the same in both forms (docs/countries.md lists them).
    flag: c.flag,
    native_names: c.native_names,
    alt_spellings: c.alt_spellings,
    area_km2: c.area_km2,
    population: c.population,
    borders: c.borders,
    latitude: c.latitude,
    longitude: c.longitude,
    tlds: c.tlds,
    timezones: c.timezones,
    start_of_week: c.start_of_week,
    postal_code: c.postal_code,
  }
  return form === 'enveloped' ? { ...detail, subdivisions: subdivisions.map(presentSubdivision) } : detail
}

/** A subdivision as a list item: its parent code is included (null at the top level). */
export const presentSubdivision = (s: Subdivision) => ({ code: s.code, name: s.name, type: s.type, parent: s.parent })

/** The single-subdivision response adds the country's alpha-2 code. */
export const presentSubdivisionDetail = (s: Subdivision) => ({
  code: s.code,
  name: s.name,
  type: s.type,
  country: s.country,
  parent: s.parent,
})

export const COUNTRY_FIELDS = {
  bare: ['alpha2', 'alpha3', 'numeric', 'name', 'official_name', 'region', 'sub_region', 'intermediate_region', 'capital'],
  enveloped: ['alpha_2', 'alpha_3', 'numeric', 'name', 'official_name', 'region', 'sub_region', 'intermediate_region', 'capital'],
} as const
export const SUBDIVISION_FIELDS = ['code', 'name', 'type', 'parent'] as const
