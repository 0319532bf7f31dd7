/**
 * What a request costs when the caches are cold, as they are in a server between two requests (the kernel's
 * network stack, the load generator and other processes run in between). In process, `app.handle` over the
 * real datasets: each case runs its requests one at a time, and times the request alone, once with nothing in
 * between and once with MB megabytes of memory touched before each request (default 4; this machine's L2 is
 * 512 KiB a core, its L3 8 MiB shared). The ratio says how much of a request is memory traffic rather than
 * instructions; a change that touches less memory shows here before it shows over HTTP.
 * Prints figures; asserts nothing. Run: `ALMANAC_MIRROR=… bun bench/cold-caches.ts` (datasets built); ROUNDS
 * (default 2), N requests a case and round (default 2,000).
 */
import { testApp, TEST_KEY } from '../test/support/app.ts'
import { cacheEvictor } from './lib.ts'

const MB = Number(process.env.MB ?? 4)
const N = Number(process.env.N ?? 2000)
const ROUNDS = Number(process.env.ROUNDS ?? 2)

const app = await testApp()
const bare = { 'x-api-key': TEST_KEY, 'x-response-form': 'bare' }
const post = (path: string, body: unknown) => {
  const text = JSON.stringify(body)
  return new Request(`http://localhost${path}`, {
    method: 'POST',
    headers: { ...bare, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) },
    body: text,
  })
}
const cases: [string, () => Request][] = [
  ['GET /healthz', () => new Request('http://localhost/healthz')],
  ['GET /api/v1/meta/datasets/countries (Form B)', () => new Request('http://localhost/api/v1/meta/datasets/countries', { headers: bare })],
  [
    'GET /api/v1/countries/FR?fields=name (Form B)',
    () => new Request('http://localhost/api/v1/countries/FR?fields=name', { headers: bare }),
  ],
  ['POST /api/v1/ip (one address, Form B)', () => post('/api/v1/ip', { ip: '81.2.69.142' })],
]

/** What the request touched is evicted before the next one. */
const pollute = cacheEvictor(MB << 20)

/** Mean wall time of the request alone, µs. */
async function run(make: () => Request, cold: boolean): Promise<number> {
  const requests = Array.from({ length: N }, make)
  let total = 0
  for (const request of requests) {
    if (cold) pollute()
    const started = performance.now()
    await (await app.handle(request)).arrayBuffer()
    total += performance.now() - started
  }
  return (total / N) * 1000
}

console.log(`\nIn process, one request at a time, ${N} a case and round; µs a request (wall, the request alone)`)
console.log(`| case | round | caches hot | ${MB} MB touched before each | cold / hot |`)
console.log('|---|---:|---:|---:|---:|')
for (const [, make] of cases) await run(make, false) // warm-up: compiled, caches of the app filled
for (let round = 1; round <= ROUNDS; round++)
  for (const [name, make] of cases) {
    const hot = await run(make, false)
    const cold = await run(make, true)
    console.log(`| ${name} | ${round} | ${hot.toFixed(1)} | ${cold.toFixed(1)} | ${(cold / hot).toFixed(2)} |`)
  }
await app.close()
process.exit(0)
