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
import { CITY_ARTIFACT } from '../src/domains/ip/build.ts'
import { reservedKind } from '../src/domains/ip/reserved.ts'
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
const hot = v4.slice(0, 1000)
time('Almanac full record, 1,000 IPv4 repeated', hot, (ip) => service.lookup(ip), 3000)
time('Almanac full record, 1,000 IPv6 repeated', v6.slice(0, 1000), (ip) => service.lookup(ip), 1000)

const bulk = randomPublic(100, 4)
await compareWithHello('HTTP (wrk, loopback, 32 connections)', [
  { name: 'POST /api/v1/ip (8.8.8.8, Form A)', method: 'POST', path: '/api/v1/ip', body: { ip: '8.8.8.8' } },
  { name: 'POST /api/v1/ip (2001:4860:4860::8888, Form B)', method: 'POST', path: '/api/v1/ip', body: { ip: '2001:4860:4860::8888' }, headers: { 'x-response-form': 'bare' } },
  { name: 'POST /api/v1/ip/bulk (100 addresses)', method: 'POST', path: '/api/v1/ip/bulk', body: { ips: bulk }, connections: 8 },
  { name: 'POST /api/v1/ip/bulk (100 addresses, 1 connection)', method: 'POST', path: '/api/v1/ip/bulk', body: { ips: bulk }, connections: 1, threads: 1 },
])
