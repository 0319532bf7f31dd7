/**
 * Response schemas of the postal results (SPEC "Postal system", "Postal code record", "Postal validation
 * result"), for the OpenAPI document. The forms differ by field names and by what Form A adds.
 */
import { t } from 'elysia'
import { nullable } from '../../http/reply/schemas.ts'

const countryCode = t.String({ description: 'ISO 3166-1 alpha-2 code.', examples: ['US'] })
const postalCode = t.String({ examples: ['90210'] })
const format = nullable(
  t.String(),
  'Pattern: `#` a digit, `A` a letter; alternatives separated by ` / `. Null for a country without postal codes.',
)
const regex = nullable(t.String(), 'Regular expression a valid code matches (GeoNames); null without a postal system.')
const totalCodes = t.Integer({ minimum: 0, description: 'Distinct postal codes in the data.' })

export const PostalSystemSchemas = {
  enveloped: t.Object({
    country: t.String({ description: 'Country name.', examples: ['United States'] }),
    country_code: countryCode,
    format,
    regex,
    total_codes: totalCodes,
    total_records: t.Integer({ minimum: 0, description: 'Records (code and place pairs) in the data.' }),
  }),
  /** The list item; the single-country response adds `total_codes`. */
  bare: t.Object({ country_code: countryCode, country_name: t.String({ examples: ['United States'] }), format, regex }),
}

export const PostalSystemDetailSchemas = {
  enveloped: PostalSystemSchemas.enveloped,
  bare: t.Object({ ...PostalSystemSchemas.bare.properties, total_codes: totalCodes }),
}

const admin = (what: string) => ({
  name: nullable(t.String(), `${what} name; null when absent.`),
  code: nullable(t.String(), `${what} code; null when absent.`),
})
const [admin1, admin2, admin3] = [
  admin('First-level division (state)'),
  admin('Second-level division (county)'),
  admin('Third-level division (municipality)'),
]
// Nullable: the build keeps a row without valid coordinates (unindexed, so never in a nearby or within answer).
const latitude = nullable(
  t.Number({ minimum: -90, maximum: 90, examples: [34.0901] }),
  'Latitude; null for a place the data gives without valid coordinates.',
)
const longitude = nullable(
  t.Number({ minimum: -180, maximum: 180, examples: [-118.4065] }),
  'Longitude; null for a place the data gives without valid coordinates.',
)
const placeName = t.String({ examples: ['Beverly Hills'] })

const RECORD_A = {
  postal_code: postalCode,
  place_name: placeName,
  // Named member by member (not by computed keys), so the schema's static type names them.
  admin_name1: admin1.name,
  admin_code1: admin1.code,
  admin_name2: admin2.name,
  admin_code2: admin2.code,
  admin_name3: admin3.name,
  admin_code3: admin3.code,
  latitude,
  longitude,
  accuracy: nullable(t.Integer(), 'GeoNames accuracy: 1 estimated, 4 GeoNames id, 6 centroid of the area (null when unknown).'),
}
const RECORD_B = {
  postal_code: postalCode,
  country_code: countryCode,
  place_name: placeName,
  admin_name: nullable(t.String(), 'First-level division name.'),
  admin_code: nullable(t.String(), 'First-level division code.'),
  latitude,
  longitude,
}
const distance = { distance_km: t.Number({ minimum: 0, description: 'Haversine distance from the query point, km.' }) }

export const PostalRecordSchemas = { enveloped: t.Object(RECORD_A), bare: t.Object(RECORD_B) }
export const NearbyRecordSchemas = { enveloped: t.Object({ ...RECORD_A, ...distance }), bare: t.Object({ ...RECORD_B, ...distance }) }

export const PostalCodeSchema = t.Object({
  postal_code: postalCode,
  place_name: placeName,
  admin_name: nullable(t.String(), 'First-level division name.'),
})

export const PostalCheckSchemas = {
  enveloped: t.Object({
    postal_code: postalCode,
    country_code: t.String({ description: 'The country as sent, upper-cased.' }),
    format_valid: t.Boolean({ description: "Matches the country's regex." }),
    exists: t.Boolean({ description: 'Present in the data.' }),
  }),
  bare: t.Object({
    country_code: t.String({ description: 'The country as sent, upper-cased.' }),
    postal_code: postalCode,
    valid: t.Boolean({ description: 'format_valid and exists.' }),
    format_valid: t.Boolean({ description: "Matches the country's regex." }),
    exists: t.Boolean({ description: 'Present in the data.' }),
  }),
}

export const FormatCheckSchema = t.Object({
  country_code: t.String({
    description: 'ISO 3166-1 alpha-2 code; for an unknown country, the code as sent, upper-cased.',
    examples: ['US'],
  }),
  postal_code: postalCode,
  valid: t.Boolean({
    description:
      "The code matches the country's format (existence is not checked); false for an unknown country or one without postal codes " +
      '(not an error: the answer is still 200).',
  }),
})

/** Form A siblings of nearby/within lists. */
export const SPATIAL_SIBLINGS = {
  total_count: t.Integer({ minimum: 0, description: 'Matches before paging.' }),
  limit: t.Integer({ minimum: 1 }),
  offset: t.Integer({ minimum: 0 }),
}
