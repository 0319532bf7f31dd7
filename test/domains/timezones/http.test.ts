/**
 * The four timezone endpoints through the real app over the built `datasets/out/timezones.json`:
 * SPEC formats, names and links, abbreviations, conversions across midnight and DST boundaries checked
 * against python's zoneinfo, and a problem for every kind of bad input.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { testApp, type TestApp } from '../../support/app.ts'
import { oracleAt, oracleConvert, type ConvertCase } from './oracle.ts'

let app: TestApp
const get = (path: string, form: 'bare' | 'enveloped' = 'bare') => app.json('GET', `/api/v1${path}`, { form })

beforeAll(async () => {
  app = await testApp()
})
afterAll(() => app.close())

const TIME_24 = /^([01]\d|2[0-3]):[0-5]\d:[0-5]\d$/
const RECORD_12 = /^(1[0-2]|[1-9]):[0-5]\d (AM|PM)$/
const CONVERT_12 = /^(0[1-9]|1[0-2]):[0-5]\d:[0-5]\d (AM|PM)$/
const DATE = /^\d{4}-\d{2}-\d{2}$/
const OFFSET = /^[+-]\d{2}:\d{2}$/

/** 12-hour `H:MM AM` of a 24-hour `HH:MM:SS`, computed independently of the service's code. */
const to12 = (hms: string, long: boolean) => {
  const [h, m, s] = hms.split(':').map(Number) as [number, number, number]
  const hour = h % 12 || 12
  const mm = String(m).padStart(2, '0')
  return long
    ? `${String(hour).padStart(2, '0')}:${mm}:${String(s).padStart(2, '0')} ${h < 12 ? 'AM' : 'PM'}`
    : `${hour}:${mm} ${h < 12 ? 'AM' : 'PM'}`
}

describe('GET /timezones/{tz_name}', () => {
  test('a record in the SPEC formats, consistent with the clock and with zoneinfo', async () => {
    const before = Math.floor(Date.now() / 1000)
    const { status, body } = await get('/timezones/America/New_York')
    expect(status).toBe(200)
    expect(body.timezone).toBe('America/New_York')
    expect(body.utc_offset).toMatch(OFFSET)
    expect(body.current_time_24h).toMatch(TIME_24)
    expect(body.current_time_12h).toMatch(RECORD_12)
    expect(body.current_time_12h).toBe(to12(body.current_time_24h, false))
    expect(body.current_date).toMatch(DATE)
    expect(body.country_codes).toEqual(['US'])
    const [[offset, dst, abbreviation]] = oracleAt({ 'America/New_York': [before] })['America/New_York']!
    expect(body.abbreviation).toBe(abbreviation)
    expect(body.is_dst).toBe(dst === 1)
    expect(body.utc_offset).toBe(offset === -14400 ? '-04:00' : '-05:00')
    // The wall clock is UTC now plus the offset (a second may tick between the two reads).
    const shown = Date.parse(`${body.current_date}T${body.current_time_24h}Z`) / 1000
    expect(Math.abs(shown - (before + offset))).toBeLessThanOrEqual(2)
  })

  test('fixed offsets, half and quarter hours, and the inverted sign of Etc/GMT+N', async () => {
    const cases: [string, string, string][] = [
      ['Asia/Kolkata', '+05:30', 'IST'],
      ['Asia/Kathmandu', '+05:45', '+0545'],
      ['Etc/GMT+5', '-05:00', '-05'],
      ['Etc/GMT-14', '+14:00', '+14'],
      ['UTC', '+00:00', 'UTC'],
      ['Asia/Tokyo', '+09:00', 'JST'],
    ]
    for (const [name, offset, abbreviation] of cases) {
      const { status, body } = await get(`/timezones/${name}`)
      expect(status).toBe(200)
      expect([body.timezone, body.utc_offset, body.abbreviation, body.is_dst]).toEqual([name, offset, abbreviation, false])
    }
  })

  test('names are case-insensitive, encoded slashes work, and links answer under the name asked for', async () => {
    expect((await get('/timezones/america/argentina/buenos_aires')).body.timezone).toBe('America/Argentina/Buenos_Aires')
    expect((await get('/timezones/America%2FIndiana%2FIndianapolis')).body.timezone).toBe('America/Indiana/Indianapolis')
    const link = await get('/timezones/us/eastern')
    const zone = await get('/timezones/America/New_York')
    expect(link.body.timezone).toBe('US/Eastern')
    expect([link.body.utc_offset, link.body.abbreviation, link.body.is_dst]).toEqual([
      zone.body.utc_offset,
      zone.body.abbreviation,
      zone.body.is_dst,
    ])
  })

  test('every one of the 597 names answers 200 under its own name', async () => {
    const { body } = await get('/timezones?limit=1000')
    expect(body.count).toBe(597)
    for (const item of body.results) {
      const res = await get(`/timezones/${item.timezone.toUpperCase()}`)
      expect([res.status, res.body.timezone]).toEqual([200, item.timezone])
    }
  })

  test('zone names that look like abbreviations are zones first', async () => {
    for (const name of ['EST', 'MST', 'HST', 'CET', 'EET', 'MET', 'WET', 'GMT', 'UTC']) {
      const { status, body } = await get(`/timezones/${name.toLowerCase()}`)
      expect([status, body.timezone]).toEqual([200, name])
    }
  })

  test('a single-offset abbreviation resolves to a zone that uses it', async () => {
    const cases: [string, string, string[]][] = [
      ['JST', 'Asia/Tokyo', ['+09:00']],
      ['AEST', 'Australia/Sydney', ['+10:00', '+11:00']],
      ['BST', 'Europe/London', ['+00:00', '+01:00']],
      ['EDT', 'America/New_York', ['-05:00', '-04:00']],
      ['cest', 'Europe/Paris', ['+01:00', '+02:00']],
    ]
    for (const [abbreviation, zone, offsets] of cases) {
      const { status, body } = await get(`/timezones/${abbreviation}`)
      expect([status, body.timezone]).toEqual([200, zone])
      expect(offsets).toContain(body.utc_offset)
    }
  })

  test('PST keeps the meaning the SPEC names (Los Angeles) although Asia/Manila also writes it', async () => {
    const { status, body } = await get('/timezones/PST')
    expect([status, body.timezone]).toEqual([200, 'America/Los_Angeles'])
    expect(['-08:00', '-07:00']).toContain(body.utc_offset)
    const manila = await get('/timezones/Asia/Manila')
    expect([manila.status, manila.body.abbreviation, manila.body.utc_offset]).toEqual([200, 'PST', '+08:00'])
  })

  test('an abbreviation used with several offsets is a 400 listing its zones', async () => {
    const cases: [string, string[]][] = [
      ['CST', ['America/Chicago', 'Asia/Shanghai', 'America/Havana']],
      ['IST', ['Asia/Kolkata', 'Europe/Dublin', 'Asia/Jerusalem']],
      ['CDT', ['America/Chicago', 'America/Havana']],
    ]
    for (const [abbreviation, some] of cases) {
      for (const form of ['bare', 'enveloped'] as const) {
        const { status, body } = await get(`/timezones/${abbreviation}`, form)
        expect(status).toBe(400)
        const problem = form === 'bare' ? body : body.error
        expect(problem.zones).toEqual(expect.arrayContaining(some))
        expect(problem.detail).toContain(abbreviation)
      }
    }
  })

  test('a malformed percent-escape in the name is a 400 saying so (the shared request guard)', async () => {
    const { status, body } = await get('/timezones/America%ZZNew_York')
    expect(status).toBe(400)
    expect(body.detail).toContain('percent-encoding')
  })

  test('an unknown name is a 404 naming it', async () => {
    for (const name of ['Mars/Olympus_Mons', 'XYZT', 'America/New_Yorkk']) {
      const { status, body } = await get(`/timezones/${name}`)
      expect(status).toBe(404)
      expect(body.detail).toContain(name)
    }
  })

  test('an unknown name near a zone is answered with it (issue 45): a typo, a city alone, a city with a space', async () => {
    for (const [name, meant] of [
      ['Europe/Berln', 'Europe/Berlin'],
      ['berlin', 'Europe/Berlin'],
      ['New%20York', 'America/New_York'],
      ['America/New_Yorkk', 'America/New_York'],
      ['Kolkatta', 'Asia/Kolkata'],
    ]) {
      for (const form of ['bare', 'enveloped'] as const) {
        const { status, body } = await get(`/timezones/${name}`, form)
        const problem = form === 'bare' ? body : body.error
        expect({ name, status, errors: problem.errors }).toEqual({
          name,
          status: 404,
          errors: [{ in: 'path', field: 'tz_name', message: `unknown timezone (did you mean ${meant}?)` }],
        })
        expect(problem.detail).toEndWith(`nor an abbreviation in current use (did you mean ${meant}?).`)
      }
      // The suggestion answers.
      expect((await get(`/timezones/${meant}`)).body.timezone).toBe(meant)
    }
    const far = await get('/timezones/Mars/Olympus_Mons')
    expect(far.body.errors).toEqual([{ in: 'path', field: 'tz_name', message: 'unknown timezone' }])
    const query = await get('/timezones-diff?from=Europe/Pariss&to=UTC')
    expect(query.status).toBe(404)
    expect(query.body.errors).toEqual([{ in: 'query', field: 'from', message: 'unknown timezone (did you mean Europe/Paris?)' }])
  })

  test('Form A wraps the record; fields trims it', async () => {
    const { body } = await get('/timezones/Asia/Kolkata?fields=timezone,utc_offset', 'enveloped')
    expect(body).toEqual({ status: 'ok', data: { timezone: 'Asia/Kolkata', utc_offset: '+05:30' }, error: null })
  })
})

describe('GET /timezones', () => {
  test('all names, paged, each with offset, abbreviation, DST flag and countries', async () => {
    const all = (await get('/timezones?limit=1000')).body
    const names = all.results.map((r: any) => r.timezone)
    expect(names).toEqual([...names].sort())
    const page = (await get('/timezones?limit=10&offset=20')).body
    expect(page.count).toBe(597)
    expect(page.results).toEqual(all.results.slice(20, 30))
    for (const item of all.results) {
      expect(item.utc_offset).toMatch(OFFSET)
      expect(typeof item.is_dst).toBe('boolean')
      expect(Array.isArray(item.country_codes)).toBe(true)
    }
    expect(all.results.find((r: any) => r.timezone === 'US/Eastern').link_to).toBe('America/New_York')
    expect(all.results.find((r: any) => r.timezone === 'Europe/Zurich').country_codes).toEqual(['CH', 'DE', 'LI'])
  })

  test('region is a case-insensitive first path segment; country filters by ISO code', async () => {
    const europe = (await get('/timezones?region=europe&limit=1000')).body
    expect(europe.count).toBeGreaterThan(50)
    expect(europe.results.every((r: any) => r.timezone.startsWith('Europe/'))).toBe(true)
    const us = (await get('/timezones?country=us&limit=1000')).body
    expect(us.results.map((r: any) => r.timezone)).toEqual(
      expect.arrayContaining(['America/New_York', 'America/Los_Angeles', 'Pacific/Honolulu']),
    )
    const enveloped = (await get('/timezones?region=Indian&limit=2', 'enveloped')).body
    expect(enveloped.status).toBe('ok')
    expect(enveloped.data.length).toBe(2)
    expect(enveloped.total).toBeGreaterThan(2)
  })

  test('bad filters and paging are 422s naming the member', async () => {
    for (const [query, field] of [
      ['region=Mars', 'region'],
      ['country=ZZ', 'country'],
      ['limit=0', 'limit'],
      ['offset=-1', 'offset'],
    ]) {
      const { status, body } = await get(`/timezones?${query}`)
      expect(status).toBe(422)
      expect(body.errors.map((e: any) => e.field)).toContain(field)
    }
  })
})

describe('GET /timezones-diff', () => {
  test('signed hours and the SPEC format for fixed-offset zones', async () => {
    const cases: [string, string, number, string][] = [
      ['UTC', 'Asia/Kathmandu', 5.75, '+5h 45m'],
      ['Asia/Kolkata', 'UTC', -5.5, '-5h 30m'],
      ['Asia/Kolkata', 'Asia/Kathmandu', 0.25, '+0h 15m'],
      ['Etc/GMT+3', 'Asia/Kolkata', 8.5, '+8h 30m'],
      ['Pacific/Kiritimati', 'Etc/GMT+12', -26, '-26h 00m'],
      ['Asia/Tokyo', 'Asia/Tokyo', 0, '+0h 00m'],
    ]
    for (const [from, to, hours, formatted] of cases) {
      const { status, body } = await get(`/timezones-diff?from=${from}&to=${to}`)
      expect(status).toBe(200)
      expect([body.from_timezone, body.to_timezone, body.diff_hours, body.diff_formatted]).toEqual([from, to, hours, formatted])
      expect(body.from_current_time_24h).toMatch(TIME_24)
      expect(body.to_current_time_24h).toMatch(TIME_24)
    }
  })

  test('DST zones differ by what zoneinfo says now', async () => {
    const now = Math.floor(Date.now() / 1000)
    const o = oracleAt({ 'America/St_Johns': [now], 'Europe/London': [now] })
    const { body } = await get('/timezones-diff?from=Europe/London&to=America/St_Johns')
    expect(body.diff_hours).toBe((o['America/St_Johns']![0]![0] - o['Europe/London']![0]![0]) / 3600)
  })

  test('abbreviations resolve; ambiguous ones are 400 naming the parameter; unknown 404; missing 422', async () => {
    expect((await get('/timezones-diff?from=JST&to=UTC')).body.diff_hours).toBe(-9)
    const ambiguous = await get('/timezones-diff?from=UTC&to=IST')
    expect(ambiguous.status).toBe(400)
    expect(ambiguous.body.errors[0].field).toBe('to')
    expect(ambiguous.body.zones).toContain('Asia/Kolkata')
    const unknown = await get('/timezones-diff?from=Nowhere/Town&to=UTC')
    expect(unknown.status).toBe(404)
    expect(unknown.body.detail).toContain('Nowhere/Town')
    const missing = await get('/timezones-diff?from=UTC')
    expect(missing.status).toBe(422)
    expect(missing.body.errors[0].field).toBe('to')
  })
})

describe('GET /timezones-convert', () => {
  const convert = (c: ConvertCase) => get(`/timezones-convert?from=${c.from}&to=${c.to}&date=${c.date}&time=${c.time}`)

  test('across midnight, DST boundaries and the 2026 rule changes, as zoneinfo converts', async () => {
    const cases: ConvertCase[] = [
      // midnight, both directions, and across the date line
      { from: 'America/Los_Angeles', to: 'Asia/Tokyo', date: '2026-01-15', time: '20:00' },
      { from: 'Asia/Tokyo', to: 'America/Los_Angeles', date: '2026-01-16', time: '08:00' },
      { from: 'Pacific/Kiritimati', to: 'Pacific/Pago_Pago', date: '2026-12-31', time: '23:30' },
      { from: 'Pacific/Pago_Pago', to: 'Pacific/Kiritimati', date: '2026-12-31', time: '00:15' },
      { from: 'Asia/Kolkata', to: 'America/St_Johns', date: '2026-07-01', time: '05:45:30' },
      // spring-forward gaps and fall-back overlaps
      { from: 'America/New_York', to: 'UTC', date: '2026-03-08', time: '02:30' },
      { from: 'America/New_York', to: 'UTC', date: '2026-11-01', time: '01:30' },
      { from: 'Europe/London', to: 'Asia/Tokyo', date: '2026-03-29', time: '01:15' },
      { from: 'Europe/London', to: 'Asia/Tokyo', date: '2026-10-25', time: '01:15' },
      { from: 'Australia/Lord_Howe', to: 'UTC', date: '2026-04-05', time: '01:45' },
      { from: 'Australia/Lord_Howe', to: 'UTC', date: '2026-10-04', time: '02:15' },
      { from: 'Europe/Dublin', to: 'America/New_York', date: '2026-10-25', time: '01:30' },
      { from: 'UTC', to: 'America/New_York', date: '2026-03-08', time: '06:59:59' },
      { from: 'UTC', to: 'America/New_York', date: '2026-03-08', time: '07:00' },
      // 2026: Vancouver stays at -07 as MST, Edmonton and Winnipeg move on, Havana keeps -04, Casablanca +00
      { from: 'America/Vancouver', to: 'UTC', date: '2026-11-01', time: '01:30' },
      { from: 'America/Los_Angeles', to: 'America/Vancouver', date: '2026-12-01', time: '12:00' },
      { from: 'America/Edmonton', to: 'UTC', date: '2026-12-01', time: '12:00' },
      { from: 'America/Winnipeg', to: 'UTC', date: '2026-12-01', time: '12:00' },
      { from: 'America/Havana', to: 'UTC', date: '2026-11-01', time: '00:30' },
      { from: 'Africa/Casablanca', to: 'Europe/Paris', date: '2026-12-01', time: '23:30' },
      // long ago: local mean time
      { from: 'Europe/Amsterdam', to: 'UTC', date: '1900-01-01', time: '12:00' },
    ]
    const expected = oracleConvert(cases)
    for (const [i, c] of cases.entries()) {
      const { status, body } = await convert(c)
      expect(status).toBe(200)
      const e = expected[i]!
      expect({ case: c, ...pick(body, Object.keys(e)) }).toEqual({ case: c, ...e })
      expect(body.from_time_12h).toBe(to12(body.from_time_24h, true))
      expect(body.to_time_12h).toBe(to12(body.to_time_24h, true))
      expect(body.to_time_12h).toMatch(CONVERT_12)
    }
  })

  test('the documented rule: a skipped time moves forward by the gap, a repeated time takes its first occurrence', async () => {
    const gap = (await convert({ from: 'America/New_York', to: 'UTC', date: '2026-03-08', time: '02:30' })).body
    expect([gap.from_time_status, gap.from_time_24h, gap.from_abbreviation, gap.to_time_24h]).toEqual([
      'gap',
      '03:30:00',
      'EDT',
      '07:30:00',
    ])
    const overlap = (await convert({ from: 'America/New_York', to: 'UTC', date: '2026-11-01', time: '01:30' })).body
    expect([overlap.from_time_status, overlap.from_time_24h, overlap.from_abbreviation, overlap.to_time_24h]).toEqual([
      'ambiguous',
      '01:30:00',
      'EDT',
      '05:30:00',
    ])
    const plain = (await convert({ from: 'America/New_York', to: 'Asia/Kolkata', date: '2026-07-04', time: '12:00' })).body
    expect(plain).toMatchObject({
      from_time_status: 'ok',
      from_time_12h: '12:00:00 PM',
      to_time_12h: '09:30:00 PM',
      to_date: '2026-07-04',
      from_utc_offset: '-04:00',
      to_utc_offset: '+05:30',
    })
    const midnight = (await convert({ from: 'UTC', to: 'UTC', date: '2026-07-04', time: '00:05' })).body
    expect(midnight.from_time_12h).toBe('12:05:00 AM')
  })

  test('without a date, today in the from zone', async () => {
    const before = (await get('/timezones/Pacific/Kiritimati')).body
    const { body } = await get('/timezones-convert?from=Pacific/Kiritimati&to=Pacific/Pago_Pago&time=12:00')
    const after = (await get('/timezones/Pacific/Kiritimati')).body
    // (should midnight pass in Kiritimati meanwhile, the date is one of the two)
    expect([before.current_date, after.current_date]).toContain(body.from_date)
    expect(body.from_time_24h).toBe('12:00:00')
    expect(body.to_date).not.toBe(body.from_date)
  })

  test('malformed time or date is a 422 naming the field; unknown zones 404 naming them', async () => {
    for (const [query, field] of [
      ['time=25:00', 'time'],
      ['time=7', 'time'],
      ['time=12:60', 'time'],
      ['time=noon', 'time'],
      ['time=12:00&date=2026-02-29', 'date'],
      ['time=12:00&date=26-01-01', 'date'],
      ['time=12:00&date=2026-13-01', 'date'],
      ['', 'time'],
    ]) {
      const { status, body } = await get(`/timezones-convert?from=UTC&to=Asia/Tokyo&${query}`)
      expect(status).toBe(422)
      expect(body.errors[0].field).toBe(field)
    }
    const unknown = await get('/timezones-convert?from=UTC&to=Atlantis/Capital&time=12:00')
    expect(unknown.status).toBe(404)
    expect(unknown.body.detail).toContain('Atlantis/Capital')
  })
})

function pick(o: Record<string, unknown>, keys: string[]) {
  return Object.fromEntries(keys.map((k) => [k, o[k]]))
}
