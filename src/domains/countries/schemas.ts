/**
 * Response schemas of countries and subdivisions (SPEC "Country", "Subdivision", "Code validation
 * result"), for the OpenAPI document. Form A spells the codes `alpha_2`/`alpha_3`, Form B `alpha2`/`alpha3`.
 */
import { t, type TSchema } from 'elysia'
import { nullable } from '../../http/schemas.ts'

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

const codes = (form: 'enveloped' | 'bare'): Record<string, TSchema> => (form === 'enveloped' ? { alpha_2: alpha2, alpha_3: alpha3 } : { alpha2, alpha3 })

export const SubdivisionSchema = t.Object({
  code: t.String({ description: 'ISO 3166-2 code.', examples: ['FR-IDF'] }),
  name: t.String({ examples: ['Île-de-France'] }),
  type: t.String({ description: 'Subdivision category as ISO 3166-2 names it (State, Province, Region, …).', examples: ['Metropolitan region'] }),
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
  enveloped: t.Object({ ...codes('enveloped'), ...COUNTRY }),
  bare: t.Object({ ...codes('bare'), ...COUNTRY }),
}

export const CountryDetailSchemas = {
  enveloped: t.Object({ ...codes('enveloped'), ...COUNTRY, ...DETAIL, subdivisions: t.Array(SubdivisionSchema, { description: 'Every ISO 3166-2 subdivision of the country (Form A only).' }) }),
  bare: t.Object({ ...codes('bare'), ...COUNTRY, ...DETAIL }),
}

export const CodeValidationSchema = t.Object({
  code: t.String({ description: 'The code as sent.' }),
  valid: t.Boolean(),
  name: nullable(t.String(), 'Name of the country or subdivision; null when the code is not valid.'),
})
