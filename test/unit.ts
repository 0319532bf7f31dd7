/**
 * `bun run test:unit`: the fast lane, the tests that need no server, no Redis, Chromium or network, and no
 * built datasets (small fixtures only). The full suite (`bun run test`, what CI runs) includes them all;
 * this lane is for the edit-test loop.
 *
 * The lane keeps itself honest three ways, so a test that outgrows it fails here instead of slowing it:
 * - before running, each listed file and the test helpers it imports (transitively) are read, and one that
 *   imports the app harness, the HTTP helpers, Redis, Chromium or the mirror, or names the built datasets,
 *   is refused;
 * - the tests run with `unit-guard.ts` preloaded: `Bun.serve` and `fetch` throw;
 * - ALMANAC_DATA_DIR points at an empty folder, and no ALMANAC_MIRROR or Redis URL is passed on.
 *
 * Extra arguments go to `bun test` (e.g. `bun run test:unit --bail`).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'

/** The unit tests, by glob under test/. A new pure test goes here (the guards above say if it may). */
export const UNIT_TESTS = [
  'lib/*.test.ts',
  'config.test.ts',
  'build/vendor.test.ts',
  'domains/bible/markup.test.ts',
  'domains/email/syntax.test.ts',
  'domains/ip/address.test.ts',
  'domains/ip/address-oracle.test.ts',
  'domains/ip/tables.test.ts',
  'domains/postal/grid.test.ts',
  'domains/qr/mask.test.ts',
  'domains/qr/payloads.test.ts',
  'domains/qr/png.test.ts',
  'domains/qr/segments.test.ts',
  'http/reply.test.ts',
  'http/route-table.test.ts',
  'http/route-match.test.ts',
  'data/extract.test.ts',
]

/** What a unit test and its helpers must not import or name (each needs a server or built data). */
const OUT_OF_LANE: [RegExp, string][] = [
  [/support\/app\.ts/, 'the app harness (test/support/app.ts reads datasets/out)'],
  [/http\/helpers\.ts|support\/ports\.ts|support\/raw-http\.ts|support\/source-server\.ts/, 'a server on a port'],
  [/support\/redis\.ts/, 'Redis'],
  [/support\/chromium\.ts|playwright/, 'Chromium'],
  [/support\/mirror\.ts|ALMANAC_MIRROR/, 'the upstream mirror'],
  [/SOURCE_OUT_DIR|datasets\/out|src\/server\.ts/, 'the built datasets or the server'],
]

const TEST_DIR = import.meta.dir
const ROOT = resolve(TEST_DIR, '..')
const IMPORT = /(?:from\s+|import\(\s*|require\(\s*)['"](\.[^'"]+)['"]/g

/** Why `file` (or a test helper it imports) is out of the lane, or null. */
function outOfLane(file: string, seen = new Set<string>()): string | null {
  if (seen.has(file)) return null
  seen.add(file)
  const text = readFileSync(file, 'utf8')
  for (const [pattern, what] of OUT_OF_LANE) if (pattern.test(text)) return `${relative(ROOT, file)} uses ${what}`
  for (const [, spec] of text.matchAll(IMPORT)) {
    const target = resolve(dirname(file), spec!)
    if (!target.startsWith(TEST_DIR + '/')) continue // project code under test is the point
    const why = outOfLane(target, seen)
    if (why) return why
  }
  return null
}

export function unitFiles(): string[] {
  const files = new Set<string>()
  for (const pattern of UNIT_TESTS) {
    const found = [...new Bun.Glob(pattern).scanSync({ cwd: TEST_DIR })]
    if (!found.length) throw new Error(`test/unit.ts: ${pattern} matches no test file`)
    for (const f of found) files.add(join(TEST_DIR, f))
  }
  return [...files].sort()
}

if (import.meta.main) {
  const files = unitFiles()
  const refused = files.map((f) => outOfLane(f)).filter((why) => why !== null)
  if (refused.length) {
    console.error(`test:unit: out of the unit lane (move it out of UNIT_TESTS in test/unit.ts):\n  ${refused.join('\n  ')}`)
    process.exit(1)
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'almanac-unit-data-'))
  const env: Record<string, string | undefined> = { ...process.env, ALMANAC_DATA_DIR: dataDir }
  for (const name of Object.keys(env)) if (name === 'ALMANAC_MIRROR' || /REDIS/.test(name)) delete env[name]
  const run = Bun.spawnSync(
    ['bun', 'test', '--preload', join(TEST_DIR, 'unit-guard.ts'), ...process.argv.slice(2), ...files.map((f) => relative(ROOT, f))],
    { cwd: ROOT, env, stdio: ['inherit', 'inherit', 'inherit'] },
  )
  rmSync(dataDir, { recursive: true, force: true })
  process.exit(run.exitCode ?? 1)
}
