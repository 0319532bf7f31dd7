/** The nine postal endpoints: paths and schemas; the answers come from the service. */
import { Elysia, t } from 'elysia'
import type { Config, ResponseForm } from '../../config.ts'
import { requestContext } from '../../http/routing/context.ts'
import { fieldsQuery, namedInteger, pageOf, pageQuery, type Page } from '../../http/routing/paging.ts'
import { invalidFields } from '../../lib/errors.ts'
import { list, type ListMeta, one } from '../../http/reply/reply.ts'
import { MAX_VERTICES } from './geo.ts'
import { presentCheck, presentPage, type PresentedPage, presentRecord, presentSystem } from './present.ts'
import {
  FormatCheckSchema,
  NearbyRecordSchemas,
  PostalCheckSchemas,
  PostalCodeSchema,
  PostalRecordSchemas,
  PostalSystemDetailSchemas,
  PostalSystemSchemas,
  SPATIAL_SIBLINGS,
} from './schemas.ts'
import { type Heavy, NEARBY_MAX_RADIUS_KM, type PostalService, type SearchFilters } from './service.ts'
import { callerOf } from '../../http/edge/exchange.ts'
import { routeDetail } from '../../http/routing/route-facts.ts'

/** `f` of an answer made inline, or of a promised one made on a query worker. */
const then = <T, R>(answer: T | Promise<T>, f: (value: T) => R): R | Promise<R> => (answer instanceof Promise ? answer.then(f) : f(answer))

/** The search filters alone (what a query worker is sent). */
const filters = ({ q, prefix, admin_code }: SearchFilters): SearchFilters => ({ q, prefix, admin_code })

export const SPATIAL_MAX_LIMIT = 1000
const BATCH_MAX = 100
/** How a postal record differs between the forms, said on every route that answers records. */
const RECORD_FORMS =
  'The forms differ: a Form A record has `admin_name1..3`, `admin_code1..3` and `accuracy`; a Form B record has ' +
  '`country_code` and the first level only, as `admin_name` and `admin_code`.'

const countryParam = t.String({
  description: 'ISO 3166-1 alpha-2 or alpha-3 country code, any case (e.g. `US`, `usa`).',
  minLength: 1,
  maxLength: 16,
  examples: ['US'],
})
const postalCodeParam = t.String({
  maxLength: 64,
  description: 'A postal code as written in the country (spaces and case as usual there).',
  examples: ['90210'],
})

/** Form A of nearby/within: `total_count`, `limit`, `offset` beside `data`; Form B `count`/`results`. */
const spatialSiblings = { total: false, envelopedSiblings: SPATIAL_SIBLINGS, bareSiblings: { count: SPATIAL_SIBLINGS.total_count } }

/**
 * `limit`/`offset` of nearby and within, in the body (the SPEC's nearby/within rows) or in the query (its
 * shared behaviour 2 for every list). No schema default: the handler must see which place gave them.
 */
const spatialPage = {
  limit: t.Optional(
    namedInteger(
      'limit',
      1,
      SPATIAL_MAX_LIMIT,
      `Most records to return (1-${SPATIAL_MAX_LIMIT}, default 50); in the body or the query string, not both.`,
    ),
  ),
  offset: t.Optional(
    namedInteger('offset', 0, Number.MAX_SAFE_INTEGER, 'Records to skip (default 0); in the body or the query string, not both.'),
  ),
}

/**
 * A search, nearby or within in the caller's form, wherever it runs (`service.anywhere`): presented here when
 * it ran on the event loop, as JSON text by the query worker that ran it otherwise (present.ts).
 */
function pageIn<M extends Heavy>(
  service: PostalService,
  form: ResponseForm,
  method: M,
  args: Parameters<PostalService[M]>,
  caller?: string,
) {
  return service.anywhere(() => presentPage(service.heavy(method, args), form), { method: 'presented', args: [form, method, args] }, caller)
}

/** The list of a presented page: its items, or their JSON text. */
const pageList = (p: PresentedPage, meta: ListMeta) =>
  list('items' in p ? p.items : null, 'json' in p ? { ...meta, json: () => p.json } : meta)

/** A nearby or within answer: Form A adds `total_count`, `limit`, `offset`; Form B is `count`/`results`. */
const spatialReply = (page: Page) => (p: PresentedPage) =>
  pageList(p, { bare: { count: p.total }, enveloped: { total_count: p.total, limit: page.limit, offset: page.offset } })

/** The page of a nearby/within request: each member from the query or the body; given in both, a 422 naming it. */
function spatialPageOf(query: { limit?: number; offset?: number }, body: { limit?: number; offset?: number }): Page {
  const both = (['limit', 'offset'] as const).filter((name) => query[name] !== undefined && body[name] !== undefined)
  if (both.length)
    throw invalidFields(
      both.map((name) => ({
        in: 'query' as const,
        field: name,
        message: `given both in the query string (${query[name]}) and in the body (${body[name]}); send it in one place`,
      })),
    )
  return pageOf({ limit: query.limit ?? body.limit, offset: query.offset ?? body.offset })
}

export const postalRoutes = (service: PostalService, config: Config) =>
  new Elysia({ prefix: '/postal' })
    .use(requestContext(config.responseForm))
    .get(
      '/',
      ({ query, form }) => {
        const page = pageOf(query)
        const { total, items } = service.listSystems({ hasSystem: query.has_system, formatLike: query.format_like }, page)
        return list(
          items.map((s) => presentSystem(s, form, false)),
          { total },
        )
      },
      {
        query: t.Object({
          has_system: t.Optional(
            t.Boolean({
              description: 'true keeps countries with a postal code system, false those without.',
              error: 'has_system: expected true or false',
            }),
          ),
          format_like: t.Optional(
            t.String({
              maxLength: 64,
              description:
                'Format pattern (`#` digit, `A` or `@` letter); `*` matches any run. Without `*` one of the alternatives must equal it.',
            }),
          ),
          ...pageQuery(config.maxLimit),
          ...fieldsQuery,
        }),
        detail: routeDetail({
          cache: 'reference',
          summary: 'Postal code systems of every country',
          description:
            'The forms differ: Form A names the country `country` and gives `total_codes` and `total_records` on every item; ' +
            'Form B names it `country_name` and gives `total_codes` on the single country only.',
          response: { name: 'PostalSystem', ...PostalSystemSchemas, list: true },
        }),
      },
    )
    .post('/validate', ({ body, form }) => list(body.codes.map((c) => presentCheck(service.check(c.country_code, c.postal_code), form))), {
      body: t.Object(
        {
          codes: t.Array(
            t.Object({
              country_code: t.String({ maxLength: 16, description: 'Alpha-2 or alpha-3; an unknown country is reported false/false.' }),
              postal_code: t.String({ maxLength: 64 }),
            }),
            { minItems: 1, maxItems: BATCH_MAX, description: `Up to ${BATCH_MAX} codes, countries may be mixed.` },
          ),
        },
        {
          examples: [
            {
              codes: [
                { country_code: 'US', postal_code: '90210' },
                { country_code: 'GB', postal_code: 'SW1A 1AA' },
              ],
            },
          ],
        },
      ),
      detail: routeDetail({
        summary: 'Check the format and existence of several postal codes',
        description: 'Each item has `format_valid` and `exists`; Form B items add `valid` (both true).',
        cost: { field: 'codes', max: BATCH_MAX },
        // 100 pairs of 16 + 64 characters, 3 bytes each at most: 27.7 KB.
        bodyLimit: 64 * 1024,
        response: { name: 'PostalCheck', ...PostalCheckSchemas, list: true, total: false },
      }),
    })
    .get('/:country_code', ({ params, form }) => one(presentSystem(service.country(params.country_code), form, true)), {
      params: t.Object({ country_code: countryParam }),
      query: t.Object(fieldsQuery),
      detail: routeDetail({
        cache: 'reference',
        summary: "A country's postal code system",
        description: 'The forms differ: Form A names the country `country` and adds `total_records`; Form B names it `country_name`.',
        response: { name: 'PostalSystemDetail', ...PostalSystemDetailSchemas },
      }),
    })
    .get(
      '/:country_code/codes',
      ({ params, query }) => {
        const { total, items } = service.codes(params.country_code, pageOf(query))
        return list(items, { total })
      },
      {
        params: t.Object({ country_code: countryParam }),
        query: t.Object({ ...pageQuery(config.maxLimit), ...fieldsQuery }),
        detail: routeDetail({
          cache: 'reference',
          summary: 'Distinct postal codes of a country, in code order',
          response: { name: 'PostalCode', enveloped: PostalCodeSchema, list: true },
        }),
      },
    )
    .get(
      '/:country_code/search',
      ({ params, query, form, request }) => {
        const reply = (p: PresentedPage) => pageList(p, { total: p.total })
        return then(pageIn(service, form, 'search', [params.country_code, filters(query), pageOf(query)], callerOf(request)), reply)
      },
      {
        params: t.Object({ country_code: countryParam }),
        query: t.Object({
          q: t.Optional(
            t.String({ maxLength: 200, description: 'Start of a place name; case and accents are ignored (`zurich` finds Zürich).' }),
          ),
          prefix: t.Optional(t.String({ maxLength: 64, description: 'Start of a postal code.', examples: ['902'] })),
          admin_code: t.Optional(
            t.String({ maxLength: 64, description: 'First-level administrative division code (e.g. `CA`, `BY`), any case.' }),
          ),
          ...pageQuery(config.maxLimit),
          ...fieldsQuery,
        }),
        detail: routeDetail({
          cache: 'reference',
          summary: 'Search postal codes by place name, code prefix or division (at least one)',
          description: RECORD_FORMS,
          response: { name: 'PostalRecord', ...PostalRecordSchemas, list: true },
        }),
      },
    )
    .post(
      '/:country_code/nearby',
      ({ params, query, body, form, request }) => {
        const page = spatialPageOf(query, body)
        const reply = spatialReply(page)
        const at = { lat: body.lat, lng: body.lng, radius_km: body.radius_km }
        return then(pageIn(service, form, 'nearby', [params.country_code, at, page], callerOf(request)), reply)
      },
      {
        params: t.Object({ country_code: countryParam }),
        body: t.Object(
          {
            lat: t.Number({ minimum: -90, maximum: 90, description: 'Latitude of the centre, degrees.' }),
            lng: t.Number({ minimum: -180, maximum: 180, description: 'Longitude of the centre, degrees.' }),
            radius_km: t.Number({
              exclusiveMinimum: 0,
              maximum: NEARBY_MAX_RADIUS_KM,
              description: `Radius in km, greater than 0 and at most ${NEARBY_MAX_RADIUS_KM}.`,
            }),
            ...spatialPage,
          },
          { examples: [{ lat: 34.09, lng: -118.41, radius_km: 5, limit: 10 }] },
        ),
        query: t.Object({ ...spatialPage, ...fieldsQuery }),
        detail: routeDetail({
          summary: 'Postal codes within a radius, nearest first (haversine distance_km)',
          description: RECORD_FORMS,
          response: { name: 'NearbyPostalRecord', ...NearbyRecordSchemas, list: true, ...spatialSiblings },
        }),
      },
    )
    .post(
      '/:country_code/within',
      ({ params, query, body, form, request }) => {
        const page = spatialPageOf(query, body)
        const reply = spatialReply(page)
        return then(pageIn(service, form, 'within', [params.country_code, body.geometry, page], callerOf(request)), reply)
      },
      {
        params: t.Object({ country_code: countryParam }),
        body: t.Object(
          {
            geometry: t.Object(
              { type: t.String({ description: '`Polygon` or `MultiPolygon`.' }), coordinates: t.Array(t.Any()) },
              {
                description:
                  `GeoJSON Polygon or MultiPolygon ([longitude, latitude] positions, closed rings, holes allowed, at ` +
                  `most ${MAX_VERTICES} positions).`,
              },
            ),
            ...spatialPage,
          },
          {
            examples: [
              {
                geometry: {
                  type: 'Polygon',
                  coordinates: [
                    [
                      [-118.42, 34.06],
                      [-118.38, 34.06],
                      [-118.38, 34.1],
                      [-118.42, 34.1],
                      [-118.42, 34.06],
                    ],
                  ],
                },
                limit: 10,
              },
            ],
          },
        ),
        query: t.Object({ ...spatialPage, ...fieldsQuery }),
        detail: routeDetail({
          summary: 'Postal codes inside a polygon, in dataset order',
          description: RECORD_FORMS,
          // 10,000 positions at full double precision: 400 KB compact, 800 KB pretty-printed with two spaces.
          bodyLimit: 1024 * 1024,
          response: { name: 'PostalRecord', ...PostalRecordSchemas, list: true, ...spatialSiblings },
        }),
      },
    )
    .get('/:country_code/validate/:postal_code', ({ params }) => one(service.validateFormat(params.country_code, params.postal_code)), {
      params: t.Object({ country_code: countryParam, postal_code: postalCodeParam }),
      detail: routeDetail({
        cache: 'reference',
        summary: "Check a postal code against its country's format",
        description: 'An unknown country is not an error (no 404): the answer is 200 with `valid: false`, as in the batch.',
        response: { name: 'PostalFormatCheck', enveloped: FormatCheckSchema },
      }),
    })
    .get(
      '/:country_code/:postal_code',
      ({ params, form }) => {
        const { records } = service.lookup(params.country_code, params.postal_code)
        return form === 'enveloped' ? list(records.map((r) => presentRecord(r, form))) : one(presentRecord(records[0]!, form))
      },
      {
        params: t.Object({ country_code: countryParam, postal_code: postalCodeParam }),
        query: t.Object(fieldsQuery),
        detail: routeDetail({
          cache: 'reference',
          summary: 'Every place a postal code maps to (Form B: the first)',
          description:
            'A postal code can map to several places. Form A answers every record of the code (`data` is an array); Form B ' +
            `answers one record, the first. ${RECORD_FORMS}`,
          response: { name: 'PostalRecord', ...PostalRecordSchemas, envelopedList: true },
        }),
      },
    )
