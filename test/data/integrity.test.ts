/**
 * Artifacts are checked against the manifest: a wrong size disables the domain at start; wrong bytes of
 * the right size in a small artifact (ALMANAC_DATA_HASH_BEFORE_SERVE_MAX_BYTES) disable it before it answers
 * anything; in a large one they are found by the background hash. A data refresh hashes everything before
 * it swaps. The problem callers see names the dataset, never a file path.
 */
import { expect, test } from 'bun:test'
import { closeSync, copyFileSync, openSync, readFileSync, statSync, symlinkSync, truncateSync, writeFileSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { openDataDir, readManifest, SOURCE_OUT_DIR } from '../../src/data/open.ts'
import { liveApp } from '../../src/refresh.ts'
import countries from '../../src/domains/countries/index.ts'
import ip from '../../src/domains/ip/index.ts'
import type { Domain } from '../../src/domains/types.ts'
import { createAuthenticator } from '../../src/http/admission/auth.ts'
import { createObservability } from '../../src/http/edge/observability.ts'
import { createApp } from '../../src/server.ts'
import { openDomains, verifyDatasets } from '../../src/domains/mount.ts'
import { memoryQuotaStore } from '../../src/stores/quota.ts'
import { testConfig, TEST_KEY } from '../support/app.ts'
import { rng } from '../support/random.ts'
import { tempDirs } from '../support/temp.ts'

const tempDir = tempDirs('almanac-integrity-')

const randomBytes = (length: number, seed: number) => {
  const random = rng(seed)
  const out = Buffer.allocUnsafe(length)
  for (let i = 0; i < length; i++) out[i] = Math.floor(random() * 256)
  return out
}

/** Overwrites 4 KiB in the middle of a file, as a bad disk or a careless copy would. */
function scribble(file: string) {
  const bytes = randomBytes(4096, 12)
  const fd = openSync(file, 'r+')
  writeSync(fd, bytes, 0, bytes.length, Math.floor(statSync(file).size / 2))
  closeSync(fd)
}

/** Bytes kept at the start of a `random` artifact: its header (magic, offsets) stays valid, so it opens. */
const HEADER = 4096

/**
 * A data directory holding `datasets` from the built one and their manifest entries: artifacts named in
 * `copies` are real copies (to be damaged), `random` keeps its header and is random bytes after it (same size), the rest are
 * symlinks to the shared files (never written).
 */
function dataDir(datasets: string[], { copies = [], random }: { copies?: string[]; random?: string } = {}): string {
  const dir = tempDir()
  const manifest = readManifest(SOURCE_OUT_DIR)
  const entries = Object.fromEntries(datasets.map((id) => [id, manifest.datasets[id]!]))
  for (const entry of Object.values(entries))
    for (const a of entry.artifacts) {
      const from = join(SOURCE_OUT_DIR, a.name)
      const to = join(dir, a.name)
      if (a.name === random) writeFileSync(to, Buffer.concat([readFileSync(from).subarray(0, HEADER), randomBytes(a.bytes - HEADER, 21)]))
      else if (copies.includes(a.name)) copyFileSync(from, to)
      else symlinkSync(from, to)
    }
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ ...manifest, datasets: entries }))
  return dir
}

async function appOver(dir: string, domains: Domain[], env: Record<string, string> = {}) {
  const config = testConfig({ ALMANAC_DATA_DIR: dir, ...env })
  const data = openDataDir(dir)
  const logged: string[] = []
  const mounted = await openDomains(config, data, domains, (line) => logged.push(line))
  const app = createApp(config, { data, domains, authenticator: createAuthenticator(config), quota: memoryQuotaStore() }, mounted)
  const send = async (method: string, path: string, body?: unknown) => {
    const headers: Record<string, string> = { 'x-api-key': TEST_KEY, 'x-response-form': 'bare' }
    if (body) headers['content-type'] = 'application/json'
    const res = await app.handle(new Request(`http://localhost${path}`, { method, headers, body: body ? JSON.stringify(body) : undefined }))
    return { status: res.status, body: (await res.json()) as any }
  }
  const get = (path: string) => send('GET', path)
  return { config, data, mounted, logged, get, send }
}

/** A hundred public addresses, as in the finding (89 of 100 bulk answers were wrong). */
const ADDRESSES = Array.from({ length: 100 }, (_, i) => `${8 + (i % 200)}.${(i * 37) % 256}.${(i * 91) % 256}.1`)

test('intact artifacts: nothing found before or after serving, the domain keeps serving', async () => {
  const { config, data, mounted, get } = await appOver(dataDir(['countries'], { copies: ['countries.sqlite'] }), [countries])
  await verifyDatasets(config, data, mounted, () => {})
  expect((await get('/api/v1/countries/FR')).status).toBe(200)
  expect((await get('/readyz')).status).toBe(200)
})

test(
  'a small artifact of random bytes, same size: its domain never answers from it, the first request is a 503 naming the ' + 'dataset',
  async () => {
    const intact = await appOver(dataDir(['ip', 'ip-lists']), [ip])
    expect((await intact.send('POST', '/api/v1/ip/bulk', { ips: ADDRESSES })).status).toBe(200)

    const dir = dataDir(['ip', 'ip-lists'], { random: 'ip-asn.tables' })
    const { mounted, logged, get, send } = await appOver(dir, [ip])
    // Structural: the domain was never opened on the corrupt table, so nothing could have been served from it.
    expect(mounted[0]!.service).toBeUndefined()
    const first = await send('POST', '/api/v1/ip/bulk', { ips: ADDRESSES })
    expect(first.status).toBe(503)
    expect(first.body.detail).toContain('ip-asn.tables of dataset ip does not match its sha256')
    expect(first.body.datasets).toEqual(['ip', 'ip-lists'])
    expect((await send('POST', '/api/v1/ip', { ip: '8.8.8.8' })).status).toBe(503)
    const ready = await get('/readyz')
    expect(ready.status).toBe(503)
    expect(JSON.stringify(ready.body)).not.toContain(dir)
    expect((await get('/api/v1/meta/datasets/ip')).body.status).toBe('unavailable')
    // The operator's log has the directory.
    expect(logged.join('\n')).toContain(dir)
  },
)

test('a large artifact (the city mmdb) is hashed in the background: found there, the domain answers 503 from then on', async () => {
  const dir = dataDir(['ip', 'ip-lists'], { copies: ['ip-city.mmdb'] })
  scribble(join(dir, 'ip-city.mmdb'))
  const { config, data, mounted, get, send } = await appOver(dir, [ip])
  expect((await send('POST', '/api/v1/ip', { ip: '8.8.8.8' })).status).toBe(200)
  const logged: string[] = []
  await verifyDatasets(config, data, mounted, (line) => logged.push(line))
  const answer = await send('POST', '/api/v1/ip', { ip: '8.8.8.8' })
  expect(answer.status).toBe(503)
  expect(answer.body.detail).toContain('ip-city.mmdb of dataset ip does not match its sha256')
  expect((await get('/readyz')).status).toBe(503)
  expect(logged.join('\n')).toContain(dir)
})

test('ALMANAC_DATA_HASH_BEFORE_SERVE_MAX_BYTES=0: every artifact is large, checked in the background as before', async () => {
  const dir = dataDir(['countries'], { copies: ['countries.sqlite'] })
  const { config, data, mounted, get } = await appOver(dir, [countries], { ALMANAC_DATA_HASH_BEFORE_SERVE_MAX_BYTES: '0' })
  expect((await get('/api/v1/countries/FR')).status).toBe(200)
  scribble(join(dir, 'countries.sqlite'))
  await verifyDatasets(config, data, mounted, () => {})
  const answer = await get('/api/v1/countries/FR')
  expect(answer.status).toBe(503)
  expect(answer.body.detail).toContain('countries.sqlite of dataset countries does not match its sha256')
  expect((await get('/api/v1/meta/datasets/countries')).body.status).toBe('unavailable')
})

test('a data refresh refuses a directory with a corrupt small artifact; the data in service stays', async () => {
  const config = testConfig()
  const data = openDataDir(dataDir(['ip', 'ip-lists']))
  const logged: string[] = []
  const mounted = await openDomains(config, data, [ip], () => {})
  const live = liveApp(
    config,
    {
      domains: [ip],
      authenticator: createAuthenticator(config),
      quota: memoryQuotaStore(),
      observability: createObservability(config),
      log: (l) => logged.push(l),
    },
    data,
    mounted,
  )
  try {
    const bulk = () =>
      live.handle(
        new Request('http://localhost/api/v1/ip/bulk', {
          method: 'POST',
          headers: { 'x-api-key': TEST_KEY, 'content-type': 'application/json' },
          body: JSON.stringify({ ips: ADDRESSES }),
        }),
      )
    const before = await (await bulk()).text()
    const answer = await live.activate(dataDir(['ip', 'ip-lists'], { random: 'ip-asn.tables' }))
    expect(answer.ok).toBe(false)
    if (!answer.ok) expect(answer.reason).toContain('ip-asn.tables of dataset ip does not match its sha256')
    expect(logged.at(-1)).toContain('data directory refused')
    expect(live.current.data.dir).toBe(data.dir)
    const after = await bulk()
    expect(after.status).toBe(200)
    expect(await after.text()).toBe(before)
  } finally {
    await live.close()
  }
})

test('a truncated artifact disables its domain at start', async () => {
  const dir = dataDir(['countries'], { copies: ['countries.sqlite'] })
  truncateSync(join(dir, 'countries.sqlite'), 8192)
  const { mounted, get } = await appOver(dir, [countries])
  expect(mounted[0]!.problem).toContain('countries.sqlite of dataset countries is 8192 bytes, the manifest says')
  expect((await get('/api/v1/countries/FR')).status).toBe(503)
})
