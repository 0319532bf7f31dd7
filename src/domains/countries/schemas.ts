/**
 * Response schemas of countries and subdivisions (SPEC "Country", "Subdivision", "Code validation
 * result"), for the OpenAPI document. Form A spells the codes `alpha_2`/`alpha_3`, Form B `alpha2`/`alpha3`.
 */
import { t } from 'elysia'
import { nullable } from '../../http/reply/schemas.ts'

const alpha2 = t.String({ description: 'ISO 3166-1 alpha-2 code.', examples: ['FR'] })
const alpha3 = t.String({ description: 'ISO 3166-1 alpha-3 code.', examples: ['FRA'] })

const COUNTRY = {
  numeric: t.String({ description: 'ISO 3166-1 numeric code, three digits.', examples: ['250'] }),
  name: t.String({ description: 'Common English name.', examples: ['France'] }),
  official_name: t.String({ description: 'Official English name.', examples: ['French Republic'] }),
  region: nullable(t.String(), 'UN M.49 region (null for Antarctica and a few territories M.49 leaves out).'),
  sub_region: nullable(t.String(), 'UN M.49 sub-region.'),
  intermediate_region: nullable(t.String(), 'UN M.49 intermediate region (e.g. Caribbean), null where M.49 has none.'),
  capital: nullable(t.String(), 'Capital city, null where there is none.'),
}

const DETAIL = {
  languages: t.Array(t.String(), { description: 'Official or main languages, English names.', examples: [['French']] }),
  currencies: t.Array(t.String(), { description: 'ISO 4217 currency codes.', examples: [['EUR']] }),
  calling_codes: t.Array(t.String(), { description: 'International calling codes with a leading plus sign.', examples: [['+33']] }),
}

/** Beyond the SPEC: the same in both forms of the single-country response (docs/countries.md). */
const FACTS = {
  flag: t.String({ description: 'Flag emoji: the two regional indicator symbols of the alpha-2 code.', examples: ['🇫🇷'] }),
  native_names: t.Record(t.String(), t.Object({ common: t.String(), official: t.String() }), {
    description: 'Names in the official languages, keyed by ISO 639-3 code (world-countries).',
    examples: [{ fra: { common: 'France', official: 'République française' } }],
  }),
  alt_spellings: t.Array(t.String(), {
    description: 'Other names and spellings (world-countries).',
    examples: [['FR', 'French Republic', 'République française']],
  }),
  area_km2: nullable(t.Number({ minimum: 0 }), 'Area in km² (GeoNames).'),
  population: nullable(
    t.Object({
      value: t.Integer({ minimum: 0, description: 'Inhabitants.' }),
      source: t.String({ description: 'Where the figure comes from.', examples: ['GeoNames countryInfo.txt'] }),
      as_of: t.String({
        description: 'Date of the source file the figure was read from, YYYY-MM-DD (GeoNames does not record the year of each estimate).',
        examples: ['2026-01-19'],
      }),
    }),
    'Population as GeoNames publishes it; null where it has none.',
  ),
  borders: t.Array(t.String(), {
    description:
      'Alpha-2 codes of the countries sharing a land border (GeoNames neighbours; codes outside ISO 3166-1, such as XK, left out).',
    examples: [['AD', 'BE', 'CH', 'DE', 'ES', 'IT', 'LU', 'MC']],
  }),
  latitude: nullable(t.Number({ minimum: -90, maximum: 90 }), 'Latitude of a representative point (world-countries).'),
  longitude: nullable(t.Number({ minimum: -180, maximum: 180 }), 'Longitude of a representative point (world-countries).'),
  tlds: t.Array(t.String(), { description: 'Country-code top-level domains (GeoNames, then world-countries).', examples: [['.fr']] }),
  timezones: t.Array(t.String(), {
    description:
      "IANA zone names tzdata's zone1970.tab and zone.tab give the country (this server's tzdata, as GET /api/v1/timezones?country= " +
      'lists them).',
    examples: [['Europe/Paris']],
  }),
  start_of_week: t.Union(
    ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'].map((d) => t.Literal(d)),
    { description: 'First day of the week (Unicode CLDR).' },
  ),
  postal_code: nullable(
    t.Object({
      format: t.String({
        description: 'Pattern, as in GET /api/v1/postal: `#` a digit, `A` a letter; alternatives separated by ` / `.',
        examples: ['#####'],
      }),
      regex: t.String({ description: 'Regular expression a whole valid code matches.', examples: ['^(?:(\\d{5}))$'] }),
    }),
    'Postal code format (GeoNames); null for a country without postal codes.',
  ),
}

/** Each form's spelling of the codes, member by member so the schemas' static types name them. */
const CODES = { enveloped: { alpha_2: alpha2, alpha_3: alpha3 }, bare: { alpha2, alpha3 } }

export const SubdivisionSchema = t.Object({
  code: t.String({ description: 'ISO 3166-2 code.', examples: ['FR-IDF'] }),
  name: t.String({ examples: ['Île-de-France'] }),
  type: t.String({
    description: 'Subdivision category as ISO 3166-2 names it (State, Province, Region, …).',
    examples: ['Metropolitan region'],
  }),
  parent: nullable(t.String(), 'Code of the parent subdivision; null at the top level.'),
})

export const SubdivisionDetailSchema = t.Object({
  code: SubdivisionSchema.properties.code,
  name: SubdivisionSchema.properties.name,
  type: SubdivisionSchema.properties.type,
  country: t.String({ description: 'The country, alpha-2.', examples: ['FR'] }),
  parent: SubdivisionSchema.properties.parent,
})

export const CountrySchemas = {
  enveloped: t.Object({ ...CODES.enveloped, ...COUNTRY }),
  bare: t.Object({ ...CODES.bare, ...COUNTRY }),
}

export const CountryDetailSchemas = {
  enveloped: t.Object({
    ...CODES.enveloped,
    ...COUNTRY,
    ...DETAIL,
    ...FACTS,
    subdivisions: t.Array(SubdivisionSchema, { description: 'Every ISO 3166-2 subdivision of the country (Form A only).' }),
  }),
  bare: t.Object({ ...CODES.bare, ...COUNTRY, ...DETAIL, ...FACTS }),
}

export const CodeValidationSchema = t.Object({
  code: t.String({ description: 'The code as sent.' }),
  valid: t.Boolean(),
  name: nullable(t.String(), 'Name of the country or subdivision; null when the code is not valid.'),
})
