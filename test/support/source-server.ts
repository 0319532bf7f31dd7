/**
 * `bun src/main.ts <command>` started as an operator starts it (build/smoke.ts `start`, which waits for
 * the `listening` line), in a minimal environment: PATH, an empty HOME and state directory, loopback, any
 * free port, the smoke key on a plan that never runs out, no access log. `env` adds to or overrides it.
 */
import { resolve } from 'node:path'
import { SMOKE_KEY, start, type Running } from '../../build/smoke.ts'

const ROOT = resolve(import.meta.dir, '../..')

export function startFromSource(tempDir: () => string, env: Record<string, string> = {}, command = 'serve'): Promise<Running> {
  const base = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: tempDir(),
    ALMANAC_STATE_DIR: tempDir(),
    ALMANAC_HOST: '127.0.0.1',
    PORT: '0',
    ALMANAC_API_KEYS: `${SMOKE_KEY}:smoke`,
    ALMANAC_PLANS: 'smoke:1000000000/1d',
    ALMANAC_DEFAULT_PLAN: 'smoke',
    ALMANAC_ACCESS_LOG: 'false',
    ALMANAC_SHUTDOWN_DELAY: '0',
  }
  return start(process.execPath, ROOT, { ...base, ...env }, 120, ['src/main.ts', command])
}
