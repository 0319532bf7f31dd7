/** Response schemas of the timezone results, for the OpenAPI document (both forms share them). */
import { t } from 'elysia'
import { nullable } from '../../http/reply/schemas.ts'

const offset = t.String({ description: 'UTC offset, signed HH:MM (e.g. +05:30, -03:00, +00:00).', examples: ['+05:30'] })
const time24 = (what: string) => t.String({ description: `${what}, 24-hour HH:MM:SS.`, examples: ['14:05:09'] })
const date = (what: string) => t.String({ description: `${what}, YYYY-MM-DD.`, examples: ['2026-03-08'] })
const countryCodes = t.Array(t.String(), {
  description: 'ISO 3166-1 alpha-2 codes that zone1970.tab / zone.tab give this exact name (may be empty).',
})

const isoUtc = (description: string) =>
  t.String({ description: `${description}, ISO 8601 UTC (YYYY-MM-DDTHH:MM:SSZ).`, examples: ['2026-03-29T01:00:00Z'] })

/** Members beyond the SPEC's record, named as worldtimeapi names them. */
export const MOMENT = {
  datetime: t.String({
    description: 'The instant as local time, ISO 8601 with the UTC offset (YYYY-MM-DDTHH:MM:SS±HH:MM).',
    examples: ['2026-11-23T13:05:09+01:00'],
  }),
  utc_datetime: isoUtc('The same instant'),
  unixtime: t.Integer({ description: 'The same instant, seconds since 1970-01-01T00:00:00Z.', examples: [1795003509] }),
  dst_from: nullable(
    isoUtc('Start of the daylight-saving period in force'),
    'Start of the current daylight-saving period; null outside DST.',
  ),
  dst_until: nullable(
    isoUtc('End of the daylight-saving period in force'),
    'End of the current daylight-saving period (the instant standard time resumes); null outside DST or when no end is scheduled.',
  ),
  next_transition: nullable(
    t.Object({
      at: isoUtc('When it happens'),
      unixtime: t.Integer({ description: 'The same instant in Unix seconds.' }),
      utc_offset: offset,
      abbreviation: t.String(),
      is_dst: t.Boolean(),
    }),
    'The next change of offset, abbreviation or DST flag, with the values after it; null when tzdata schedules none.',
  ),
}

export const TimezoneRecordSchema = t.Object({
  timezone: t.String({
    description: 'IANA name as asked for (a link answers under its own name; an abbreviation answers with the zone it resolved to).',
  }),
  abbreviation: t.String({ description: 'Abbreviation in use now (tzdata writes +05-style names where no abbreviation is established).' }),
  utc_offset: offset,
  is_dst: t.Boolean({ description: "tzdata's daylight-saving flag for the time now." }),
  current_time_24h: time24('Local time now'),
  current_time_12h: t.String({ description: 'Local time now, 12-hour H:MM AM.', examples: ['2:05 PM'] }),
  current_date: date('Local date now'),
  country_codes: countryCodes,
  ...MOMENT,
})

export const TimezoneListItemSchema = t.Object({
  timezone: t.String({ description: 'IANA zone or link name.' }),
  utc_offset: offset,
  abbreviation: t.String(),
  is_dst: t.Boolean(),
  country_codes: countryCodes,
  link_to: t.Union([t.String(), t.Null()], { description: 'The zone a link points to; null for a zone.' }),
})

export const ConversionSchema = t.Object({
  from_timezone: t.String(),
  to_timezone: t.String(),
  from_time_12h: t.String({ description: 'HH:MM:SS AM/PM.', examples: ['02:30:00 PM'] }),
  to_time_12h: t.String({ description: 'HH:MM:SS AM/PM.', examples: ['12:00:00 AM'] }),
  from_time_24h: time24('The wall time converted (moved forward by the gap when from_time_status is gap)'),
  to_time_24h: time24('The same instant in `to`'),
  from_date: date('Date in `from`'),
  to_date: date('Date in `to` (differs when the conversion crosses midnight)'),
  from_utc_offset: offset,
  to_utc_offset: offset,
  from_abbreviation: t.String(),
  to_abbreviation: t.String(),
  from_time_status: t.Union([t.Literal('ok'), t.Literal('gap'), t.Literal('ambiguous')], {
    description:
      'ok: the wall time exists once; gap: skipped by a DST change and read with the offset before it; ambiguous: repeated, its first ' +
      'occurrence is used.',
  }),
  utc_time: t.String({ description: 'The instant, ISO 8601 UTC.', examples: ['2026-03-08T07:30:00Z'] }),
})

export const DifferenceSchema = t.Object({
  from_timezone: t.String(),
  to_timezone: t.String(),
  diff_hours: t.Number({
    description: 'Offset of `to` minus offset of `from`, now, in hours (fractional for 5:30, 5:45 …).',
    examples: [5.75],
  }),
  diff_formatted: t.String({ description: 'Sign, hours, h, space, two-digit minutes, m.', examples: ['+5h 45m', '-3h 30m'] }),
  from_current_time_24h: time24('Local time now in `from`'),
  to_current_time_24h: time24('Local time now in `to`'),
  from_utc_offset: offset,
  to_utc_offset: offset,
})
