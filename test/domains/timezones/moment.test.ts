/**
 * The worldtimeapi-like members of the timezone record (datetime, utc_datetime, unixtime, dst_from,
 * dst_until, next_transition) for every zone and link at instants in both halves of the year, against
 * Python's zoneinfo over the same system tzdata (test/domains/timezones/oracle.ts: scanned by the week,
 * bisected to the second, within five years).
 */
import { beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { SOURCE_OUT_DIR } from '../../../src/data/open.ts'
import { type TimezonesService, openTimezonesService } from '../../../src/domains/timezones/service.ts'
import { oracleAt, oraclePeriods } from './oracle.ts'

const HORIZON = 5 * 366 * 86400
const INSTANTS = ['2026-01-15T12:00:00Z', '2026-04-01T00:30:00Z', '2026-07-15T12:00:00Z', '2026-11-23T18:45:07Z'].map(
  (iso) => Date.parse(iso) / 1000,
)

let service: TimezonesService
beforeAll(() => {
  service = openTimezonesService(join(SOURCE_OUT_DIR, 'timezones.json'))
})

const iso = (t: number) => new Date(t * 1000).toISOString().replace('.000Z', 'Z')
const twoDigits = (n: number) => String(n).padStart(2, '0')
const offsetText = (seconds: number) =>
  `${seconds < 0 ? '-' : '+'}${twoDigits(Math.floor(Math.abs(seconds) / 3600))}:${twoDigits(Math.floor(Math.abs(seconds) / 60) % 60)}`

describe('timezone record: datetime, DST period and next transition', () => {
  test('every name at four instants agrees with zoneinfo', () => {
    const request: Record<string, number[]> = {}
    for (const name of service.names) request[name] = INSTANTS
    const periods = oraclePeriods(request)
    const types = oracleAt(request)
    const mismatches: string[] = []
    let withDst = 0
    let withNext = 0
    for (const name of service.names) {
      INSTANTS.forEach((now, i) => {
        const r = service.record(name, now)
        const [next, from, until] = periods[name]![i]!
        const [offset] = types[name]![i]!
        const local = new Date((now + offset) * 1000).toISOString().slice(0, 19)
        const want = {
          datetime: `${local}${offsetText(offset)}`,
          utc_datetime: iso(now),
          unixtime: now,
          dst_from: from === null ? null : iso(from),
          dst_until: until === null ? null : iso(until),
          next_transition:
            next === null
              ? null
              : { at: iso(next[0]), unixtime: next[0], utc_offset: offsetText(next[1]), abbreviation: next[3], is_dst: next[2] },
        }
        // Beyond the oracle's horizon it sees nothing; the service may know a later change.
        if (next === null && r.next_transition && r.next_transition.unixtime > now + HORIZON) want.next_transition = r.next_transition
        if (until === null && r.dst_until && Date.parse(r.dst_until) / 1000 > now + HORIZON) want.dst_until = r.dst_until
        const got = {
          datetime: r.datetime,
          utc_datetime: r.utc_datetime,
          unixtime: r.unixtime,
          dst_from: r.dst_from,
          dst_until: r.dst_until,
          next_transition: r.next_transition,
        }
        if (JSON.stringify(got) !== JSON.stringify(want))
          mismatches.push(`${name} @ ${iso(now)}: got ${JSON.stringify(got)}, zoneinfo ${JSON.stringify(want)}`)
        if (r.dst_from) withDst++
        if (r.next_transition) withNext++
      })
    }
    expect(mismatches.slice(0, 10)).toEqual([])
    // The comparison covered both kinds of answer, not only nulls.
    expect(withDst).toBeGreaterThan(200)
    expect(withNext).toBeGreaterThan(600)
  }, 120_000)

  test('a southern-hemisphere period spans the new year; a zone without DST has nulls', () => {
    const sydney = service.record('Australia/Sydney', Date.parse('2026-12-31T00:00:00Z') / 1000)
    expect(sydney.is_dst).toBe(true)
    expect(Date.parse(sydney.dst_from!)).toBeLessThan(Date.parse('2026-12-31T00:00:00Z'))
    expect(Date.parse(sydney.dst_until!)).toBeGreaterThan(Date.parse('2027-01-01T00:00:00Z'))
    expect(sydney.next_transition!.at).toBe(sydney.dst_until!)
    const tokyo = service.record('Asia/Tokyo', Date.parse('2026-07-01T00:00:00Z') / 1000)
    expect([tokyo.dst_from, tokyo.dst_until, tokyo.next_transition]).toEqual([null, null, null])
    expect(tokyo.datetime).toBe('2026-07-01T09:00:00+09:00')
  })
})
