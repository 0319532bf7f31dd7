/**
 * Timezones speed. In-process: the service's record, conversion and difference. Over HTTP: the record
 * (zone, link, abbreviation), a conversion and a difference, each as a ratio of a hello-world measured in
 * the same run (target for record and convert: >= 0.6). Prints figures; asserts nothing.
 * Run: `bun bench/timezones.ts` (after `bun src/main.ts data build --only timezones`).
 */
import { openDataDir } from '../src/data/open.ts'
import { TIMEZONES_ARTIFACT } from '../src/domains/timezones/artifacts.ts'
import { openTimezonesService } from '../src/domains/timezones/service.ts'
import { compareWithHello, printCallsHeader, timeCalls as time } from './lib.ts'

const service = openTimezonesService(openDataDir().path(TIMEZONES_ARTIFACT))
const now = Math.floor(Date.now() / 1000)

const names = service.names
printCallsHeader(`In-process service calls (tzdata ${service.version}, ${names.length} names)`)
time('record(every name in turn)', 200_000, (i) => service.record(names[i % names.length]!, now))
time('record(JST) (abbreviation)', 200_000, () => service.record('JST', now))
time('convert(New_York -> Kolkata, dated)', 200_000, (i) =>
  service.convert({ from: 'America/New_York', to: 'Asia/Kolkata', time: '14:30', date: `20${10 + (i % 30)}-03-08` }, now),
)
time('difference(London -> Kathmandu)', 200_000, () => service.difference({ from: 'Europe/London', to: 'Asia/Kathmandu' }, now))
time('list(region=America, limit 50)', 20_000, () => service.list({ region: 'America', limit: 50, offset: 0 }, now))

await compareWithHello('Timezones over HTTP (wrk, 32 connections, 5 s each)', [
  // The floor every API route pays (auth, quota, hooks, problem body), for scale.
  { name: 'GET /api/v1/no-such-route (authenticated 404: shared pipeline only)', path: '/api/v1/no-such-route' },
  { name: 'GET /timezones/America/New_York', path: '/api/v1/timezones/America/New_York' },
  { name: 'GET /timezones/us/eastern (link, lower case)', path: '/api/v1/timezones/us/eastern' },
  { name: 'GET /timezones/JST (abbreviation)', path: '/api/v1/timezones/JST' },
  {
    name: 'GET /timezones-convert (dated, DST)',
    path: '/api/v1/timezones-convert?from=America/New_York&to=Asia/Kolkata&time=14:30&date=2026-03-08',
  },
  { name: 'GET /timezones-convert (today)', path: '/api/v1/timezones-convert?from=Europe/London&to=Australia/Sydney&time=09:00' },
  { name: 'GET /timezones-diff', path: '/api/v1/timezones-diff?from=Europe/London&to=Asia/Kathmandu' },
  { name: 'GET /timezones?region=Europe', path: '/api/v1/timezones?region=Europe' },
])
