/**
 * What the shared layers cost. One run, one machine: a bare-Elysia hello-world (the baseline), then Almanac
 * on the same loopback with wrk: `/healthz` (routing + metrics wrapper only), a light authenticated route
 * (auth + quota + form) in both forms and with `fields`, a real domain lookup, and the same light route with
 * the JSON access log on. Each row prints requests/s, p50/p99, the server's CPU time per request (from
 * /proc) and both ratios to the baseline, then what each layer adds (the difference of two rows). Target (issue 24):
 * the shared layers within +60% CPU of the hello-world.
 * A second Almanac server starts each request as soon as it is read (`ALMANAC_START_TOGETHER=false`): its row
 * against the default's says what starting a turn's arrivals together (src/http/arrivals.ts) saves.
 * A second baseline serves the same hello-world through `Bun.serve({ fetch: app.handle })`, as Almanac does,
 * so the table separates the transport choice from the layers themselves.
 * `BASE=<another checkout>` adds an A/B: that checkout's server and this one's on the same rows, alternated, two
 * rounds, CPU per request side by side. It separates what the code costs from what the machine does to every figure
 * (the hello-world included) from one hour to the next.
 * A bare `Bun.serve` doing only what the SPEC asks of the light route and of `POST /ip` (bench/spec-floor.ts) runs
 * beside them: the table then says what the SPEC's own work costs over the hello-world on this machine, and
 * Almanac's layers over that floor.
 * Prints figures; asserts nothing. Run: `bun bench/http.ts` (datasets built; `SECONDS=10` for longer runs).
 */
import { BENCH_KEY, load, printTable, type Row, start, startAlmanac, startHello, versusBase } from './lib.ts'

const seconds = Number(process.env.SECONDS ?? 5)
const light = '/api/v1/meta/datasets/countries'

const hello = await startHello()
const helloFetch = await start('hello-world (bare Elysia, Bun.serve fetch: app.handle)', ['bun', 'bench/hello-fetch.ts'], {}, '/', {})
const floor = await start("the SPEC's floor (bare Bun.serve, bench/spec-floor.ts)", ['bun', 'bench/spec-floor.ts'], {}, '/', {
  'x-api-key': BENCH_KEY,
})
const almanac = await startAlmanac()
const logged = await startAlmanac({ ALMANAC_ACCESS_LOG: 'true' })
// Each request started as soon as it is read, as before src/http/arrivals.ts: what starting a turn's together saves.
const oneByOne = await startAlmanac({ ALMANAC_START_TOGETHER: 'false' })
try {
  const rows: Row[] = [{ name: hello.name, result: await load(hello, { seconds }) }]
  rows.push({ name: helloFetch.name, result: await load(helloFetch, { seconds }) })
  const run = async (name: string, server = almanac, options: Parameters<typeof load>[1] = {}) =>
    rows.push({ name, result: await load(server, { seconds, ...options }) })
  const fields = `${light}?fields=id,version`
  await run(`floor: GET ${fields} (key, credit, SPEC headers, fields, JSON)`, floor, { path: fields })
  await run('floor: POST /api/v1/ip (key, credit, body read and parsed, SPEC headers, no lookup)', floor, {
    method: 'POST',
    path: '/api/v1/ip',
    body: { ip: '81.2.69.142' },
  })
  await run('GET /healthz (no auth; routing, hooks, metrics)', almanac, { path: '/healthz' })
  await run(`GET ${light} (auth + quota + Form A)`, almanac, { path: light })
  await run(`GET ${light} (auth + quota + Form B)`, almanac, { path: light, headers: { 'x-response-form': 'bare' } })
  await run(`GET ${light} (Form B, each request started as it is read: ALMANAC_START_TOGETHER=false)`, oneByOne, {
    path: light,
    headers: { 'x-response-form': 'bare' },
  })
  await run(`GET ${light}?fields=id,version (auth + quota + Form B + fields)`, almanac, {
    path: `${light}?fields=id,version`,
    headers: { 'x-response-form': 'bare' },
  })
  await run('GET /api/v1/countries/FR?fields=name (a real lookup, all layers)', almanac, {
    path: '/api/v1/countries/FR?fields=name',
    headers: { 'x-response-form': 'bare' },
  })
  // http/compression.ts: a small answer pays only the Accept-Encoding read; the light route's 5.4 KB
  // Form A answer is gzipped (level 4) to ~1.5 KB.
  await run('GET /api/v1/countries/FR?fields=name + Accept-Encoding: gzip, br (small: sent as is)', almanac, {
    path: '/api/v1/countries/FR?fields=name',
    headers: { 'x-response-form': 'bare', 'accept-encoding': 'gzip, br' },
  })
  await run(`GET ${light} + Accept-Encoding: gzip, br (5.4 KB gzipped)`, almanac, {
    path: light,
    headers: { 'accept-encoding': 'gzip, br' },
  })
  await run(`GET ${light}?fields=id,version (Form B + fields + JSON access log)`, logged, {
    path: `${light}?fields=id,version`,
    headers: { 'x-response-form': 'bare' },
  })
  // One address for every request: the lookup is the same work each time (bench/ip.ts measures fresh ones).
  await run('POST /api/v1/ip {"ip":"81.2.69.142"} (Form A: City + ASN + security lists)', almanac, {
    method: 'POST',
    path: '/api/v1/ip',
    body: { ip: '81.2.69.142' },
  })
  printTable(`Shared HTTP layers vs bare Elysia (wrk, 32 connections, ${seconds} s each)`, rows)

  const base = rows[0]!.result
  console.log('\n| case | throughput cost | CPU per request cost |')
  console.log('|---|---:|---:|')
  for (const { name, result } of rows.slice(1)) {
    const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(0)}%`
    console.log(`| ${name} | ${pct(base.rps / result.rps - 1)} | ${pct(result.cpuUsPerRequest / base.cpuUsPerRequest - 1)} |`)
  }

  // What each layer adds, as the difference of two rows of this run: server CPU per request, and that as a
  // share of the hello-world's (the target: all shared layers together within +60%).
  const cpuOf = (prefix: string) => rows.find((r) => r.name.startsWith(prefix))!.result.cpuUsPerRequest
  const layers: [layer: string, row: string, over: string][] = [
    ['Bun.serve({ fetch: app.handle }) instead of Elysia listen', 'hello-world (bare Elysia, Bun.serve', 'hello-world (bare Elysia)'],
    ['routing, hooks, request id, metrics, CORS, compression check', 'GET /healthz', 'hello-world (bare Elysia, Bun.serve'],
    ['auth + admission + quota + turns + Form B reply', `GET ${light} (auth + quota + Form B)`, 'GET /healthz'],
    ["a turn's arrivals started together (negative: a saving)", `GET ${light} (auth + quota + Form B)`, `GET ${light} (Form B, each`],
    ['Form A envelope (and its larger body)', `GET ${light} (auth + quota + Form A)`, `GET ${light} (auth + quota + Form B)`],
    ['`fields` (smaller body)', `GET ${light}?fields=id,version (auth`, `GET ${light} (auth + quota + Form B)`],
    ['JSON access log', `GET ${light}?fields=id,version (Form B + fields + JSON access log)`, `GET ${light}?fields=id,version (auth`],
    ['gzip of a 5.4 KB answer', `GET ${light} + Accept-Encoding`, `GET ${light} (auth + quota + Form A)`],
  ]
  console.log('\n| layer | CPU µs/request added | share of the hello-world |')
  console.log('|---|---:|---:|')
  for (const [layer, row, over] of layers) {
    const added = cpuOf(row) - cpuOf(over)
    console.log(`| ${layer} | ${added.toFixed(1)} | ${added >= 0 ? '+' : ''}${((added / base.cpuUsPerRequest) * 100).toFixed(0)}% |`)
  }
  // What the SPEC alone costs over the hello-world, and Almanac's layers over that floor: the same answer
  // without a framework, validation, metrics, CORS, compression or problem documents.
  console.log("\n| Almanac's row | CPU µs/request | the SPEC's floor | over the floor | the floor over the hello-world |")
  console.log('|---|---:|---:|---:|---:|')
  for (const [row, over] of [
    [`GET ${fields} (auth`, 'floor: GET'],
    ['POST /api/v1/ip', 'floor: POST'],
  ] as const) {
    const ours = cpuOf(row)
    const least = cpuOf(over)
    const share = (x: number) => `+${((x / base.cpuUsPerRequest - 1) * 100).toFixed(0)}%`
    const beyond = `${ours >= least ? '+' : ''}${(ours - least).toFixed(1)} µs`
    console.log(`| ${row}… | ${ours.toFixed(1)} | ${least.toFixed(1)} | ${beyond} | ${share(least)} |`)
  }
  if (process.env.BASE) await versusBaseRows(process.env.BASE)
} finally {
  await hello.stop()
  await floor.stop()
  await helloFetch.stop()
  await almanac.stop()
  await logged.stop()
  await oneByOne.stop()
}

/** This checkout's server against BASE's on the rows that carry the shared layers, alternated, two rounds. */
function versusBaseRows(root: string) {
  const bare = { 'x-response-form': 'bare' }
  return versusBase(root, [
    ['GET /healthz', { seconds, path: '/healthz' }],
    [`GET ${light} (Form B)`, { seconds, path: light, headers: bare }],
    ['GET /api/v1/countries/FR?fields=name (Form B)', { seconds, path: '/api/v1/countries/FR?fields=name', headers: bare }],
    ['POST /api/v1/ip {"ip":"81.2.69.142"}', { seconds, method: 'POST', path: '/api/v1/ip', body: { ip: '81.2.69.142' } }],
  ])
}
