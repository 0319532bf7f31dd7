/**
 * The shared request checks (request-checks.ts) against the source tree, started as an operator starts
 * it (`bun src/main.ts serve` on the built datasets, a key from the environment). executable.test.ts runs
 * the very same table against the compiled executable.
 */
import { afterAll, beforeAll, describe, test } from 'bun:test'
import { resolve } from 'node:path'
import { SMOKE_KEY, start, type Running } from '../../build/smoke.ts'
import { tempDirs } from '../support/temp.ts'
import { REQUEST_CHECKS, sendCheck } from './request-checks.ts'

const ROOT = resolve(import.meta.dir, '../..')
const tempDir = tempDirs('almanac-checks-')
let server: Running

beforeAll(async () => {
  server = await start(
    process.execPath,
    ROOT,
    {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: tempDir(),
      ALMANAC_STATE_DIR: tempDir(),
      ALMANAC_HOST: '127.0.0.1',
      PORT: '0',
      ALMANAC_API_KEYS: `${SMOKE_KEY}:smoke`,
      ALMANAC_PLANS: 'smoke:1000000000/1d',
      ALMANAC_DEFAULT_PLAN: 'smoke',
      ALMANAC_ACCESS_LOG: 'false',
    },
    120,
    ['src/main.ts', 'serve'],
  )
}, 130_000)
afterAll(() => server?.stop())

describe('request checks, source tree', () => {
  for (const c of REQUEST_CHECKS) {
    test(`${c.method} ${c.path.slice(0, 60)}: ${c.name}`, async () => {
      const { res, body } = await sendCheck(server.url, SMOKE_KEY, c)
      c.check(res, body)
    })
  }
})
