/**
 * CPU per request of the shared layers in process: `app.handle` over the real datasets, no socket, so the
 * figures hold only what the app does (plus building the Request and reading the body, the same on both
 * sides). Each case runs N prebuilt requests after 2,000 warm-up ones and reads process.cpuUsage().
 * A/B against another checkout: `BASE=/path/to/other/checkout bun bench/http-inprocess.ts` runs that
 * checkout's app and this one's alternately in child processes, ROUNDS rounds (default 2).
 * Prints figures; asserts nothing. Needs ALMANAC_MIRROR like the tests. N (default 20,000) per case.
 */
import { spawnSync } from 'bun'
import { resolve } from 'node:path'

const ROOT = process.env.APP_ROOT ?? resolve(import.meta.dir, '..')
const N = Number(process.env.N ?? 20_000)

if (process.env.BASE && !process.env.APP_ROOT) {
  for (let round = 1; round <= Number(process.env.ROUNDS ?? 2); round++)
    for (const root of [process.env.BASE, resolve(import.meta.dir, '..')]) {
      console.log(`\n== ${root}, round ${round}`)
      spawnSync({ cmd: ['bun', import.meta.path], env: { ...process.env, APP_ROOT: root }, stdout: 'inherit', stderr: 'inherit' })
    }
  process.exit(0)
}

const { testApp, TEST_KEY } = await import(`${ROOT}/test/support/app.ts`)
const app = await testApp()
const key = { 'x-api-key': TEST_KEY }
const bare = { ...key, 'x-response-form': 'bare' }
// Public IPv4 addresses spread over the space (first octet 11-210), a fresh lookup most of the time.
const ips = Array.from({ length: 4096 }, (_, i) => `${((i * 7919) % 200) + 11}.${(i * 31) % 256}.${(i * 17) % 256}.${(i % 250) + 1}`)
const cases: Record<string, (i: number) => Request> = {
  'GET /healthz': () => new Request('http://localhost/healthz'),
  'GET /api/v1/meta/datasets/countries (Form A)': () => new Request('http://localhost/api/v1/meta/datasets/countries', { headers: key }),
  'GET …/countries?fields=id,version (Form B)': () =>
    new Request('http://localhost/api/v1/meta/datasets/countries?fields=id,version', { headers: bare }),
  'GET /api/v1/countries/FR?fields=name (Form B)': () => new Request('http://localhost/api/v1/countries/FR?fields=name', { headers: bare }),
  'GET /api/v1/timezones/America/New_York (Form B)': () =>
    new Request('http://localhost/api/v1/timezones/America/New_York', { headers: bare }),
  'GET /api/v1/postal/US/90210 (Form B)': () => new Request('http://localhost/api/v1/postal/US/90210', { headers: bare }),
  'GET /api/v1/bible/kjv/search?q=jehoshaphat (Form B)': () =>
    new Request('http://localhost/api/v1/bible/kjv/search?q=jehoshaphat', { headers: bare }),
  'POST /api/v1/ip (Form A, public IPv4)': (i) => {
    const body = JSON.stringify({ ip: ips[i & 4095] })
    // With its Content-Length, as over HTTP (a string body alone gives a Request without one).
    const headers = { ...key, 'content-type': 'application/json', 'content-length': String(body.length) }
    return new Request('http://localhost/api/v1/ip', { method: 'POST', headers, body })
  },
}

console.log('| case | CPU µs/request |')
console.log('|---|---:|')
for (const [name, make] of Object.entries(cases)) {
  for (let i = 0; i < 2000; i++) await (await app.handle(make(i))).arrayBuffer()
  const requests = Array.from({ length: N }, (_, i) => make(i))
  const before = process.cpuUsage()
  for (const request of requests) {
    const res = await app.handle(request)
    if (res.status >= 300) throw new Error(`${name}: ${res.status} ${await res.text()}`)
    await res.arrayBuffer()
  }
  const cpu = process.cpuUsage(before)
  console.log(`| ${name} | ${((cpu.user + cpu.system) / N).toFixed(1)} |`)
}
await app.close()
