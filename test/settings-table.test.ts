/**
 * The settings are declared once (src/config.ts SCHEMA); the README's configuration table and
 * `almanac serve --help` are derived from the declarations, and this test fails when either has drifted:
 * the README's table must be exactly what `bun scripts/settings-table.ts` prints, and name exactly the
 * declared environment variables; the help must name every one of them, and every flag.
 */
import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { END, START, settingsTable } from '../scripts/settings-table.ts'
import { SETTINGS } from '../src/config.ts'

const ROOT = resolve(import.meta.dir, '..')
const readme = readFileSync(resolve(ROOT, 'README.md'), 'utf8')
const declaredEnv = SETTINGS.flatMap((s) => s.env).sort()

/** The names in the first column of the README table between the markers, read from the Markdown. */
function readmeTable() {
  const start = readme.indexOf(START)
  const end = readme.indexOf(END)
  expect({ start: start >= 0, end: end > start }).toEqual({ start: true, end: true })
  return readme.slice(start + START.length, end).trim()
}

test('the README configuration table is the one derived from the declarations (bun scripts/settings-table.ts --write)', () => {
  expect(readmeTable()).toBe(settingsTable())
})

test('the README configuration table lists exactly the declared environment variables, each once', () => {
  const rows = readmeTable().split('\n').slice(2)
  const names = rows.flatMap((row) => [...(row.split('|')[1] ?? '').matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]!)).sort()
  expect(names).toEqual(declaredEnv)
  expect(new Set(names).size).toBe(names.length)
  expect(rows.length).toBe(SETTINGS.length)
})

test('`almanac serve --help` names every declared environment variable, flag and config-file key', () => {
  const run = Bun.spawnSync({ cmd: [process.execPath, 'src/main.ts', 'serve', '--help'], cwd: ROOT, env: { PATH: process.env.PATH ?? '' } })
  expect(run.exitCode).toBe(0)
  const help = run.stdout.toString()
  const word = (name: string) => new RegExp(`(^|[^A-Za-z0-9_.-])${name.replace(/[.]/g, '\\.')}([^A-Za-z0-9_-]|$)`, 'm').test(help)
  const flags = SETTINGS.flatMap((s) => (s.flag ? [s.flag] : []))
  const missing = [...declaredEnv, ...flags, ...SETTINGS.map((s) => `${s.path}:`)].filter((n) => !word(n.replace(/:$/, '')))
  expect(missing).toEqual([])
  expect(declaredEnv).toContain('ALMANAC_EMAIL_RDAP_CACHE')
})

test("each domain's settings are declared in its folder, named by its descriptor, and composed by config under its name", async () => {
  const { domains } = await import('../src/domains/index.ts')
  const { SCHEMA } = await import('../src/config.ts')
  const declared = domains.filter((d) => d.settings).map((d) => d.name)
  expect(declared.sort()).toEqual(['bible', 'email', 'hash', 'ip', 'postal', 'qr', 'ua'])
  for (const d of domains) {
    // The very same declarations: config cannot import the registry (it sits below it), so it imports these.
    if (d.settings)
      expect({ domain: d.name, same: (SCHEMA as Record<string, unknown>)[d.name] === d.settings }).toEqual({ domain: d.name, same: true })
  }
  // Every group of settings in config is a registered domain's or one of the shared groups.
  const groups = Object.entries(SCHEMA)
    .filter(([, v]) => typeof (v as { parse?: unknown }).parse !== 'function')
    .map(([k]) => k)
  const shared = ['queries'] // the query workers of the Bible and postal domains
  expect(groups.filter((g) => !shared.includes(g)).sort()).toEqual(declared.sort())
  // And every domain setting's env name is a key of the README table (the tests above): nothing a domain declares is left out.
  for (const d of domains) for (const s of SETTINGS.filter((s) => s.path.startsWith(`${d.name}.`))) expect(s.env.length).toBeGreaterThan(0)
})
