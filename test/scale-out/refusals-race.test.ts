/**
 * Credits across processes, whatever races beside them: `--workers 2` on the SQLite quota store and on one
 * real Redis, and two instances on one Redis. Each server serves a data folder without the timezones dataset
 * (that domain is disabled: 503); each case's own key has a 20-credit plan. Refusals decided at admission
 * spend nothing: 90 requests race (Promise.all), 30 to the disabled domain, 30 without credentials (401, the
 * quota headers at zero), 30 lookups that may spend; exactly 20 lookups are answered. Bulk requests are
 * charged whole or not at all, with credit leases on and off (below).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { startRedis, type TestRedis } from '../support/redis.ts'
import { bothWorkers, servedProcesses } from '../support/served.ts'
import { tempDirs } from '../support/temp.ts'

const ROOT = resolve(import.meta.dir, '../..')
const OUT = join(ROOT, 'datasets/out')

const spawnServer = servedProcesses()
let redis: TestRedis
let dataDir: string

afterAll(() => redis?.close())
// After the afterAll above, so the servers stop before their folders go.
const tempDir = tempDirs('almanac-refusals-race-')

beforeAll(async () => {
  redis = await startRedis()
  // The built datasets less timezones: the same artifacts (linked), a manifest without that entry.
  dataDir = tempDir()
  const manifest = JSON.parse(readFileSync(join(OUT, 'manifest.json'), 'utf8'))
  delete manifest.datasets.timezones
  for (const entry of Object.values<{ artifacts: { name: string }[] }>(manifest.datasets))
    for (const { name } of entry.artifacts) {
      mkdirSync(join(dataDir, name, '..'), { recursive: true })
      symlinkSync(join(OUT, name), join(dataDir, name))
    }
  writeFileSync(join(dataDir, 'manifest.json'), JSON.stringify(manifest))
}, 30_000)

/** A server on the race's data folder and plan, with `own` settings; its URL. */
async function serve(args: string[], own: Record<string, string>): Promise<string> {
  const env = { ALMANAC_DATA_DIR: dataDir, ALMANAC_PLANS: 'tiny:20/1d', ALMANAC_DEFAULT_PLAN: 'tiny' }
  return (await spawnServer(args, { ...env, ...own })).url
}

/** The race over `urls` (requests alternate between them, a new connection each), and what each kind got. */
async function race(urls: string[], key: string) {
  const kinds = Array.from({ length: 90 }, (_, i) => (['disabled', 'anonymous', 'lookup'] as const)[i % 3]!)
  const answers = await Promise.all(
    kinds.map((kind, i) => {
      const base = urls[i % urls.length]!
      const headers: Record<string, string> = { connection: 'close', ...(kind === 'anonymous' ? {} : { 'x-api-key': key }) }
      const path = kind === 'disabled' ? '/api/v1/timezones/Europe%2FParis' : '/api/v1/countries/FR'
      return fetch(base + path, { headers })
    }),
  )
  await Promise.all(answers.map((r) => r.arrayBuffer()))
  const of = (kind: string) => answers.filter((_, i) => kinds[i] === kind)
  return { disabled: of('disabled'), anonymous: of('anonymous'), lookups: of('lookup') }
}

function expectExact({ disabled, anonymous, lookups }: Awaited<ReturnType<typeof race>>) {
  expect(disabled.map((r) => r.status)).toEqual(Array(30).fill(503))
  expect(anonymous.map((r) => [r.status, r.headers.get('x-quota-limit'), r.headers.get('x-quota-remaining')])).toEqual(
    Array(30).fill([401, '0', '0']),
  )
  const statuses = lookups.map((r) => r.status)
  expect([statuses.filter((s) => s === 200).length, statuses.filter((s) => s === 429).length]).toEqual([20, 10])
}

describe('refusals at admission spend nothing, across processes', () => {
  const cases: [string, 'workers' | 'instances', () => string][] = [
    ['--workers 2 on the SQLite quota store', 'workers', () => 'sqlite'],
    ['--workers 2 on one Redis', 'workers', () => redis.url],
    ['two instances on one Redis', 'instances', () => redis.url],
  ]
  cases.forEach(([name, shape, store], i) =>
    test(name, async () => {
      const key = `race-key-${i}-0123456789`
      const state = tempDir()
      const env = () => ({
        ALMANAC_QUOTA_STORE: store(),
        ALMANAC_STATE_DIR: shape === 'workers' ? state : tempDir(),
        ALMANAC_API_KEYS: `${key}:tiny`,
      })
      const urls = shape === 'workers' ? [await serve(['--workers', '2'], env())] : await Promise.all([serve([], env()), serve([], env())])
      if (shape === 'workers') await bothWorkers(urls[0]!)
      expectExact(await race(urls, key))
      // Every process counts in the one window: none has a credit left.
      for (const base of urls) {
        const after = await fetch(base + '/api/v1/countries/FR', { headers: { connection: 'close', 'x-api-key': key } })
        expect([after.status, after.headers.get('x-quota-remaining')]).toEqual([429, '0'])
      }
    }, 60_000),
  )
})

/**
 * 20 bulk lookups of 3 IPs race for a 20-credit plan: exactly 6 fit and are answered, 14 are refused, and the
 * 2 credits left are spent by the next two lookups, from whichever process, and nothing more is (issue 44: first
 * credits taken at admission filled the window, so on Redis 0–5 were admitted while credits remained).
 */
async function bulkRace(urls: string[], key: string) {
  const answers = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      fetch(urls[i % urls.length]! + '/api/v1/ip/bulk', {
        method: 'POST',
        headers: { connection: 'close', 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ ips: [`8.8.${i}.1`, `8.8.${i}.2`, `8.8.${i}.3`] }),
      }),
    ),
  )
  await Promise.all(answers.map((r) => r.arrayBuffer()))
  const statuses = answers.map((r) => r.status)
  expect([statuses.filter((s) => s === 200).length, statuses.filter((s) => s === 429).length]).toEqual([6, 14])
  // Whichever process holds them (a lease included), the last 2 credits are spendable from any, and nothing more is.
  const lookup = async (i: number) =>
    (await fetch(urls[i % urls.length]! + '/api/v1/countries/FR', { headers: { connection: 'close', 'x-api-key': key } })).status
  const after: number[] = []
  for (let i = 0; i < 4; i++) after.push(await lookup(i))
  expect(after).toEqual([200, 200, 429, 429])
}

/** Where the processes count: one state dir for `--workers` on SQLite, one Redis for the rest; leases on or off. */
const BULK_CASES: [string, 'workers' | 'instances', (key: string) => Record<string, string>][] = [
  ['--workers 2 on the SQLite store (the default)', 'workers', () => ({ ALMANAC_QUOTA_STORE: 'sqlite' })],
  ['--workers 2 on one Redis', 'workers', () => ({ ALMANAC_QUOTA_STORE: redis.url })],
  ['two instances on one Redis', 'instances', () => ({ ALMANAC_QUOTA_STORE: redis.url })],
  ['--workers 2 on one Redis, with credit leases', 'workers', () => ({ ALMANAC_QUOTA_STORE: redis.url, ALMANAC_QUOTA_LEASES: 'tiny:5' })],
  [
    'two instances on one Redis, with credit leases',
    'instances',
    () => ({ ALMANAC_QUOTA_STORE: redis.url, ALMANAC_QUOTA_LEASES: 'tiny:5' }),
  ],
]

describe('bulk credits are exact across processes', () => {
  BULK_CASES.forEach(([name, shape, store], i) =>
    test(name, async () => {
      const key = `bulk-race-${i}-0123456789`
      const state = tempDir()
      const env = () => ({ ...store(key), ALMANAC_STATE_DIR: shape === 'workers' ? state : tempDir(), ALMANAC_API_KEYS: `${key}:tiny` })
      const urls = shape === 'workers' ? [await serve(['--workers', '2'], env())] : await Promise.all([serve([], env()), serve([], env())])
      await bulkRace(urls, key)
    }, 60_000),
  )
})
