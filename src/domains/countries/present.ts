/**
 * Canonical countries and subdivisions -> the two response forms of the SPEC. Form B names the codes
 * `alpha2`/`alpha3`; Form A `alpha_2`/`alpha_3` and embeds the subdivisions in the single country.
 */
import type { Static } from 'elysia'
import type { ResponseForm } from '../../http/reply/reply.ts'
import type { CountryDetailSchemas, CountrySchemas, SubdivisionDetailSchema, SubdivisionSchema } from './schemas.ts'
import type { Country, CountryDetail, Subdivision } from './service.ts'

// Typed by the schemas the routes declare, so a presenter cannot drift from the documented contract; each
// form's branch `satisfies` its own, so neither can take the other's shape.
type CountryA = Static<typeof CountrySchemas.enveloped>
type CountryB = Static<typeof CountrySchemas.bare>
type DetailA = Static<typeof CountryDetailSchemas.enveloped>
type DetailB = Static<typeof CountryDetailSchemas.bare>

/** The members both forms share, after the codes each form spells its own way. */
const countryMembers = (c: Country): Omit<CountryB, 'alpha2' | 'alpha3'> => ({
  numeric: c.numeric,
  name: c.name,
  official_name: c.official_name,
  region: c.region,
  sub_region: c.sub_region,
  intermediate_region: c.intermediate_region,
  capital: c.capital,
})

export function presentCountry(c: Country, form: ResponseForm): CountryA | CountryB {
  return form === 'enveloped'
    ? ({ alpha_2: c.alpha2, alpha_3: c.alpha3, ...countryMembers(c) } satisfies CountryA)
    : ({ alpha2: c.alpha2, alpha3: c.alpha3, ...countryMembers(c) } satisfies CountryB)
}

/** The single-country response; Form A also carries `subdivisions` (pass them for that form). */
export function presentCountryDetail(c: CountryDetail, form: ResponseForm, subdivisions: Subdivision[] = []): DetailA | DetailB {
  const detail: Omit<DetailB, keyof CountryB> = {
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
  return form === 'enveloped'
    ? ({
        alpha_2: c.alpha2,
        alpha_3: c.alpha3,
        ...countryMembers(c),
        ...detail,
        subdivisions: subdivisions.map(presentSubdivision),
      } satisfies DetailA)
    : ({ alpha2: c.alpha2, alpha3: c.alpha3, ...countryMembers(c), ...detail } satisfies DetailB)
}

/** A subdivision as a list item: its parent code is included (null at the top level). */
export const presentSubdivision = (s: Subdivision): Static<typeof SubdivisionSchema> => ({
  code: s.code,
  name: s.name,
  type: s.type,
  parent: s.parent,
})

/** The single-subdivision response adds the country's alpha-2 code. */
export const presentSubdivisionDetail = (s: Subdivision): Static<typeof SubdivisionDetailSchema> => ({
  code: s.code,
  name: s.name,
  type: s.type,
  country: s.country,
  parent: s.parent,
})
