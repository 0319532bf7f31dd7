/**
 * The first start of the executable serves each domain as soon as its own datasets are ready: a domain
 * still opening answers 503 with Retry-After on its routes, /readyz lists it under `opening`, and the
 * other domains already answer. Opening is held here by a promise the test resolves (what the
 * extraction of the domain's artifacts is at run time), with the real countries and timezones domains
 * over the built datasets.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { OPENING_RETRY_SECONDS } from '../../src/data/opening.ts'
import { openDataDir } from '../../src/data/open.ts'
import { liveApp } from '../../src/refresh.ts'
import countries from '../../src/domains/countries/index.ts'
import timezones from '../../src/domains/timezones/index.ts'
import { createAuthenticator } from '../../src/http/admission/auth.ts'
import { createObservability } from '../../src/http/edge/observability.ts'
import { openDomain } from '../../src/domains/mount.ts'
import type { MountedDomain } from '../../src/domains/types.ts'
import { createQuotaStore } from '../../src/stores/index.ts'
import { TEST_KEY, testConfig } from '../support/app.ts'

const config = testConfig()
const data = openDataDir(config.dataDir)
const domains = [countries, timezones]
const quota = createQuotaStore(config)
const observability = createObservability(config)
const lines: string[] = []
const log = (l: string) => lines.push(l)

/** Both domains opening, as the server starts while extracting. */
const live = liveApp(
  config,
  { domains, authenticator: createAuthenticator(config), quota, log, observability },
  data,
  domains.map((domain): MountedDomain => ({ state: 'opening', domain })),
)
afterAll(async () => {
  await live.close()
  await quota.close()
})

const get = async (path: string) => {
  const res = await live.handle(new Request(`http://localhost${path}`, { headers: { 'x-api-key': TEST_KEY, 'x-response-form': 'bare' } }))
  return { status: res.status, headers: res.headers, body: (await res.json()) as any }
}

/** A gate the test opens: what `ready` waits for before the domain opens. */
function gate() {
  let open!: () => void
  let fail!: (e: Error) => void
  const promise = new Promise<void>((resolve, reject) => {
    open = resolve
    fail = reject
  })
  return { promise, open, fail }
}

describe('domains opening one by one', () => {
  test('a domain still opening answers 503 with Retry-After; /readyz lists it; once open it answers and the server is ready', async () => {
    const countriesReady = gate()
    const timezonesReady = gate()
    const opened = {
      countries: openDomain(config, data, countries, log, { ready: () => countriesReady.promise }).then((m) => live.remount(m)),
      timezones: openDomain(config, data, timezones, log, { ready: () => timezonesReady.promise }).then((m) => live.remount(m)),
    }

    let ready = await get('/readyz')
    expect(ready.status).toBe(503)
    expect(ready.headers.get('retry-after')).toBe(String(OPENING_RETRY_SECONDS))
    expect(ready.body.opening).toEqual(['countries', 'timezones'])
    expect(ready.body.domains).toEqual([
      { domain: 'countries', ready: false, opening: true },
      { domain: 'timezones', ready: false, opening: true },
    ])
    let route = await get('/api/v1/countries/DE')
    expect(route.status).toBe(503)
    expect(route.headers.get('retry-after')).toBe(String(OPENING_RETRY_SECONDS))
    expect(route.body.detail).toContain('The countries domain is still opening its datasets')
    expect(route.body.opening).toBe(true)
    expect(route.body.datasets).toEqual(['countries'])

    // Timezones' artifacts are in place: it serves while countries is still opening.
    timezonesReady.open()
    await opened.timezones
    expect((await get('/api/v1/timezones/Europe/Berlin')).status).toBe(200)
    ready = await get('/readyz')
    expect(ready.status).toBe(503)
    expect(ready.body.opening).toEqual(['countries'])
    expect(ready.body.domains).toEqual([
      { domain: 'countries', ready: false, opening: true },
      { domain: 'timezones', ready: true },
    ])
    expect((await get('/api/v1/countries/DE')).status).toBe(503)
    const datasets = await get('/api/v1/meta/datasets')
    expect(datasets.body.results.find((d: { id: string }) => d.id === 'countries').status).toBe('unavailable')

    countriesReady.open()
    await opened.countries
    route = await get('/api/v1/countries/DE')
    expect(route.status).toBe(200)
    expect(route.body.name).toBeDefined()
    ready = await get('/readyz')
    expect(ready.status).toBe(200)
    expect(ready.headers.get('retry-after')).toBeNull()
    expect(ready.body.opening).toBeUndefined()
    expect(lines).toEqual([])
  })

  test('a domain whose artifacts could not be extracted is disabled with the reason, the others serve', async () => {
    const failed = gate()
    const m = openDomain(config, data, countries, log, { ready: () => failed.promise })
    failed.fail(new Error('Cannot extract countries.sqlite (the disk is full).'))
    const mounted = await m
    expect(mounted.problem).toBe('The countries domain is disabled: Cannot extract countries.sqlite (the disk is full).')
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({
      level: 'error',
      msg: 'The countries domain is disabled: Cannot extract countries.sqlite (the disk is full).',
    })
    live.remount(mounted)
    const route = await get('/api/v1/countries/DE')
    expect(route.status).toBe(503)
    expect(route.headers.get('retry-after')).toBeNull()
    expect((await get('/readyz')).body.domains[0]).toEqual({ domain: 'countries', ready: false })
    expect((await get('/api/v1/timezones/Europe/Berlin')).status).toBe(200)
  })
})
