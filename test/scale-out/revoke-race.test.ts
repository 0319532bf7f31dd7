/**
 * A revoke reaches every process while requests race: `--workers 2` on the SQLite key store, `--workers 2` on
 * one real Redis, and two instances on one Redis (whose key caches keep a lookup 60 s and drop it when the
 * key store's change channel names it). Batches of lookups are sent at once to every process while the real
 * CLI revokes the key; once one whole batch is refused, every later batch is refused too, on every process,
 * and nothing but 200 or 401 is ever answered.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startRedis, type TestRedis } from '../support/redis.ts'
import { waitFor } from '../support/redis-topologies.ts'
import { bothWorkers, cli, servedProcesses } from '../support/served.ts'
import { tempDirs } from '../support/temp.ts'

const serve = servedProcesses()
let redis: TestRedis
beforeAll(async () => {
  redis = await startRedis()
})
afterAll(() => redis?.close())
// After the afterAll above, so the servers stop before their folders go.
const tempDir = tempDirs('almanac-revoke-race-')

/** 40 lookups at once over `urls` (a new connection each, so the kernel spreads them between workers): their statuses. */
async function batch(urls: string[], key: string): Promise<number[]> {
  const answers = await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      fetch(`${urls[i % urls.length]}/api/v1/countries/FR`, { headers: { connection: 'close', 'x-api-key': key } }),
    ),
  )
  await Promise.all(answers.map((r) => r.arrayBuffer()))
  return answers.map((r) => r.status)
}

const CASES: [string, 'workers' | 'instances', () => string][] = [
  ['--workers 2 on the SQLite stores', 'workers', () => 'sqlite'],
  ['--workers 2 on one Redis', 'workers', () => redis.url],
  ['two instances on one Redis', 'instances', () => redis.url],
]

describe('a revoke reaches every process while requests race', () => {
  CASES.forEach(([name, shape, store], i) =>
    test(name, async () => {
      const state = tempDir()
      const env = (own = state) => ({ ALMANAC_QUOTA_STORE: store(), ALMANAC_STATE_DIR: own })
      const made = await cli(['keys', 'create', '--name', `revoked-${i}`], env())
      expect({ code: made.code, err: made.code ? made.err : '' }).toEqual({ code: 0, err: '' })
      const key = made.out.trim()
      const urls =
        shape === 'workers'
          ? [(await serve(['--workers', '2'], env())).url]
          : (await Promise.all([serve([], env(tempDir())), serve([], env(tempDir()))])).map((s) => s.url)
      if (shape === 'workers') await bothWorkers(urls[0]!)
      // Every process has the key (and a Redis instance has it cached).
      expect(new Set(await batch(urls, key))).toEqual(new Set([200]))

      // Batches race on while the CLI revokes.
      const seen: number[] = []
      let racing = true
      const stream = (async () => {
        while (racing) seen.push(...(await batch(urls, key)))
      })()
      const revoked = await cli(['keys', 'revoke', `revoked-${i}`], env())
      expect({ code: revoked.code, err: revoked.code ? revoked.err : '' }).toEqual({ code: 0, err: '' })
      await waitFor('a whole batch refused', async () => (await batch(urls, key)).every((s) => s === 401))
      racing = false
      await stream
      expect(seen.every((s) => s === 200 || s === 401)).toBe(true)

      // From then on, every process refuses it.
      for (let round = 0; round < 3; round++) expect(new Set(await batch(urls, key))).toEqual(new Set([401]))
    }, 90_000),
  )
})
