/**
 * The operator's own City database (ALMANAC_IP_CITY_MMDB) on a served process (`bun src/main.ts serve`):
 * described as what it is (type, build date, languages, the operator's licence, age from its build date)
 * in /api/v1/meta/datasets and /readyz; replaced and signalled with a real SIGHUP (and through `almanac
 * data activate`), it is opened again and both the answers and the description change; a file touched
 * without a change is not reopened; garbage or a missing file is refused with a log line and the database
 * in service keeps answering. MaxMind's test databases from the mirror stand in for the operator's.
 */
import { beforeAll, describe, expect, test } from 'bun:test'
import { copyFileSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { MmdbReader } from '../../../src/domains/ip/mmdb.ts'
import { MIRROR } from '../../support/mirror.ts'
import { cli, type Served, servedProcesses } from '../../support/served.ts'
import { tempDirs } from '../../support/temp.ts'

const ROOT = resolve(import.meta.dir, '../../..')
const DATA = join(ROOT, 'datasets/out')
const TEST_DATA = `${MIRROR}/maxmind-test/test-data`
const KEY = 'city-reload-key-0123456789'
const DAY = 86_400_000
const GEOLITE2_CREDIT = 'This product includes GeoLite2 data created by MaxMind, available from https://www.maxmind.com.'

/** Served by GeoIP2-City-Test (San Diego), not by GeoLite2-City-Test. */
const ONLY_GEOIP2 = '214.78.120.1'
/** Served by GeoLite2-City-Test (San Diego), not by GeoIP2-City-Test. */
const ONLY_GEOLITE2 = '214.78.0.1'

/**
 * The bytes of a MaxMind DB with its metadata's `build_epoch` set to `epoch` (same width: nothing else
 * moves), so a test database can pass for one built on another day.
 */
function withBuildEpoch(bytes: Buffer, epoch: number): Buffer {
  const out = Buffer.from(bytes)
  const marker = out.lastIndexOf(Buffer.concat([Buffer.from([0xab, 0xcd, 0xef]), Buffer.from('MaxMind.com')]))
  const key = out.indexOf(Buffer.concat([Buffer.from([0x40 | 'build_epoch'.length]), Buffer.from('build_epoch')]), marker)
  expect(marker > 0 && key > marker).toBe(true)
  // uint64 (extended type 9: a control byte holding the size, then 9 - 7).
  const ctrl = key + 1 + 'build_epoch'.length
  const size = out[ctrl]! & 0x1f
  expect({ type: out[ctrl]! >> 5, extended: out[ctrl + 1], size }).toEqual({ type: 0, extended: 2, size: 4 })
  out.writeUInt32BE(epoch, ctrl + 2)
  expect(new MmdbReader(out).metadata.build_epoch).toBe(epoch)
  return out
}

const serve = servedProcesses()
const tempDir = tempDirs('almanac-city-reload-')
let dir: string
let city: string
let server: Served
let url: string

/** Sends SIGHUP and waits for the reload's outcome (the line matching `outcome`). */
async function hangup(outcome: RegExp) {
  const from = server.lines.length
  server.child.kill('SIGHUP')
  return server.logged(outcome, from)
}

const get = async (path: string) => {
  const r = await fetch(url + path, { headers: { 'x-api-key': KEY, 'x-response-form': 'bare' } })
  return { status: r.status, body: (await r.json()) as any }
}
const cityOf = async (ip: string) => (await get(`/api/v1/ip/${ip}`)).body.city ?? null
const described = async () => (await get('/api/v1/meta/datasets/ip')).body
const readyIp = async () => {
  const r = await fetch(url + '/readyz')
  const body = (await r.json()) as any
  return { status: r.status, ip: body.datasets.find((d: { dataset: string }) => d.dataset === 'ip') }
}

beforeAll(async () => {
  dir = tempDir()
  city = join(dir, 'city.mmdb')
  copyFileSync(`${TEST_DATA}/GeoIP2-City-Test.mmdb`, city)
  server = await serve([], {
    ALMANAC_DATA_DIR: DATA,
    ALMANAC_STATE_DIR: join(dir, 'state'),
    ALMANAC_API_KEYS: `${KEY}:test`,
    ALMANAC_PLANS: 'test:1000000/1d',
    ALMANAC_DEFAULT_PLAN: 'test',
    ALMANAC_QUOTA_STORE: 'memory',
    ALMANAC_IP_CITY_MMDB: city,
  })
  url = server.url
}, 60_000)

describe('the operator City database on a served process', () => {
  test('at start: it answers, and the ip dataset is described as the operator database, not the bundled GeoLite2', async () => {
    expect(await cityOf(ONLY_GEOIP2)).toBe('San Diego')
    expect(await cityOf(ONLY_GEOLITE2)).toBeNull()

    // The server ages it on its own clock: between these two readings of ours (a day may turn in between).
    const ageAt = () => Math.floor((Date.now() - Date.parse('2026-02-04T00:00:00Z')) / DAY)
    const youngest = ageAt()
    const ip = await described()
    const operator = ip.sources.find((s: { id: string }) => s.id === 'operator-city-mmdb')
    expect(operator).toMatchObject({
      version: '2026-02-04',
      date: '2026-02-04',
      origin: 'operator-supplied (ALMANAC_IP_CITY_MMDB)',
      database: { type: 'GeoIP2-City', build_epoch: 1770245369, built: '2026-02-04T22:49:29.000Z', languages: ['en', 'zh'] },
    })
    expect(operator.license).toContain("operator's own licence")
    // GeoLite2 is not what answers: neither its source, its licence nor its credit line is claimed.
    expect(ip.sources.map((s: { id: string }) => s.id)).not.toContain('geolite2-city')
    expect(ip.license).not.toContain('GeoLite2')
    expect(ip.attribution).not.toContain(GEOLITE2_CREDIT)
    // The ASN half keeps its own description.
    expect(ip.sources.map((s: { id: string }) => s.id)).toEqual([
      'operator-city-mmdb',
      'ip-location-db-asn-ipv4',
      'ip-location-db-asn-ipv6',
    ])
    expect(ip.counts.city_tree_nodes).toBe(new MmdbReader(readFileSync(city)).nodeCount)
    const list = await get('/api/v1/meta/datasets')
    const ready = await readyIp()
    const oldest = ageAt()
    // Aged from its build date, by the 30-day rule, in each description.
    const listed = list.body.results.find((d: { id: string }) => d.id === 'ip')
    for (const entry of [ip, listed, ready.ip]) {
      expect(entry.age_days).toBeWithin(youngest, oldest + 1)
      expect(entry.stale).toBe(entry.age_days > 30)
    }
    expect(ip).toMatchObject({
      status: 'open',
      served_from: 'operator-supplied (ALMANAC_IP_CITY_MMDB)',
      version: '2026-02-04',
      date: '2026-02-04',
      stale_after_days: 30,
    })
    expect({ ...listed, age_days: 0, stale: false }).toEqual({ ...ip, age_days: 0, stale: false })
    const lists = list.body.results.find((d: { id: string }) => d.id === 'ip-lists')
    expect(lists.served_from).toBeUndefined()
    expect({ ...ready.ip, age_days: 0, stale: false }).toEqual({
      dataset: 'ip',
      age_days: 0,
      stale: false,
      stale_after_days: 30,
      served_from: 'operator-supplied (ALMANAC_IP_CITY_MMDB)',
      date: '2026-02-04',
    })
  })

  test('SIGHUP with the file only touched: nothing is reopened', async () => {
    const later = new Date(Date.now() + 60_000)
    utimesSync(city, later, later)
    await hangup(/datasets unchanged/)
    expect(server.lines.some((l) => /reopened/.test(String(l.msg)))).toBe(false)
  })

  test('replaced by another database and SIGHUP: its answers and its description', async () => {
    // GeoLite2-City-Test, passed off as built two days ago: fresh, and under the GeoLite2 EULA.
    const built = Math.floor((Date.now() - 2 * DAY) / 1000)
    writeFileSync(`${city}.new`, withBuildEpoch(readFileSync(`${TEST_DATA}/GeoLite2-City-Test.mmdb`), built))
    renameSync(`${city}.new`, city)
    const line = await hangup(/reopened|cannot be served/)
    expect(line).toMatchObject({
      level: 'info',
      msg: 'ALMANAC_IP_CITY_MMDB changed: the ip domain reopened',
      settings: ['ALMANAC_IP_CITY_MMDB'],
    })

    expect(await cityOf(ONLY_GEOLITE2)).toBe('San Diego')
    expect(await cityOf(ONLY_GEOIP2)).toBeNull()

    const date = new Date(built * 1000).toISOString().slice(0, 10)
    const ip = await described()
    expect(ip).toMatchObject({
      served_from: 'operator-supplied (ALMANAC_IP_CITY_MMDB)',
      version: date,
      date,
      stale: false,
      stale_after_days: 30,
    })
    expect(ip.age_days).toBeLessThanOrEqual(3)
    const operator = ip.sources.find((s: { id: string }) => s.id === 'operator-city-mmdb')
    expect(operator.database).toMatchObject({ type: 'GeoLite2-City', build_epoch: built, languages: ['en'] })
    // A GeoLite2 database is under the GeoLite2 EULA, whoever downloaded it: its credit line is required.
    expect(operator.license).toContain('GeoLite2 End User License Agreement')
    expect(ip.attribution).toContain(GEOLITE2_CREDIT)
    expect((await readyIp()).ip).toMatchObject({ stale: false, date, served_from: 'operator-supplied (ALMANAC_IP_CITY_MMDB)' })
    // /metrics ages what is served too: two days (the date is the build day's midnight, so up to three).
    const metrics = await (await fetch(url + '/metrics')).text()
    const age = Number(/^almanac_dataset_age_seconds\{dataset="ip"\} (\d+)$/m.exec(metrics)?.[1])
    expect(age).toBeGreaterThanOrEqual(DAY / 1000)
    expect(age).toBeLessThanOrEqual((3 * DAY) / 1000)
  })

  test('replaced by garbage and SIGHUP: refused with a log line naming the setting; the database in service answers', async () => {
    const before = await described()
    writeFileSync(city, Buffer.alloc(64 * 1024, 'not a database '))
    const line = await hangup(/reopened|cannot be served/)
    expect(line.level).toBe('error')
    expect(line.msg).toStartWith('ALMANAC_IP_CITY_MMDB changed but cannot be served: ALMANAC_IP_CITY_MMDB: ')
    expect(line.msg).toContain(`${city} is not a MaxMind DB file`)
    expect(line.msg).toEndWith('the ip domain keeps serving what it had')

    expect(await cityOf(ONLY_GEOLITE2)).toBe('San Diego')
    expect(await described()).toEqual(before)
    expect((await readyIp()).status).toBe(200)
  })

  test('removed and SIGHUP: refused, the database in service answers', async () => {
    rmSync(city)
    const line = await hangup(/reopened|cannot be served/)
    expect(line.level).toBe('error')
    expect(line.msg).toContain(`ALMANAC_IP_CITY_MMDB: cannot read ${city} (ENOENT)`)
    expect(await cityOf(ONLY_GEOLITE2)).toBe('San Diego')
  })

  test('`almanac data activate` of the directory in service picks up a replaced database', async () => {
    copyFileSync(`${TEST_DATA}/GeoIP2-City-Test.mmdb`, city)
    const from = server.lines.length
    const run = await cli(['data', 'activate', DATA, '--pid', String(server.child.pid)], { ALMANAC_STATE_DIR: join(dir, 'state') })
    expect(run.code).toBe(0)
    expect((await server.logged(/reopened|cannot be served|activated|refused/, from)).msg).toBe(
      'ALMANAC_IP_CITY_MMDB changed: the ip domain reopened',
    )
    expect(await cityOf(ONLY_GEOIP2)).toBe('San Diego')
    expect((await described()).sources[0].database.type).toBe('GeoIP2-City')
  })
})
