/**
 * The six countries endpoints (SPEC "Countries"): paths and schemas only; the service answers, the
 * presenter shapes. Mounted under /api/v1.
 */
import { Elysia, t } from 'elysia'
import type { Config } from '../../config.ts'
import { requestContext } from '../../http/routing/context.ts'
import { fieldsQuery, pageOf, pageQuery } from '../../http/routing/paging.ts'
import { list, one } from '../../http/reply/reply.ts'
import { routeDetail } from '../../http/routing/route-facts.ts'
import { AlmanacError } from '../../lib/errors.ts'
import { presentCountry, presentCountryDetail, presentSubdivision, presentSubdivisionDetail } from './present.ts'
import { CodeValidationSchema, CountryDetailSchemas, CountrySchemas, SubdivisionDetailSchema, SubdivisionSchema } from './schemas.ts'
import type { CountriesService } from './service.ts'

export const MAX_CODES = 100

const codesBody = (what: string, example: string) =>
  t.Object(
    {
      codes: t.Array(t.String({ maxLength: 64, description: `${what} code, any case (e.g. ${example})` }), {
        minItems: 1,
        maxItems: MAX_CODES,
        description: `${what} codes to check, 1-${MAX_CODES}. Each costs one quota credit.`,
      }),
    },
    { examples: [{ codes: example.split(', ') }] },
  )

const countryCode = t.Object({
  code: t.String({ description: 'ISO 3166-1 alpha-2 (US), alpha-3 (USA) or numeric (840, 076) code; any case.', examples: ['FR'] }),
})
const subdivisionCode = t.Object({ code: t.String({ description: 'ISO 3166-2 code (US-CA, GB-ENG); any case.', examples: ['US-CA'] }) })
const text = (description: string) => t.Optional(t.String({ minLength: 1, maxLength: 100, description }))

/** `GET /countries/validate` reads as a country code; answer it as what it is: the wrong method. */
const notAGetPath = (code: string, path: string) => {
  if (code.toLowerCase() === 'validate')
    throw new AlmanacError('method', `GET is not allowed on ${path}; use POST.`, { headers: { Allow: 'POST' } })
}

export function countriesRoutes(service: CountriesService, config: Config) {
  /** Single-country views by the service's memoized country and form, presented once: nothing changes while open. */
  const views = { enveloped: new WeakMap<object, object>(), bare: new WeakMap<object, object>() }
  const countries = new Elysia({ prefix: '/countries' })
    .use(requestContext(config.responseForm))
    .get(
      '/',
      ({ query, form }) => {
        const page = pageOf(query)
        const found = service.listCountries({ region: query.region, sub_region: query.sub_region, q: query.q }, page)
        return list(
          found.items.map((c) => presentCountry(c, form)),
          { total: found.total },
        )
      },
      {
        query: t.Object({
          region: text(`UN M.49 region, exact and case-insensitive: ${service.regions.join(', ')}.`),
          sub_region: text('UN M.49 sub-region (or intermediate region, e.g. Caribbean), exact and case-insensitive.'),
          q: text(
            'Free text over common, official and ISO names: case- and accent-insensitive, matching word prefixes ("cote d", "united k").',
          ),
          ...pageQuery(config.maxLimit),
          ...fieldsQuery,
        }),
        detail: routeDetail({
          cache: 'reference',
          summary: 'List countries',
          description:
            '`count` is the number of matches before paging. Ordered by name. The forms spell the codes differently: Form A ' +
            '`alpha_2`, `alpha_3`; Form B `alpha2`, `alpha3` (and `fields` takes the spelling of the form answered).',
          response: { name: 'Country', ...CountrySchemas, list: true },
        }),
      },
    )
    .post('/validate', ({ body }) => list(service.validateCountries(body.codes)), {
      body: codesBody('ISO 3166-1 alpha-2, alpha-3 or numeric', 'US, usa, 840'),
      detail: routeDetail({
        summary: 'Validate country codes',
        description: 'Unknown codes give `valid: false, name: null`.',
        cost: { field: 'codes', max: MAX_CODES },
        // 100 codes of 64 characters, 3 bytes each at most: 19.5 KB.
        bodyLimit: 64 * 1024,
        response: { name: 'CodeValidation', enveloped: CodeValidationSchema, list: true, total: false },
      }),
    })
    .get(
      '/:code',
      ({ params, form, path }) => {
        notAGetPath(params.code, path)
        const country = service.country(params.code)
        let view = views[form].get(country)
        if (!view)
          views[form].set(
            country,
            (view = presentCountryDetail(country, form, form === 'enveloped' ? service.allSubdivisions(country.alpha2) : [])),
          )
        return one(view, { stable: true })
      },
      {
        params: countryCode,
        query: t.Object(fieldsQuery),
        detail: routeDetail({
          cache: 'reference',
          summary: 'One country',
          description:
            'A withdrawn code (YU, ANT) is a 404 whose body lists its `successors`. The forms differ: Form A spells the codes ' +
            '`alpha_2`, `alpha_3` and adds `subdivisions` (every one); Form B spells them `alpha2`, `alpha3`.',
          response: { name: 'CountryDetail', ...CountryDetailSchemas },
        }),
      },
    )
    .get(
      '/:code/subdivisions',
      ({ params, query }) => {
        const found = service.subdivisionsOf(params.code, { type: query.type, q: query.q }, pageOf(query))
        return list(found.items.map(presentSubdivision), { total: found.total })
      },
      {
        params: countryCode,
        query: t.Object({
          type: text('Subdivision type, exact and case-insensitive (state, province, region …).'),
          q: text('Free text over subdivision names: case- and accent-insensitive word prefixes.'),
          ...pageQuery(config.maxLimit),
          ...fieldsQuery,
        }),
        detail: routeDetail({
          cache: 'reference',
          summary: "A country's ISO 3166-2 subdivisions",
          description: 'Ordered by code; each item carries its `parent` code (null at the top level).',
          response: { name: 'Subdivision', enveloped: SubdivisionSchema, list: true },
        }),
      },
    )

  const subdivisions = new Elysia({ prefix: '/subdivisions' })
    .use(requestContext(config.responseForm))
    .post('/validate', ({ body }) => list(service.validateSubdivisions(body.codes)), {
      body: codesBody('ISO 3166-2', 'US-CA, gb-eng'),
      detail: routeDetail({
        summary: 'Validate subdivision codes',
        description: 'Unknown codes give `valid: false, name: null`.',
        cost: { field: 'codes', max: MAX_CODES },
        // 100 codes of 64 characters, 3 bytes each at most: 19.5 KB.
        bodyLimit: 64 * 1024,
        response: { name: 'CodeValidation', enveloped: CodeValidationSchema, list: true, total: false },
      }),
    })
    .get(
      '/:code',
      ({ params, path }) => {
        notAGetPath(params.code, path)
        return one(presentSubdivisionDetail(service.subdivision(params.code)))
      },
      {
        params: subdivisionCode,
        query: t.Object(fieldsQuery),
        detail: routeDetail({
          cache: 'reference',
          summary: 'One subdivision',
          description: 'A changed code (MX-DIF) is a 404 whose body lists its `successors` (MX-CMX).',
          response: { name: 'SubdivisionDetail', enveloped: SubdivisionDetailSchema },
        }),
      },
    )

  return new Elysia({ name: 'almanac:countries' }).use(countries).use(subdivisions)
}
