/**
 * Email risk speed. In-process: list checks (disposable + free + abuse, with and without the public
 * suffix lookup) against a plain JS Set.has over the same names as the baseline (target >= 1M/s). Over
 * HTTP: POST /email/risk with warm DNS and RDAP caches, as a ratio of a hello-world in the same run. Cold:
 * bulks of 10 never-seen domains against a loopback DNS server and RDAP fixture, p50/p99, in process and
 * over HTTP. Prints figures; asserts nothing. The machine's 2 cores are shared: figures are noisy.
 * Run: `bun bench/email.ts` (after `bun src/main.ts data build --only email`).
 */
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { getDomain } from 'tldts'
import { loadConfig } from '../src/config.ts'
import { openDataDir } from '../src/data/open.ts'
import { LISTS_ARTIFACT } from '../src/domains/email/artifacts.ts'
import { openEmailLists } from '../src/domains/email/lists.ts'
import { openEmailService } from '../src/domains/email/service.ts'
import { MIRROR } from '../test/support/mirror.ts'
import { startDnsServer } from '../test/domains/email/dns-server.ts'
import { startRdapServer } from '../test/domains/email/rdap-server.ts'
import { compareWithHello, percentile, startAlmanac } from './lib.ts'

const NOW = Date.now()
const dns = await startDnsServer({
  'warm.example': { mx: [[10, 'mx.warm.example']], ttl: 3600 },
  'mailinator.com': { mx: [[10, 'mx.mailinator.com']], ttl: 3600 },
})
const rdapZones: Record<string, { days: number }> = { 'warm.example': { days: 4000 }, 'mailinator.com': { days: 6000 } }
const rdap = startRdapServer(rdapZones, NOW)
const env = {
  ALMANAC_EMAIL_DNS_SERVERS: dns.address,
  ALMANAC_EMAIL_RDAP_URL: rdap.base,
  ALMANAC_STATE_DIR: mkdtempSync(join(tmpdir(), 'almanac-bench-email-')),
}
const service = openEmailService(loadConfig({ env }), openDataDir())

// Inputs: a mix of listed (abuse, disposable) and unlisted names, some as subdomains.
const abuse = readFileSync(join(MIRROR, 'email/abuse-domains-blocklistproject-2026-07-20.txt'), 'utf8').split('\n').filter(Boolean)
const names = Array.from({ length: 100_000 }, (_, i) =>
  i % 4 === 0
    ? abuse[(i * 7919) % abuse.length]!
    : i % 4 === 1
      ? `mail${i}.mailinator.com`
      : i % 4 === 2
        ? `company${i}.com`
        : `inbox.host${i}.co.uk`,
)
const registrable = names.map((n) => getDomain(n))
const baseline = new Set(abuse)

// The lists behind the service, opened the same way, for checks without the public suffix lookup.
const lists = openEmailLists(openDataDir().path(LISTS_ARTIFACT))

// Warm-up, untimed: the first timed loop would otherwise also pay for compiling the code under test.
for (let i = 0; i < 300_000; i++) {
  lists.check(names[i % names.length]!, registrable[i % names.length]!)
  service.listCheck(names[i % names.length]!)
  baseline.has(names[i % names.length]!)
}
/**
 * Rate of `fn` over `calls` calls, five times: the machine's cores are shared with other work, so the
 * median and the best of five are printed (the best is the closest to what the code costs alone).
 */
function rates(label: string, calls: number, fn: (i: number) => unknown) {
  const out: number[] = []
  let sink = 0
  for (let r = 0; r < 5; r++) {
    const t0 = performance.now()
    for (let i = 0; i < calls; i++) if (fn(i)) sink++
    out.push((calls / (performance.now() - t0)) * 1000)
  }
  out.sort((a, b) => a - b)
  const m = (x: number) => `${(x / 1e6).toFixed(2)} M/s`
  console.log(`| ${label} | ${calls.toLocaleString('en')} | ${m(out[2]!)} | ${m(out[4]!)} |`)
  return sink
}

console.log('\nIn-process list checks (100,000 names, mixed listed and unlisted, subdomains walked)')
console.log('| call | calls per round | median of 5 | best of 5 |')
console.log('|---|---:|---:|---:|')
rates('Set.has over the abuse list, exact name only (baseline)', 2_000_000, (i) => baseline.has(names[i % names.length]!))
rates(
  'list check, registrable domain known (disposable walk + free + abuse)',
  1_000_000,
  (i) => lists.check(names[i % names.length]!, registrable[i % names.length]!).disposable,
)
const plain = names.map((n, i) => registrable[i] ?? n)
rates(
  'list check of registrable domains only (most addresses: user@provider.tld)',
  1_000_000,
  (i) => lists.check(plain[i % plain.length]!, plain[i % plain.length]!).disposable,
)
rates(
  'list check incl. public suffix lookup (tldts getDomain), as a request does',
  1_000_000,
  (i) => service.listCheck(names[i % names.length]!).disposable,
)

// Cold bulks: 10 domains never seen before, each with an MX zone and an RDAP record.
let fresh = 0
const coldBulk = () =>
  Array.from({ length: 10 }, () => {
    const d = `cold${fresh++}.example`
    dns.zones.set(d, { mx: [[10, `mx.${d}`]] })
    rdapZones[d] = { days: 100 }
    return `user@${d}`
  })
const times: number[] = []
for (let i = 0; i < 200; i++) {
  const emails = coldBulk()
  const t0 = performance.now()
  await service.bulk(emails, 'bench')
  times.push(performance.now() - t0)
}
console.log(
  `\nBulk of 10 cold addresses in process (loopback DNS + RDAP, 200 bulks): p50 ${percentile(times, 50).toFixed(2)} ms, ` +
    `p99 ${percentile(times, 99).toFixed(2)} ms`,
)
service.close()

const almanac = await startAlmanac(env)
try {
  const http: number[] = []
  for (let i = 0; i < 200; i++) {
    const body = JSON.stringify({ emails: coldBulk() })
    const t0 = performance.now()
    const res = await fetch(`${almanac.url}/api/v1/email/risk/bulk`, {
      method: 'POST',
      headers: { ...almanac.headers, 'content-type': 'application/json' },
      body,
    })
    await res.arrayBuffer()
    http.push(performance.now() - t0)
  }
  console.log(
    `Bulk of 10 cold addresses over HTTP (one connection, 200 requests): p50 ${percentile(http, 50).toFixed(2)} ms, ` +
      `p99 ${percentile(http, 99).toFixed(2)} ms`,
  )
} finally {
  await almanac.stop()
}

await compareWithHello(
  'POST /email/risk, warm caches (wrk, loopback, 32 connections, 5 s each)',
  [
    { name: 'POST /api/v1/email/risk (warm, Form A)', method: 'POST', path: '/api/v1/email/risk', body: { email: 'someone@warm.example' } },
    {
      name: 'POST /api/v1/email/risk (warm, disposable, Form B)',
      method: 'POST',
      path: '/api/v1/email/risk',
      body: { email: 'someone@mailinator.com' },
      headers: { 'x-response-form': 'bare' },
    },
    {
      name: 'POST /api/v1/email/risk (invalid syntax, no lookups)',
      method: 'POST',
      path: '/api/v1/email/risk',
      body: { email: 'two@@example.com' },
    },
    {
      name: 'POST /api/v1/email/risk/bulk (10 warm)',
      method: 'POST',
      path: '/api/v1/email/risk/bulk',
      body: { emails: Array(10).fill('someone@warm.example') },
      connections: 8,
    },
  ],
  env,
)
await rdap.stop()
await dns.close()
