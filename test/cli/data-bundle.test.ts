/**
 * Issue 45 through the real CLI (`bun src/main.ts data …`) and a served process: `data verify` fails when
 * there is nothing to verify or an artifact differs, and by default checks the data a server here serves;
 * `data pack` → `data activate BUNDLE` on a running server → its answers come from the bundle → `data
 * rollback` brings the old ones back; a tampered bundle, an unsigned or wrongly signed one when a key is
 * set, and an unpacking whose writes fail half-way are refused with the data in service untouched.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { generateKeyPairSync } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { countriesVariant, SOURCE_OUT, sourceVersion } from '../data/data-dirs.ts'
import { cli, type Served, servedProcesses } from '../support/served.ts'
import { tempDirs } from '../support/temp.ts'

const ROOT = resolve(import.meta.dir, '../..')
const KEY = 'bundle-test-key-0123456789'
const tempDir = tempDirs('almanac-data-bundle-')
const serve = servedProcesses()
const root = tempDir()
const state = join(root, 'state')

/** The environment without any ALMANAC_* a developer may have exported: this test's state dir and data. */
const env = (extra: Record<string, string> = {}): Record<string, string> => ({
  ...(Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ALMANAC_'))) as Record<string, string>),
  ALMANAC_STATE_DIR: state,
  ALMANAC_DATA_DIR: SOURCE_OUT,
  ...extra,
})
const data = (args: string[], extra: Record<string, string> = {}) => cli(['data', ...args], env(extra))

let server: Served

beforeAll(async () => {
  server = await serve([], {
    ...env(),
    ALMANAC_API_KEYS: `${KEY}:test`,
    ALMANAC_PLANS: 'test:1000000/1d',
    ALMANAC_DEFAULT_PLAN: 'test',
    ALMANAC_EMAIL_OFFLINE: 'true',
  })
}, 120_000)

afterAll(() => rmSync(root, { recursive: true, force: true }))

/** What the server answers now: the countries dataset's version and France's name. */
async function answers() {
  const get = async (path: string) => {
    const res = await fetch(server.url + path, { headers: { 'x-api-key': KEY, 'x-response-form': 'bare' } })
    return res.json() as Promise<Record<string, string>>
  }
  return { version: (await get('/api/v1/meta/datasets/countries')).version, france: (await get('/api/v1/countries/FR')).name }
}

/** Polls until the server answers `want` (it hashes the new directory before it swaps it in). */
async function until(want: { version: string; france: string }) {
  for (let i = 0; i < 600; i++) {
    const now = await answers()
    if (now.version === want.version && now.france === want.france) return
    await Bun.sleep(50)
  }
  expect(await answers()).toEqual(want)
}

const bundles = () => (existsSync(join(state, 'data')) ? readdirSync(join(state, 'data')).sort() : [])
const activeData = () => (existsSync(join(state, 'active-data')) ? readFileSync(join(state, 'active-data'), 'utf8').trim() : undefined)
const original = { version: sourceVersion(), france: 'France' }

describe('data verify', () => {
  test('an empty directory, or one without a manifest, is nothing to verify: exit 1 naming where it looked', async () => {
    const empty = tempDir()
    const given = await data(['verify', '--data-dir', empty])
    expect(given.code).toBe(1)
    expect(given.err).toContain(`nothing to verify: ${empty} holds no manifest.json (looked there: --data-dir)`)
    // No flag: the data a server here would serve, ALMANAC_DATA_DIR (a source run serves it as it is).
    const configured = await data(['verify'], { ALMANAC_DATA_DIR: empty, ALMANAC_STATE_DIR: tempDir() })
    expect(configured.code).toBe(1)
    expect(configured.err).toContain(`nothing to verify: ${empty} holds no manifest.json (looked there: ALMANAC_DATA_DIR)`)
    const missing = await data(['verify', '--data-dir', join(empty, 'nowhere')])
    expect([missing.code, missing.err.includes(`${join(empty, 'nowhere')} does not exist`)]).toEqual([1, true])
  })

  test('a corrupted artifact fails, named; a missing one too', async () => {
    const dir = countriesVariant(join(tempDir(), 'corrupt'), 'France', '')
    const sqlite = readFileSync(join(dir, 'countries.sqlite'))
    sqlite[sqlite.length - 100] ^= 0xff
    writeFileSync(join(dir, 'countries.sqlite'), sqlite)
    rmSync(join(dir, 'timezones.json'))
    const { code, err } = await data(['verify', '--data-dir', dir])
    expect(code).toBe(1)
    expect(err).toContain(`countries: ${join(dir, 'countries.sqlite')} does not match its sha256 in manifest.json`)
    expect(err).toContain(`timezones: ${join(dir, 'timezones.json')} is missing`)
    expect(err).toContain(`${dir}: 2 problem(s)`)
  })

  test('with no flag it checks the data the server serves, and says which', async () => {
    const { code, err } = await data(['verify'])
    expect(code).toBe(0)
    expect(err).toContain(`verifying ${SOURCE_OUT}: ALMANAC_DATA_DIR`)
    expect(err).toContain(`${SOURCE_OUT}: 9 datasets, 10 artifacts`)
  })
})

describe('pack, activate on a running server, roll back', () => {
  test('a partial bundle (--only countries) is swapped in on the running server and rolled back', async () => {
    expect(await answers()).toEqual(original)
    const next = countriesVariant(join(root, 'next'), 'France (from a bundle)', '-bundle')
    const bundle = join(root, 'countries.almanac')
    const packed = await data(['pack', '--data-dir', next, '--only', 'countries', '--out', bundle])
    expect([packed.code, packed.out.trim()]).toEqual([0, bundle])
    expect(packed.err).toContain('a partial bundle (countries)')

    // One byte changed: refused, nothing recorded, nothing left, the server keeps its data.
    const tampered = join(root, 'tampered.almanac')
    const bytes = readFileSync(bundle)
    bytes[Math.floor(bytes.length * 0.75)] ^= 0x01
    writeFileSync(tampered, bytes)
    const refused = await data(['activate', tampered])
    expect(refused.code).toBe(1)
    expect(refused.err).toContain('refused')
    expect(refused.err).toContain('nothing was activated; the data in service is untouched')
    expect([activeData(), bundles()]).toEqual([undefined, []])

    const done = await data(['activate', bundle])
    expect(done.code).toBe(0)
    expect(done.err).toContain(': countries from the bundle, every artifact checked; bible, ')
    expect(done.err).toContain(`from the data in service (${SOURCE_OUT})`)
    expect(done.err).toContain(`SIGHUP sent to pid ${server.child.pid}`)
    await until({ version: `${original.version}-bundle`, france: 'France (from a bundle)' })
    // `almanac version` names what is served: the activated directory, before ALMANAC_DATA_DIR.
    const version = await cli(['version', '--json'], env())
    const reported = JSON.parse(version.out)
    expect(reported.datasets.find((d: { id: string }) => d.id === 'countries').version).toBe(`${original.version}-bundle`)
    const activated = activeData()!
    expect(bundles()).toEqual([activated.split('/').at(-1)!])

    // The data verify checks by default is now the activated directory.
    const verified = await data(['verify'])
    expect(verified.code).toBe(0)
    expect(verified.err).toContain(`verifying ${activated}: the directory \`almanac data activate\` recorded`)

    const back = await data(['rollback'])
    expect(back.code).toBe(0)
    expect(back.err).toContain(`rolling back to ${SOURCE_OUT} (ALMANAC_DATA_DIR, as before any activation)`)
    await until(original)
    expect(activeData()).toBeUndefined()
    // A second rollback returns to the bundle's data (kept as the previous one).
    expect((await data(['rollback'])).code).toBe(0)
    await until({ version: `${original.version}-bundle`, france: 'France (from a bundle)' })
    expect((await data(['rollback'])).code).toBe(0)
    await until(original)
  }, 120_000)

  test('a write that fails half-way (as on a full disk) leaves nothing written, and the data in service untouched', async () => {
    const next = countriesVariant(join(root, 'cut'), 'France (never)', '-never')
    const bundle = join(root, 'cut.almanac')
    expect((await data(['pack', '--data-dir', next, '--only', 'countries', '--out', bundle, '--no-compress'])).code).toBe(0)
    const before = [activeData(), bundles()]
    // A file size limit of 100 blocks, less than countries.sqlite: the write past it fails (EFBIG) as one on a full disk would.
    const run = Bun.spawn(['sh', '-c', `ulimit -f 100; exec bun src/main.ts data activate ${bundle}`], {
      cwd: ROOT,
      env: env(),
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const [err, code] = await Promise.all([new Response(run.stderr).text(), run.exited])
    expect(code).toBe(1)
    expect(err).toContain('what was written is removed')
    expect(err).toContain('nothing was activated; the data in service is untouched')
    expect([activeData(), bundles()]).toEqual(before)
    expect(await answers()).toEqual(original)
  }, 60_000)
})

describe('signed bundles, with ALMANAC_DATA_BUNDLE_PUBLIC_KEY set', () => {
  test('signed by the configured key: accepted; unsigned or signed by another key: refused', async () => {
    const keys = join(root, 'keys')
    mkdirSync(keys, { recursive: true })
    const key = generateKeyPairSync('ed25519')
    const other = generateKeyPairSync('ed25519')
    writeFileSync(join(keys, 'sign.pem'), key.privateKey.export({ type: 'pkcs8', format: 'pem' }))
    writeFileSync(join(keys, 'other.pem'), other.privateKey.export({ type: 'pkcs8', format: 'pem' }))
    writeFileSync(join(keys, 'public.pem'), key.publicKey.export({ type: 'spki', format: 'pem' }))
    const withKey = { ALMANAC_DATA_BUNDLE_PUBLIC_KEY: join(keys, 'public.pem') }
    const next = countriesVariant(join(root, 'signed'), 'France (signed)', '-signed')
    const pack = async (name: string, ...extra: string[]) => {
      const file = join(root, name)
      expect((await data(['pack', '--data-dir', next, '--only', 'countries', '--out', file, ...extra])).code).toBe(0)
      return file
    }
    const unsigned = await data(['activate', await pack('unsigned.almanac')], withKey)
    expect([unsigned.code, unsigned.err.includes('is not signed, and ALMANAC_DATA_BUNDLE_PUBLIC_KEY is set')]).toEqual([1, true])
    const wrong = await data(['activate', await pack('wrong.almanac', '--sign-key', join(keys, 'other.pem'))], withKey)
    expect([wrong.code, /is signed by key [0-9a-f]{16}, not by the configured one/.test(wrong.err)]).toEqual([1, true])
    const before = activeData()
    expect(await answers()).toEqual(original)

    const signed = await pack('signed.almanac', '--sign-key', join(keys, 'sign.pem'))
    const accepted = await data(['activate', signed], withKey)
    expect(accepted.code).toBe(0)
    expect(accepted.err).toMatch(/signature by key [0-9a-f]{16} verified/)
    expect(activeData()).not.toBe(before)
    await until({ version: `${original.version}-signed`, france: 'France (signed)' })
    expect((await data(['rollback'])).code).toBe(0)
    await until(original)
  }, 120_000)
})

test('the data help names pack, activate of a bundle, and rollback', async () => {
  const help = await cli(['data', '--help'], env())
  for (const words of ['data pack --out FILE', 'data activate DIR|BUNDLE', 'data rollback']) expect(help.out).toContain(words)
})
