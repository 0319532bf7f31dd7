/**
 * The usage ledger across processes, to the request: `--workers 2` on the SQLite store (the state dir's
 * usage.sqlite, both workers writing), and two instances on one real Redis. A known mix of requests is sent
 * (lookups, bulks of 3, 404s, 429s once the plan is spent), the servers are stopped (SIGTERM writes what
 * each still holds), and `almanac usage` — the real CLI, reading the store — reports exactly what was sent.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startRedis, type TestRedis } from '../support/redis.ts'
import { cli, servedProcesses } from '../support/served.ts'
import { tempDirs } from '../support/temp.ts'

const serve = servedProcesses()
let redis: TestRedis
beforeAll(async () => {
  redis = await startRedis()
})
afterAll(() => redis?.close())
const tempDir = tempDirs('almanac-ledger-')

/** 30 lookups, 10 bulks of 3, 10 unknown countries, over `urls` in turn: 70 credits on a 60-credit plan. */
async function traffic(urls: string[], key: string) {
  const headers = { 'x-api-key': key, 'content-type': 'application/json', connection: 'close' }
  const sends = Array.from({ length: 50 }, (_, i) => {
    const base = urls[i % urls.length]!
    if (i % 5 === 0)
      return fetch(base + '/api/v1/ip/bulk', {
        method: 'POST',
        headers,
        body: JSON.stringify({ ips: ['8.8.8.8', '1.1.1.1', `9.9.9.${i}`] }),
      })
    if (i % 5 === 1) return fetch(base + '/api/v1/countries/XX', { headers })
    return fetch(base + '/api/v1/countries/FR', { headers })
  })
  const answers = await Promise.all(sends)
  await Promise.all(answers.map((r) => r.arrayBuffer()))
  return answers.map((r, i) => ({ status: r.status, route: i % 5 === 0 ? 'POST /api/v1/ip/bulk' : 'GET /api/v1/countries/:code' }))
}

/** What `almanac usage --format json` says, per route: requests, answered, client errors, refused, credits. */
async function reported(env: Record<string, string>, key: string) {
  const { code, out, err } = await cli(['usage', '--key', key, '--since', '1d', '--format', 'json'], env)
  expect({ code, err }).toEqual({ code: 0, err: '' })
  return Object.fromEntries(JSON.parse(out).map((l: any) => [l.route, [l.requests, l.answered, l.client_errors, l.refused, l.credits]]))
}

/** The same figures counted from the answers the client got. */
function expected(sent: { status: number; route: string }[]) {
  const out: Record<string, number[]> = {}
  for (const { status, route } of sent) {
    const line = (out[route] ??= [0, 0, 0, 0, 0])
    line[0]!++
    if (status === 200) line[1]!++
    else if (status === 429) line[3]!++
    else line[2]!++
    if (status !== 429) line[4]! += route.startsWith('POST') ? 3 : 1
  }
  return out
}

describe('the usage ledger across processes: totals equal what was sent', () => {
  const plan = { ALMANAC_PLANS: 'small:60/1d', ALMANAC_DEFAULT_PLAN: 'small' }

  const cases: [string, 'workers' | 'instances', string][] = [
    ['--workers 2 on the SQLite store', 'workers', 'sqlite'],
    ['--workers 2 on one Redis', 'workers', ''],
    ['two instances on one Redis', 'instances', ''],
  ]
  cases.forEach(([name, shape, quotaStore], i) =>
    test(name, async () => {
      const key = `ledger-${i}-0123456789`
      const state = tempDir()
      const env = { ...plan, ALMANAC_QUOTA_STORE: quotaStore || redis.url, ALMANAC_STATE_DIR: state, ALMANAC_API_KEYS: `${key}:small` }
      const servers =
        shape === 'workers'
          ? [await serve(['--workers', '2'], env)]
          : await Promise.all([serve([], { ...env, ALMANAC_STATE_DIR: tempDir() }), serve([], { ...env, ALMANAC_STATE_DIR: tempDir() })])
      const sent = await traffic(
        servers.map((s) => s.url),
        key,
      )
      expect(sent.filter((s) => s.status === 429).length).toBeGreaterThan(0)
      // A clean stop writes what each process still holds.
      expect(await Promise.all(servers.map((s) => s.stop()))).toEqual(servers.map(() => 0))
      expect(await reported(env, await callerOf(env, key))).toEqual(expected(sent))
    }, 60_000),
  )
})

/** A configured key's caller as the ledger names it: read from the access log would need a server; GET /api/v1/usage says it. */
async function callerOf(env: Record<string, string>, key: string): Promise<string> {
  const server = await serve([], { ...env, ALMANAC_QUOTA_STORE: 'memory', ALMANAC_STATE_DIR: tempDir() })
  const usage: any = await (
    await fetch(server.url + '/api/v1/usage?days=1', { headers: { 'x-api-key': key, 'x-response-form': 'bare' } })
  ).json()
  await server.stop()
  return usage.caller
}
