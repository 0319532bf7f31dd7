/**
 * Artifacts are checked against the manifest: a wrong size disables the domain at start, wrong bytes of
 * the right size are found by the background hash (random bytes in a table otherwise answer wrongly with
 * /readyz green). The problem callers see names the dataset, never a file path.
 */
import { expect, test } from 'bun:test'
import { copyFileSync, openSync, writeFileSync, writeSync, closeSync, statSync, truncateSync } from 'node:fs'
import { join } from 'node:path'
import { openDataDir, readManifest, SOURCE_OUT_DIR } from '../../src/data/open.ts'
import countries from '../../src/domains/countries/index.ts'
import { createAuthenticator } from '../../src/http/auth.ts'
import { createApp, openDomains, verifyDatasets } from '../../src/server.ts'
import { memoryQuotaStore } from '../../src/stores/quota.ts'
import { testConfig, TEST_KEY } from '../support/app.ts'
import { rng } from '../support/random.ts'
import { tempDirs } from '../support/temp.ts'

const tempDir = tempDirs('almanac-integrity-')

/** A data directory holding only the countries dataset, copied from the built one. */
function countriesOnly(): string {
  const dir = tempDir()
  const manifest = readManifest(SOURCE_OUT_DIR)
  const entry = manifest.datasets.countries!
  for (const a of entry.artifacts) copyFileSync(join(SOURCE_OUT_DIR, a.name), join(dir, a.name))
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ ...manifest, datasets: { countries: entry } }))
  return dir
}

async function appOver(dir: string) {
  const config = testConfig({ ALMANAC_DATA_DIR: dir })
  const data = openDataDir(dir)
  const mounted = await openDomains(config, data, [countries], () => {})
  const app = createApp(
    config,
    { data, domains: [countries], authenticator: createAuthenticator(config), quota: memoryQuotaStore() },
    mounted,
  )
  const get = async (path: string) => {
    const res = await app.handle(new Request(`http://localhost${path}`, { headers: { 'x-api-key': TEST_KEY, 'x-response-form': 'bare' } }))
    return { status: res.status, body: (await res.json()) as any }
  }
  return { data, mounted, get }
}

test('intact artifacts: the background check finds nothing and the domain keeps serving', async () => {
  const { data, mounted, get } = await appOver(countriesOnly())
  await verifyDatasets(data, mounted, () => {})
  expect((await get('/api/v1/countries/FR')).status).toBe(200)
  expect((await get('/readyz')).status).toBe(200)
})

test('random bytes of the same size: found in the background, the domain answers 503 from then on', async () => {
  const dir = countriesOnly()
  const file = join(dir, 'countries.sqlite')
  const { data, mounted, get } = await appOver(dir)
  expect((await get('/api/v1/countries/FR')).status).toBe(200)

  // Overwrite 4 KiB in the middle of the file after it was opened, as a bad disk or a careless copy would.
  const random = rng(12)
  const bytes = Buffer.from(Array.from({ length: 4096 }, () => Math.floor(random() * 256)))
  const fd = openSync(file, 'r+')
  writeSync(fd, bytes, 0, bytes.length, Math.floor(statSync(file).size / 2))
  closeSync(fd)
  const logged: string[] = []
  await verifyDatasets(data, mounted, (line) => logged.push(line))

  const answer = await get('/api/v1/countries/FR')
  expect(answer.status).toBe(503)
  expect(answer.body.detail).toContain('countries.sqlite of dataset countries does not match its sha256')
  const ready = await get('/readyz')
  expect(ready.status).toBe(503)
  expect(JSON.stringify(ready.body)).not.toContain(dir)
  const meta = await get('/api/v1/meta/datasets/countries')
  expect(meta.body.status).toBe('unavailable')
  // The operator's log has the directory.
  expect(logged.join('\n')).toContain(dir)
})

test('a truncated artifact disables its domain at start', async () => {
  const dir = countriesOnly()
  truncateSync(join(dir, 'countries.sqlite'), 8192)
  const { mounted, get } = await appOver(dir)
  expect(mounted[0]!.problem).toContain('countries.sqlite of dataset countries is 8192 bytes, the manifest says')
  expect((await get('/api/v1/countries/FR')).status).toBe(503)
})
