/**
 * IP geolocation speed. In-process: full-record lookups (place + network + security) on random public
 * addresses never repeated, against mmdb-lib decoding the same City database; then repeated addresses.
 * Over HTTP: POST /ip and POST /ip/bulk (100 addresses) against a hello-world in the same run.
 * Prints figures; asserts nothing. Run: `bun bench/ip.ts` (after `bun src/main.ts data build --only ip`).
 */
import { readFileSync } from 'node:fs'
import { Reader } from 'mmdb-lib'
import { loadConfig } from '../src/config.ts'
import { openDataDir } from '../src/data/open.ts'
import { CITY_ARTIFACT } from '../src/domains/ip/artifacts.ts'
import { reservedKind } from '../src/lib/ip-reserved.ts'
import { enveloped } from '../src/domains/ip/present.ts'
import { openIpService } from '../src/domains/ip/service.ts'
import { formatV4, formatV6, parseIp, type IpAddress } from '../src/lib/ip-address.ts'
import { compareWithHello } from './lib.ts'

const data = openDataDir()
const service = openIpService(loadConfig({ env: {} }), data)

/** Distinct random public addresses (special-purpose ranges excluded). */
function randomPublic(count: number, version: 4 | 6): string[] {
  const seen = new Set<string>()
  while (seen.size < count) {
    const w = crypto.getRandomValues(new Uint32Array(4))
    const text = version === 4 ? formatV4(w[0]!) : formatV6([((w[0]! & 0x1fffffff) | 0x20000000) >>> 0, w[1]!, w[2]!, w[3]!])
    if (!reservedKind(parseIp(text) as IpAddress)) seen.add(text)
  }
  return [...seen]
}

const rate = (n: number, ms: number) => `${Math.round((n / ms) * 1000).toLocaleString('en')}/s`

function time(label: string, inputs: string[], fn: (ip: string) => unknown, rounds = 1) {
  let sink = 0
  const t0 = performance.now()
  for (let r = 0; r < rounds; r++) for (const ip of inputs) if (fn(ip)) sink++
  const ms = performance.now() - t0
  console.log(`| ${label} | ${(inputs.length * rounds).toLocaleString('en')} | ${rate(inputs.length * rounds, ms)} |`)
  return sink
}

console.log('In-process lookups (random public addresses; "fresh" = never seen before by this process)')
console.log('| case | lookups | rate |')
console.log('|---|---:|---:|')
const v4 = randomPublic(1_000_000, 4)
const v6 = randomPublic(200_000, 6)
const ref = new Reader<any>(readFileSync(data.path(CITY_ARTIFACT)))
time('mmdb-lib City get(), IPv4, fresh (baseline)', v4.slice(0, 200_000), (ip) => ref.get(ip))
time('mmdb-lib City get(), IPv6, fresh (baseline)', v6.slice(0, 100_000), (ip) => ref.get(ip))
time('Almanac full record, IPv4, fresh', v4, (ip) => service.lookup(ip))
time('Almanac full record, IPv6, fresh', v6, (ip) => service.lookup(ip))
// Random 2000::/3 addresses mostly (99.9%) fall in space the City database does not cover, where the
// walk ends early; these are in networks it covers: random in the RIRs' /12s, kept when mmdb-lib finds
// a record (so none of our caches is warmed).
const covered = new Set<string>()
while (covered.size < 30_000) {
  const w = crypto.getRandomValues(new Uint32Array(4))
  const top = [0x2400, 0x2600, 0x2800, 0x2a00, 0x2c00][w[0]! % 5]!
  const ip = formatV6([((w[1]! & 0x000fffff) | (top << 16)) >>> 0, w[2]!, w[3]!, w[0]!])
  if (ref.get(ip)) covered.add(ip)
}
time('Almanac full record, IPv6 in covered networks, fresh', [...covered], (ip) => service.lookup(ip))
const hot = v4.slice(0, 1000)
time('Almanac full record, 1,000 IPv4 repeated', hot, (ip) => service.lookup(ip), 3000)
time('Almanac full record, 1,000 IPv6 repeated', v6.slice(0, 1000), (ip) => service.lookup(ip), 3000)
// The same addresses spelled the long way (upper case, every group, leading zeros): the canonical
// text has to be built, which the common, already-canonical spelling skips.
const longhand = v6.slice(0, 1000).map((ip) => {
  const w = (parseIp(ip) as IpAddress).v6!
  return w
    .flatMap((x) => [x >>> 16, x & 0xffff])
    .map((g) => g.toString(16).toUpperCase().padStart(4, '0'))
    .join(':')
})
time('Almanac full record, 1,000 IPv6 repeated, written longhand', longhand, (ip) => service.lookup(ip), 3000)

// JSC's JSON.stringify leaves its fast path for the whole body when any string holds a character
// above U+00FF (a city such as Ōsaka): the bulk body is measured both ways, with answers that are all
// Latin-1 and with one such name among them.
const wideText = (ip: string) => /[^\x00-\xff]/.test(JSON.stringify(enveloped(service.lookup(ip))))
const pool = randomPublic(20_000, 4)
const bulk = pool.filter((ip) => !wideText(ip)).slice(0, 100)
const bulkWide = [...bulk.slice(0, 99), pool.find(wideText)!] // last: the whole fast pass is wasted
await compareWithHello('HTTP (wrk, loopback, 32 connections)', [
  { name: 'POST /api/v1/ip (8.8.8.8, Form A)', method: 'POST', path: '/api/v1/ip', body: { ip: '8.8.8.8' } },
  {
    name: 'POST /api/v1/ip (2001:4860:4860::8888, Form B)',
    method: 'POST',
    path: '/api/v1/ip',
    body: { ip: '2001:4860:4860::8888' },
    headers: { 'x-response-form': 'bare' },
  },
  {
    name: 'POST /api/v1/ip/bulk (100 addresses, Latin-1 answers)',
    method: 'POST',
    path: '/api/v1/ip/bulk',
    body: { ips: bulk },
    connections: 8,
  },
  {
    name: 'POST /api/v1/ip/bulk (100 addresses, one name above U+00FF)',
    method: 'POST',
    path: '/api/v1/ip/bulk',
    body: { ips: bulkWide },
    connections: 8,
  },
  {
    name: 'POST /api/v1/ip/bulk (100 addresses, Latin-1 answers, 1 connection)',
    method: 'POST',
    path: '/api/v1/ip/bulk',
    body: { ips: bulk },
    connections: 1,
    threads: 1,
  },
])
