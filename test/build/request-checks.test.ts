/**
 * The shared request checks (request-checks.ts) against the source tree, started as an operator starts
 * it (`bun src/main.ts serve` on the built datasets, a key from the environment). executable.test.ts runs
 * the very same table against the compiled executable.
 */
import { afterAll, beforeAll, describe, test } from 'bun:test'
import { SMOKE_KEY, type Running } from '../../build/smoke.ts'
import { startFromSource } from '../support/source-server.ts'
import { tempDirs } from '../support/temp.ts'
import { REQUEST_CHECKS, sendCheck } from './request-checks.ts'

const tempDir = tempDirs('almanac-checks-')
let server: Running

beforeAll(async () => {
  server = await startFromSource(tempDir)
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
