/**
 * Free routes and customer pools raced across processes: `--workers 2` on the SQLite stores, `--workers 2`
 * on one real Redis, and two instances on one Redis, with keys and customers made by the real CLI
 * (`almanac keys create`, `almanac customers create`). A free route (`GET /api/v1/usage`, the one route marked
 * free) called 60 times at once spends nothing: its key's 20 credits are all there after, and exactly 20 of 30
 * lookups then raced beside more free calls are answered. A customer's 20-credit pool spent at once through
 * two keys and both processes, by lookups and bulks of 3: never more than 20 credits admitted, every other
 * request refused with 429, and the credits left spendable one by one to exactly 20.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startRedis, type TestRedis } from '../support/redis.ts'
import { bothWorkers, cli, servedProcesses } from '../support/served.ts'
import { tempDirs } from '../support/temp.ts'

const CREDITS = 20
const PLANS = { ALMANAC_PLANS: `pool:${CREDITS}/1d,roomy:1000/1d`, ALMANAC_DEFAULT_PLAN: 'roomy' }

const serve = servedProcesses()
let redis: TestRedis
beforeAll(async () => {
  redis = await startRedis()
})
afterAll(() => redis?.close())
// After the afterAll above, so the servers stop before their folders go.
const tempDir = tempDirs('almanac-free-pool-race-')

/** Runs the CLI with `env`; its stdout, trimmed, once it succeeded. */
async function made(args: string[], env: Record<string, string>): Promise<string> {
  const { code, out, err } = await cli(args, env)
  expect({ code, err: code ? err : '' }).toEqual({ code: 0, err: '' })
  return out.trim()
}

type Send = { base: string; key: string; kind: 'free' | 'lookup' | 'bulk' }

/** Sends every request at once (a new connection each, so the kernel spreads them between workers); the statuses. */
async function race(sends: Send[]) {
  const answers = await Promise.all(
    sends.map(({ base, key, kind }, i) => {
      const headers: Record<string, string> = { connection: 'close', 'x-api-key': key, 'x-response-form': 'bare' }
      if (kind === 'free') return fetch(`${base}/api/v1/usage?days=1`, { headers })
      if (kind === 'lookup') return fetch(`${base}/api/v1/countries/FR`, { headers })
      const body = JSON.stringify({ ips: [`8.8.${i}.1`, `8.8.${i}.2`, `8.8.${i}.3`] })
      return fetch(`${base}/api/v1/ip/bulk`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body })
    }),
  )
  const bodies = await Promise.all(answers.map((r) => r.text()))
  return sends.map((send, i) => ({ ...send, status: answers[i]!.status, body: bodies[i]! }))
}

const statusesOf = (answers: { kind: string; status: number }[], kind: string) =>
  answers.filter((a) => a.kind === kind).map((a) => a.status)
const countOf = (statuses: number[], status: number) => statuses.filter((s) => s === status).length

const CASES: [string, 'workers' | 'instances', () => string][] = [
  ['--workers 2 on the SQLite stores', 'workers', () => 'sqlite'],
  ['--workers 2 on one Redis', 'workers', () => redis.url],
  ['two instances on one Redis', 'instances', () => redis.url],
]

describe('free routes and customer pools are exact across processes', () => {
  CASES.forEach(([name, shape, store], i) =>
    test(name, async () => {
      const state = tempDir()
      // Keys and customers where the servers look them up: the state dir's SQLite, or the quota store's Redis.
      const env = (own = state) => ({ ...PLANS, ALMANAC_QUOTA_STORE: store(), ALMANAC_STATE_DIR: own })
      const freeKey = await made(['keys', 'create', '--name', `free-${i}`, '--plan', 'pool'], env())
      const customer = await made(['customers', 'create', '--name', `Pool Co ${i}`, '--plan', 'pool'], env())
      const poolKeys = [
        await made(['keys', 'create', '--name', `pool-${i}-a`, '--customer', customer], env()),
        await made(['keys', 'create', '--name', `pool-${i}-b`, '--customer', customer], env()),
      ]
      const urls =
        shape === 'workers'
          ? [(await serve(['--workers', '2'], env())).url]
          : (await Promise.all([serve([], env(tempDir())), serve([], env(tempDir()))])).map((s) => s.url)
      if (shape === 'workers') await bothWorkers(urls[0]!)
      await freeCallsSpendNothing(urls, freeKey)
      await poolIsExact(urls, poolKeys)
    }, 90_000),
  )
})

/** 60 free calls at once leave all the credits; 30 lookups raced beside 30 more free calls: exactly the credits are answered. */
async function freeCallsSpendNothing(urls: string[], key: string) {
  const free = await race(Array.from({ length: 60 }, (_, i) => ({ base: urls[i % urls.length]!, key, kind: 'free' as const })))
  expect(countOf(statusesOf(free, 'free'), 200)).toBe(60)
  for (const { body } of free) expect(JSON.parse(body).window).toMatchObject({ limit: CREDITS, remaining: CREDITS, used: 0 })
  const mixed = await race(
    Array.from({ length: 60 }, (_, i) => ({ base: urls[i % urls.length]!, key, kind: i % 2 ? ('free' as const) : ('lookup' as const) })),
  )
  expect(countOf(statusesOf(mixed, 'free'), 200)).toBe(30)
  const lookups = statusesOf(mixed, 'lookup')
  expect([countOf(lookups, 200), countOf(lookups, 429)]).toEqual([CREDITS, 30 - CREDITS])
}

/**
 * A customer's pool spent through its two keys on every process at once: 30 lookups and 10 bulks of 3 (60
 * credits asked of 20). What was admitted fits the pool; everything else was refused; the credits left are
 * spent one lookup at a time, through either key and process, to exactly the pool, and not one more.
 */
async function poolIsExact(urls: string[], keys: string[]) {
  const sends: Send[] = Array.from({ length: 40 }, (_, i) => ({
    base: urls[i % urls.length]!,
    key: keys[Math.floor(i / urls.length) % keys.length]!,
    kind: i % 4 === 3 ? 'bulk' : 'lookup',
  }))
  const answers = await race(sends)
  const [lookups, bulks] = [statusesOf(answers, 'lookup'), statusesOf(answers, 'bulk')]
  const admitted = countOf(lookups, 200) + 3 * countOf(bulks, 200)
  expect(admitted).toBeLessThanOrEqual(CREDITS)
  expect(countOf(lookups, 200) + countOf(lookups, 429)).toBe(lookups.length)
  expect(countOf(bulks, 200) + countOf(bulks, 429)).toBe(bulks.length)
  // A refusal means what was left could not pay for that request (under 3 credits), and nothing is given back after.
  expect(CREDITS - admitted).toBeLessThan(3)
  const after: number[] = []
  for (let i = 0; i < CREDITS - admitted + 2; i++) {
    const base = urls[i % urls.length]!
    const res = await fetch(`${base}/api/v1/countries/FR`, { headers: { connection: 'close', 'x-api-key': keys[i % keys.length]! } })
    await res.arrayBuffer()
    after.push(res.status)
  }
  expect(after).toEqual([...Array(CREDITS - admitted).fill(200), 429, 429])
  // Every key of the pool, on every process, sees the pool spent.
  for (const base of urls)
    for (const key of keys) {
      const usage = await fetch(`${base}/api/v1/usage?days=1`, {
        headers: { connection: 'close', 'x-api-key': key, 'x-response-form': 'bare' },
      })
      expect(((await usage.json()) as { window: unknown }).window).toMatchObject({ limit: CREDITS, remaining: 0, used: CREDITS })
    }
}
