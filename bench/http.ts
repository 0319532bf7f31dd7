/**
 * What the shared layers cost. One run, one machine: a bare-Elysia hello-world (the baseline), then Almanac
 * on the same loopback with wrk: `/healthz` (routing + metrics wrapper only), a light authenticated route
 * (auth + quota + form) in both forms and with `fields`, a real domain lookup, and the same light route with
 * the JSON access log on. Each row prints requests/s, p50/p99, the server's CPU time per request (from
 * /proc) and both ratios to the baseline. Target: the shared layers cost <= 30% over bare Elysia.
 * A second baseline serves the same hello-world through `Bun.serve({ fetch: app.handle })`, as Almanac does,
 * so the table separates the transport choice from the layers themselves.
 * Prints figures; asserts nothing. Run: `bun bench/http.ts` (datasets built; `SECONDS=10` for longer runs).
 */
import { load, printTable, start, startAlmanac, startHello, type Row } from './lib.ts'

const seconds = Number(process.env.SECONDS ?? 5)
const light = '/api/v1/meta/datasets/countries'

const hello = await startHello()
const helloFetch = await start('hello-world (bare Elysia, Bun.serve fetch: app.handle)', ['bun', 'bench/hello-fetch.ts'], {}, '/', {})
const almanac = await startAlmanac()
const logged = await startAlmanac({ ALMANAC_ACCESS_LOG: 'true' })
try {
  const rows: Row[] = [{ name: hello.name, result: await load(hello, { seconds }) }]
  rows.push({ name: helloFetch.name, result: await load(helloFetch, { seconds }) })
  const run = async (name: string, server = almanac, options: Parameters<typeof load>[1] = {}) =>
    rows.push({ name, result: await load(server, { seconds, ...options }) })
  await run('GET /healthz (no auth; routing, hooks, metrics)', almanac, { path: '/healthz' })
  await run(`GET ${light} (auth + quota + Form A)`, almanac, { path: light })
  await run(`GET ${light} (auth + quota + Form B)`, almanac, { path: light, headers: { 'x-response-form': 'bare' } })
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
  printTable(`Shared HTTP layers vs bare Elysia (wrk, 32 connections, ${seconds} s each)`, rows)

  const base = rows[0]!.result
  console.log('\n| case | throughput cost | CPU per request cost |')
  console.log('|---|---:|---:|')
  for (const { name, result } of rows.slice(1)) {
    const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(0)}%`
    console.log(`| ${name} | ${pct(base.rps / result.rps - 1)} | ${pct(result.cpuUsPerRequest / base.cpuUsPerRequest - 1)} |`)
  }
} finally {
  await hello.stop()
  await helloFetch.stop()
  await almanac.stop()
  await logged.stop()
}
