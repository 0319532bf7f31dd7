/**
 * Timezones routes (SPEC "Timezones"): the list, one record by IANA name or abbreviation (the name may
 * contain `/`, so it is the wildcard tail of the path), difference and conversion. The SPEC gives one
 * shape for each (no Form A / Form B variants), so the service's results are the resources in both forms
 * and there is no presenter; the envelope is added by http/reply/reply.ts.
 */
import { Elysia, t } from 'elysia'
import type { Config } from '../../config.ts'
import { fieldsQuery, pageOf, pageQuery } from '../../http/routing/paging.ts'
import { list, one } from '../../http/reply/reply.ts'
import { routeDetail } from '../../http/routing/route-facts.ts'
import { invalid, notFound } from '../../lib/errors.ts'
import { ConversionSchema, DifferenceSchema, TimezoneListItemSchema, TimezoneRecordSchema } from './schemas.ts'
import type { TimezonesService } from './service.ts'

const DEFAULT_LIMIT = 50

// Elysia cannot compile a params schema for the wildcard, so the path member is described here.
const TZ_NAME_DESCRIPTION =
  'The path after /timezones/ is tz_name: an IANA zone or link name, case-insensitive, `/` included (America/Argentina/Buenos_Aires), or ' +
  'an abbreviation in current use with one UTC offset (JST, EDT). Zone names such as EST, GMT, UTC, CET are zones first. An ' +
  'abbreviation with several offsets (CST, IST) is a 400 listing its zones; PST keeps its conventional meaning (Los Angeles); an ' +
  'unknown name a 404.'

/** The path parameter of the document: routing keeps the wildcard, since the name may contain `/`. */
const TZ_PARAMETER =
  'IANA zone or link name (case-insensitive; its `/` may be sent as is or percent-encoded as `%2F`, as generated clients do), or an ' +
  'abbreviation in current use with one UTC offset (JST, EDT).'

/** The wildcard tail, percent-decoded (`America%2FNew_York`); bad escapes are a 422 naming tz_name. */
function pathName(raw: string): string {
  if (!raw.includes('%')) return raw
  try {
    return decodeURIComponent(raw)
  } catch {
    throw invalid('tz_name', `malformed percent-encoding in ${JSON.stringify(raw)}`, 'path')
  }
}
const nowSeconds = () => Math.floor(Date.now() / 1000)

const zoneParam = (name: 'from' | 'to') =>
  t.String({
    description:
      `IANA zone or link name (case-insensitive), or an abbreviation in current use with a single UTC offset (e.g. EST, JST). ` +
      `An abbreviation with several offsets (CST, IST) is a 400 listing its zones.`,
    examples: [name === 'from' ? 'America/New_York' : 'Asia/Kolkata'],
  })

export const timezonesRoutes = (service: TimezonesService, config: Config) =>
  new Elysia()
    .get(
      '/timezones',
      ({ query }) => {
        const page = pageOf(query, DEFAULT_LIMIT)
        const { total, items } = service.list({ region: query.region, country: query.country, ...page }, nowSeconds())
        return list(items, { total })
      },
      {
        query: t.Object({
          region: t.Optional(
            t.String({
              description:
                'First segment of the name (a continent or ocean such as Europe, America, Indian; also Etc and legacy prefixes such as ' +
                'US), case-insensitive.',
              examples: ['Europe'],
            }),
          ),
          country: t.Optional(
            t.String({ description: 'ISO 3166-1 alpha-2 code: only names zone1970.tab or zone.tab give that country.', examples: ['US'] }),
          ),
          ...pageQuery(config.maxLimit, DEFAULT_LIMIT),
          ...fieldsQuery,
        }),
        detail: routeDetail({
          cache: 'current',
          summary: 'List IANA timezones with their current offset, abbreviation and DST flag',
          response: { name: 'TimezoneListItem', enveloped: TimezoneListItemSchema, list: true },
        }),
      },
    )
    .get(
      '/timezones/*',
      ({ params }) => {
        const name = pathName(params['*'] ?? '')
        if (!name) throw notFound('tz_name: give an IANA timezone name or abbreviation after /timezones/.')
        return one(service.record(name, nowSeconds()))
      },
      {
        query: t.Object(fieldsQuery),
        detail: routeDetail({
          cache: 'current',
          summary: 'Current time, offset, abbreviation and DST flag of a timezone (IANA name, link, or abbreviation)',
          description: TZ_NAME_DESCRIPTION,
          response: { name: 'TimezoneRecord', enveloped: TimezoneRecordSchema },
          wildcard: {
            name: 'tz_name',
            description: TZ_PARAMETER,
            examples: ['Europe/London', 'America/Argentina/Buenos_Aires', 'JST'],
          },
        }),
      },
    )
    .get('/timezones-diff', ({ query }) => one(service.difference({ from: query.from, to: query.to }, nowSeconds())), {
      query: t.Object({ from: zoneParam('from'), to: zoneParam('to'), ...fieldsQuery }),
      detail: routeDetail({
        summary: 'Current offset difference between two timezones (to minus from)',
        response: { name: 'TimezoneDifference', enveloped: DifferenceSchema },
      }),
    })
    .get(
      '/timezones-convert',
      ({ query }) => one(service.convert({ from: query.from, to: query.to, time: query.time, date: query.date }, nowSeconds())),
      {
        query: t.Object({
          from: zoneParam('from'),
          to: zoneParam('to'),
          time: t.String({ description: 'Wall-clock time in `from`, 24-hour HH:MM (HH:MM:SS also accepted).', examples: ['14:30'] }),
          date: t.Optional(
            t.String({
              description:
                'Date in `from`, YYYY-MM-DD; default: today in `from`. A time skipped by a DST change is moved forward by the gap; a ' +
                'repeated one takes its first occurrence (see from_time_status).',
              examples: ['2026-03-08'],
            }),
          ),
          ...fieldsQuery,
        }),
        detail: routeDetail({
          summary: 'Convert a wall-clock time from one timezone to another, DST-aware',
          response: { name: 'TimezoneConversion', enveloped: ConversionSchema },
        }),
      },
    )
