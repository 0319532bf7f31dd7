/**
 * Data refresh without downtime (issue 18): a new data directory swapped in under continuous load on a
 * real socket: no request fails, the answer changes to the new data, requests started after the swap see
 * only the new data, the old datasets are closed once their last request finished; a broken directory is
 * refused with a log line and the data in service stays.
 */
import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { sha256File } from '../../src/data/hashes.ts'
import { openDataDir } from '../../src/data/open.ts'
import { type LiveApp, liveApp } from '../../src/refresh.ts'
import { domains as allDomains } from '../../src/domains/index.ts'
import type { Domain } from '../../src/domains/types.ts'
import { createAuthenticator } from '../../src/http/admission/auth.ts'
import { createObservability } from '../../src/http/edge/observability.ts'
import { openDomains } from '../../src/domains/mount.ts'
import { memoryQuotaStore } from '../../src/stores/quota.ts'
import { TEST_KEY, testConfig } from '../support/app.ts'
import { freePort } from '../support/ports.ts'

const SOURCE = resolve(import.meta.dir, '../../datasets/out')
const NEW_NAME = 'France (refreshed data)'
const root = mkdtempSync(join(tmpdir(), 'almanac-refresh-'))

/** A copy of datasets/out (symlinks) whose countries.sqlite is a real copy, edited by `edit`, with its manifest entry updated. */
function dataDir(name: string, edit: (db: Database) => void, manifestFollows = true): string {
  const dir = join(root, name)
  mkdirSync(dir)
  for (const file of readdirSync(SOURCE))
    if (file !== 'manifest.json' && file !== 'countries.sqlite' && file !== '.cache') symlinkSync(join(SOURCE, file), join(dir, file))
  copyFileSync(join(SOURCE, 'countries.sqlite'), join(dir, 'countries.sqlite'))
  const db = new Database(join(dir, 'countries.sqlite'))
  edit(db)
  db.close()
  const manifest = JSON.parse(readFileSync(join(SOURCE, 'manifest.json'), 'utf8'))
  if (manifestFollows) {
    const artifact = manifest.datasets.countries.artifacts.find((a: { name: string }) => a.name === 'countries.sqlite')
    artifact.sha256 = sha256File(join(dir, 'countries.sqlite'))
    artifact.bytes = statSync(join(dir, 'countries.sqlite')).size
    manifest.datasets.countries.version += '-refreshed'
  }
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest))
  return dir
}

const countries = allDomains.find((d) => d.name === 'countries')!
/** The countries domain, counting how often its datasets are closed. */
let closed = 0
const counted: Domain = { ...countries, close: (service) => (closed++, countries.close?.(service)) }

let live: LiveApp
let server: ReturnType<typeof Bun.serve>
const logs: string[] = []
let fresh: string
let broken: string

beforeAll(async () => {
  fresh = dataDir('fresh', (db) => db.run('UPDATE countries SET name = ? WHERE alpha2 = ?', [NEW_NAME, 'FR']))
  // Same size, other bytes, manifest untouched: only the sha256 check can tell.
  broken = dataDir('broken', (db) => db.run('UPDATE countries SET name = ? WHERE alpha2 = ?', ['Frxnce', 'FR']), false)
  const config = testConfig()
  const data = openDataDir(SOURCE)
  const mounted = await openDomains(config, data, [counted], () => {})
  const observability = createObservability(config)
  live = liveApp(
    config,
    {
      domains: [counted],
      authenticator: createAuthenticator(config),
      quota: memoryQuotaStore(),
      observability,
      log: (l) => logs.push(l),
    },
    data,
    mounted,
  )
  server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (req) => live.handle(req), development: false })
  live.attach(server)
})

afterAll(async () => {
  await server?.stop(true)
  await live?.close()
  rmSync(root, { recursive: true, force: true })
})

const askName = async (): Promise<{ status: number; name?: string }> => {
  const res = await fetch(`http://127.0.0.1:${server.port}/api/v1/countries/FR`, {
    headers: { 'x-api-key': TEST_KEY, 'x-response-form': 'bare' },
  })
  const body = (await res.json()) as { name?: string }
  return { status: res.status, name: body.name }
}

test('a swap under continuous load: no failed request, the answer changes, the old datasets are closed', async () => {
  const before = await askName()
  expect(before).toEqual({ status: 200, name: 'France' })

  const results: { status: number; name?: string; startedAfterSwap: boolean }[] = []
  const failures: string[] = []
  let swapped = false
  let stop = false
  const worker = async () => {
    while (!stop) {
      const startedAfterSwap = swapped
      try {
        results.push({ ...(await askName()), startedAfterSwap })
      } catch (e) {
        failures.push(String(e))
      }
    }
  }
  const workers = Array.from({ length: 8 }, worker)
  const until = async (done: () => boolean) => {
    while (!done()) await Bun.sleep(5)
  }
  await until(() => results.length >= 200)
  const activation = await live.activate(fresh)
  swapped = true
  expect(activation.ok).toBe(true)
  const count = results.length
  await until(() => results.length >= count + 200)
  stop = true
  await Promise.all(workers)

  expect(failures).toEqual([])
  expect(results.filter((r) => r.status !== 200)).toEqual([])
  const names = new Set(results.map((r) => r.name))
  expect(names).toEqual(new Set(['France', NEW_NAME]))
  // Every request that started after activate() returned was answered from the new data.
  expect(results.filter((r) => r.startedAfterSwap && r.name !== NEW_NAME)).toEqual([])
  if (activation.ok) await activation.retired
  expect(closed).toBe(1)
  expect(logs.some((l) => l.includes('"datasets activated"') && l.includes(fresh))).toBe(true)
  // The meta endpoint answers from the new generation too.
  const meta = await fetch(`http://127.0.0.1:${server.port}/api/v1/meta/datasets/countries`, {
    headers: { 'x-api-key': TEST_KEY, 'x-response-form': 'bare' },
  })
  expect(((await meta.json()) as { version: string }).version).toEndWith('-refreshed')
  // So do the dataset metrics, once (one collector for every generation).
  const metrics = await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text()
  expect(metrics.match(/almanac_dataset_info\{dataset="countries",version="[^"]*"/g)).toEqual([expect.stringMatching(/-refreshed"$/)])
}, 60_000)

test('a broken directory is refused with a log line; the data in service stays', async () => {
  const answer = await live.activate(broken)
  expect(answer.ok).toBe(false)
  if (!answer.ok) expect(answer.reason).toContain('does not match its sha256')
  expect(logs.at(-1)).toContain('data directory refused')
  expect(live.current.data.dir).toBe(fresh)
  expect(await askName()).toEqual({ status: 200, name: NEW_NAME })

  // The directory in service again, unchanged: nothing is reopened.
  const same = await live.activate(fresh)
  expect(same).toMatchObject({ ok: true, unchanged: true })
  expect(closed).toBe(1)

  const missing = await live.activate(join(root, 'nowhere'))
  expect(missing.ok).toBe(false)
  expect(await askName()).toEqual({ status: 200, name: NEW_NAME })
})

test('end to end: almanac serve, then almanac data activate DIR (SIGHUP); a broken DIR is refused by the CLI', async () => {
  const old = dataDir('old', () => {})
  const next = dataDir('next', (db) => db.run('UPDATE countries SET name = ? WHERE alpha2 = ?', [NEW_NAME, 'FR']))
  const state = join(root, 'state')
  const port = freePort()
  const env: Record<string, string> = {
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ALMANAC_')) as [string, string][]),
    ALMANAC_API_KEYS: `${TEST_KEY}:test`,
    ALMANAC_PLANS: 'test:1000000/1d',
    ALMANAC_DEFAULT_PLAN: 'test',
    ALMANAC_ACCESS_LOG: 'false',
    ALMANAC_SHUTDOWN_DELAY: '0',
    ALMANAC_EMAIL_OFFLINE: 'true',
    ALMANAC_HOST: '127.0.0.1',
    ALMANAC_PORT: String(port),
    ALMANAC_STATE_DIR: state,
    ALMANAC_DATA_DIR: old,
  }
  const serving = Bun.spawn(['bun', 'src/main.ts', 'serve'], { env, stdout: 'ignore', stderr: 'pipe' })
  const stderr = new Response(serving.stderr).text()
  const name = async () => {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/countries/FR`, {
        headers: { 'x-api-key': TEST_KEY, 'x-response-form': 'bare' },
      })
      return res.status === 200 ? ((await res.json()) as { name: string }).name : `status ${res.status}`
    } catch {
      return 'down'
    }
  }
  const cli = async (...args: string[]) => {
    const proc = Bun.spawn(['bun', 'src/main.ts', 'data', ...args], { env, stdout: 'pipe', stderr: 'pipe' })
    const [err, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited])
    return { err, code }
  }
  try {
    while ((await name()) !== 'France') {
      expect(serving.exitCode).toBeNull()
      await Bun.sleep(50)
    }
    const refused = await cli('activate', broken)
    expect(refused.code).toBe(1)
    expect(refused.err).toContain('does not match its sha256')
    expect(await name()).toBe('France')

    const done = await cli('activate', next)
    expect(done.err).toContain('SIGHUP sent')
    expect(done.code).toBe(0)
    // Poll on the effect: the server hashes the new directory before it swaps it in.
    for (let seen = await name(); seen !== NEW_NAME; seen = await name()) {
      expect(seen).toBe('France')
      await Bun.sleep(50)
    }
  } finally {
    serving.kill('SIGTERM')
    await serving.exited
  }
  expect(await stderr).toContain('datasets activated')
}, 120_000)
