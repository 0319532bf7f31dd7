/**
 * What the shared layers cost. One run, one machine: a bare-Elysia hello-world (the baseline), then Almanac
 * on the same loopback with wrk: `/healthz` (routing + metrics wrapper only), a light authenticated route
 * (auth + quota + form) in both forms and with `fields`, a real domain lookup, and the same light route with
 * the JSON access log on. Each row runs right after a hello-world run of its own, for BENCH_ROUNDS rounds (default
 * 2; `besideHello` in lib.ts): a figure here moves by a third between minutes, so a row is only compared with the
 * hello-world measured beside it. Each row prints requests/s, p50/p99, the server's CPU time per request (from
 * /proc) and that over its hello-world's; then each row's lowest and highest round, and what each layer adds (the
 * difference of two rows of one round). Target (issue 24): the shared layers within +60% CPU of the hello-world.
 * A second Almanac server starts each request as soon as it is read (`ALMANAC_START_TOGETHER=false`): its row
 * against the default's says what starting a turn's arrivals together (src/http/edge/arrivals.ts) saves.
 * A second baseline serves the same hello-world through `Bun.serve({ fetch: app.handle })`, as Almanac does,
 * so the table separates the transport choice from the layers themselves.
 * `BASE=<another checkout>` adds an A/B: that checkout's server and this one's on the same rows, alternated, two
 * rounds, CPU per request side by side. It separates what the code costs from what the machine does to every figure
 * (the hello-world included) from one hour to the next.
 * A bare `Bun.serve` doing only what the SPEC asks of the light route and of `POST /ip` (bench/spec-floor.ts) runs
 * beside them: the table then says what the SPEC's own work costs over the hello-world on this machine, and
 * Almanac's layers over that floor.
 * Last, the quota stores: the same lookup on a server counting in memory and one on the default SQLite store
 * (write-behind, src/stores/quota-sqlite.ts), alternated in one run, with the SQLite ÷ memory throughput per round
 * (target: ≥ 0.95). `BENCH_SECTION=quota-stores` runs that table alone. Then the usage ledger off and on, the same
 * way: its CPU per request on ÷ off (target: ≤ 1.03; `BENCH_SECTION=ledger` alone). `BENCH_SECTION=leases` (only
 * when asked): memory against a local Redis Cluster with credit leases, the same way (target: ≥ 0.95).
 * Every Almanac server has a state dir of its own, so each owns its quota file (sharing one would make them take turns).
 * Prints figures; asserts nothing. Run: `bun bench/http.ts` (datasets built; `SECONDS=10` for longer runs, `BENCH_ROUNDS=4`
 * for more rounds).
 */
import { mkdtempSync } from 'node:fs'
import { clusterUrl, startCluster } from '../test/support/redis-topologies.ts'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  BENCH_KEY,
  type BesideCase,
  type BesideRun,
  benchRounds,
  besideHello,
  load,
  range,
  start,
  startAlmanac,
  startHello,
  versusBase,
} from './lib.ts'

const seconds = Number(process.env.SECONDS ?? 5)
const rounds = benchRounds()
const light = '/api/v1/meta/datasets/countries'
const ownState = (env: Record<string, string> = {}) => ({ ALMANAC_STATE_DIR: mkdtempSync(join(tmpdir(), 'almanac-bench-state-')), ...env })

const sections: Record<string, () => Promise<void>> = { 'quota-stores': quotaStoreRows, ledger: ledgerRows, leases: leaseRows }
if (process.env.BENCH_SECTION && sections[process.env.BENCH_SECTION]) {
  await sections[process.env.BENCH_SECTION]!()
  process.exit(0)
}

const hello = await startHello()
const helloFetch = await start('hello-world (bare Elysia, Bun.serve fetch: app.handle)', ['bun', 'bench/hello-fetch.ts'], {}, '/', {})
const floor = await start("the SPEC's floor (bare Bun.serve, bench/spec-floor.ts)", ['bun', 'bench/spec-floor.ts'], {}, '/', {
  'x-api-key': BENCH_KEY,
})
const almanac = await startAlmanac(ownState())
const logged = await startAlmanac(ownState({ ALMANAC_ACCESS_LOG: 'true' }))
// Each request started as soon as it is read, as before src/http/edge/arrivals.ts: what starting a turn's together saves.
const oneByOne = await startAlmanac(ownState({ ALMANAC_START_TOGETHER: 'false' }))
try {
  const bare = { 'x-response-form': 'bare' }
  const fields = `${light}?fields=id,version`
  const cases: BesideCase[] = [
    { name: helloFetch.name, server: helloFetch },
    { name: `floor: GET ${fields} (key, credit, SPEC headers, fields, JSON)`, server: floor, path: fields },
    {
      name: 'floor: POST /api/v1/ip (key, credit, body read and parsed, SPEC headers, no lookup)',
      server: floor,
      method: 'POST',
      path: '/api/v1/ip',
      body: { ip: '81.2.69.142' },
    },
    { name: 'GET /healthz (no auth; routing, hooks, metrics)', server: almanac, path: '/healthz' },
    { name: `GET ${light} (auth + quota + Form A)`, server: almanac, path: light },
    { name: `GET ${light} (auth + quota + Form B)`, server: almanac, path: light, headers: bare },
    {
      name: `GET ${light} (Form B, each request started as it is read: ALMANAC_START_TOGETHER=false)`,
      server: oneByOne,
      path: light,
      headers: bare,
    },
    { name: `GET ${fields} (auth + quota + Form B + fields)`, server: almanac, path: fields, headers: bare },
    {
      name: 'GET /api/v1/countries/FR?fields=name (a real lookup, all layers)',
      server: almanac,
      path: '/api/v1/countries/FR?fields=name',
      headers: bare,
    },
    // http/edge/compression.ts: a small answer pays only the Accept-Encoding read; the light route's 5.4 KB
    // Form A answer is gzipped (level 4) to ~1.5 KB.
    {
      name: 'GET /api/v1/countries/FR?fields=name + Accept-Encoding: gzip, br (small: sent as is)',
      server: almanac,
      path: '/api/v1/countries/FR?fields=name',
      headers: { ...bare, 'accept-encoding': 'gzip, br' },
    },
    {
      name: `GET ${light} + Accept-Encoding: gzip, br (5.4 KB gzipped)`,
      server: almanac,
      path: light,
      headers: { 'accept-encoding': 'gzip, br' },
    },
    { name: `GET ${fields} (Form B + fields + JSON access log)`, server: logged, path: fields, headers: bare },
    // One address for every request: the lookup is the same work each time (bench/ip.ts measures fresh ones).
    {
      name: 'POST /api/v1/ip {"ip":"81.2.69.142"} (Form A: City + ASN + security lists)',
      server: almanac,
      method: 'POST',
      path: '/api/v1/ip',
      body: { ip: '81.2.69.142' },
    },
  ].map((c) => ({ ...c, seconds }))

  const over = (cpu: number, run: BesideRun) => cpu / run.hello.cpuUsPerRequest - 1
  const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(0)}%`
  const micros = (xs: number[]) => range(xs, 1)
  const pcts = (xs: number[]) => `${pct(Math.min(...xs))} to ${pct(Math.max(...xs))}`
  console.log(
    `\nShared HTTP layers, each row after a hello-world run (bare Elysia), ${rounds} rounds (wrk, 32 connections, ${seconds} s each)`,
  )
  console.log(
    '| case | round | req/s | hello-world req/s | CPU µs/req | hello-world CPU µs/req | CPU over the hello-world ' +
      '| p50 ms | p99 ms | non-2xx |',
  )
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
  const runs = await besideHello(hello, cases, rounds, (c, run) => {
    const { result: r, hello: h } = run
    console.log(
      `| ${c.name} | ${run.round} | ${r.rps.toFixed(0)} | ${h.rps.toFixed(0)} ` +
        `| ${r.cpuUsPerRequest.toFixed(1)} | ${h.cpuUsPerRequest.toFixed(1)} ` +
        `| ${pct(over(r.cpuUsPerRequest, run))} | ${r.p50Ms.toFixed(2)} | ${r.p99Ms.toFixed(2)} | ${r.non2xx} |`,
    )
  })

  console.log('\n| case | CPU µs/request | CPU over the hello-world | hello-world CPU µs/request |')
  console.log('|---|---:|---:|---:|')
  for (const [name, rs] of runs) {
    const cpu = micros(rs.map((r) => r.result.cpuUsPerRequest))
    const helloCpu = micros(rs.map((r) => r.hello.cpuUsPerRequest))
    console.log(`| ${name} | ${cpu} | ${pcts(rs.map((r) => over(r.result.cpuUsPerRequest, r)))} | ${helloCpu} |`)
  }

  // What each layer adds, as the difference of two rows of one round: server CPU per request, and that as a share
  // of the two rows' hello-worlds (the target: all shared layers together within +60%).
  const runsOf = (prefix: string) => [...runs].find(([name]) => name.startsWith(prefix))![1]
  // `below` '' is the row's own hello-world run.
  const added = (row: string, below: string) =>
    runsOf(row).map((r, i) => {
      const b = below ? runsOf(below)[i]! : { result: r.hello, hello: r.hello }
      const us = r.result.cpuUsPerRequest - b.result.cpuUsPerRequest
      return { us, share: us / ((r.hello.cpuUsPerRequest + b.hello.cpuUsPerRequest) / 2) }
    })
  const layers: [layer: string, row: string, below: string][] = [
    ['Bun.serve({ fetch: app.handle }) instead of Elysia listen', 'hello-world (bare Elysia, Bun.serve', ''],
    ['routing, hooks, request id, metrics, CORS, compression check', 'GET /healthz', 'hello-world (bare Elysia, Bun.serve'],
    ['auth + admission + quota + turns + Form B reply', `GET ${light} (auth + quota + Form B)`, 'GET /healthz'],
    ["a turn's arrivals started together (negative: a saving)", `GET ${light} (auth + quota + Form B)`, `GET ${light} (Form B, each`],
    ['Form A envelope (and its larger body)', `GET ${light} (auth + quota + Form A)`, `GET ${light} (auth + quota + Form B)`],
    ['`fields` (smaller body)', `GET ${fields} (auth`, `GET ${light} (auth + quota + Form B)`],
    ['JSON access log', `GET ${fields} (Form B + fields + JSON access log)`, `GET ${fields} (auth`],
    ['gzip of a 5.4 KB answer', `GET ${light} + Accept-Encoding`, `GET ${light} (auth + quota + Form A)`],
  ]
  console.log('\n| layer | CPU µs/request added, lowest–highest round | share of the hello-world |')
  console.log('|---|---:|---:|')
  for (const [layer, row, below] of layers) {
    const each = added(row, below)
    const us = micros(each.map((e) => e.us))
    console.log(`| ${layer} | ${us} | ${pcts(each.map((e) => e.share))} |`)
  }
  // What the SPEC alone costs over the hello-world, and Almanac's layers over that floor: the same answer
  // without a framework, validation, metrics, CORS, compression or problem documents.
  // Almanac ÷ floor: each round's CPU a request over the floor's of the same round, and the same with each
  // divided by its own hello-world first (what is left once the minute's drift is taken out). Issue 43's
  // targets: the light GET within 1.15×, POST /ip within 1.2×.
  console.log(
    "\n| Almanac's row | CPU over the hello-world | the SPEC's floor over the hello-world | Almanac over the floor, µs " +
      '| Almanac ÷ floor | the same, each over its hello-world | target |',
  )
  console.log('|---|---:|---:|---:|---:|---:|---:|')
  for (const [row, least, target] of [
    [`GET ${fields} (auth`, 'floor: GET', '≤ 1.15×'],
    ['POST /api/v1/ip', 'floor: POST', '≤ 1.2×'],
  ] as const) {
    const ours = runsOf(row)
    const floors = runsOf(least)
    const ratios = ours.map((r, i) => r.result.cpuUsPerRequest / floors[i]!.result.cpuUsPerRequest)
    const normalised = ours.map(
      (r, i) => r.result.cpuUsPerRequest / r.hello.cpuUsPerRequest / (floors[i]!.result.cpuUsPerRequest / floors[i]!.hello.cpuUsPerRequest),
    )
    console.log(
      `| ${row}… | ${pcts(ours.map((r) => over(r.result.cpuUsPerRequest, r)))} ` +
        `| ${pcts(floors.map((r) => over(r.result.cpuUsPerRequest, r)))} ` +
        `| ${micros(added(row, least).map((e) => e.us))} | ${range(ratios, 2)}× | ${range(normalised, 2)}× | ${target} |`,
    )
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
await quotaStoreRows()
await ledgerRows()

/**
 * Two servers that differ in one setting, on the same lookup, alternated one round after another (which goes
 * first alternates too, so neither always meets the machine a minute later); the ratios are of the same round.
 */
async function alternated(title: string, [aName, aEnv]: [string, Record<string, string>], [bName, bEnv]: [string, Record<string, string>]) {
  const path = '/api/v1/countries/FR'
  const a = await startAlmanac(ownState(aEnv))
  const b = await startAlmanac(ownState(bEnv))
  try {
    console.log(`\n${title}: GET ${path} (Form A, one key), wrk 2 threads, 32 connections, ${seconds} s a run, ${rounds} rounds`)
    console.log(
      `| round | ${aName} req/s | ${bName} req/s | ${bName} ÷ ${aName} req/s | ${aName} CPU µs/req | ${bName} CPU µs/req ` +
        `| CPU ${bName} ÷ ${aName} | non-2xx |`,
    )
    console.log('|---:|---:|---:|---:|---:|---:|---:|---:|')
    const rps: number[] = []
    const cpu: number[] = []
    for (let round = 1; round <= rounds; round++) {
      const order = round % 2 ? [a, b] : [b, a]
      const [first, second] = [await load(order[0]!, { path, seconds }), await load(order[1]!, { path, seconds })]
      const [x, y] = round % 2 ? [first, second] : [second, first]
      rps.push(y.rps / x.rps)
      cpu.push(y.cpuUsPerRequest / x.cpuUsPerRequest)
      console.log(
        `| ${round} | ${x.rps.toFixed(0)} | ${y.rps.toFixed(0)} | ${(y.rps / x.rps).toFixed(3)} ` +
          `| ${x.cpuUsPerRequest.toFixed(1)} | ${y.cpuUsPerRequest.toFixed(1)} | ${(y.cpuUsPerRequest / x.cpuUsPerRequest).toFixed(3)} ` +
          `| ${x.non2xx + y.non2xx} |`,
      )
    }
    return { rps, cpu }
  } finally {
    await a.stop()
    await b.stop()
  }
}

/** The memory quota store against the SQLite one (its state dir's only user: the owner, counting in memory and writing behind). */
async function quotaStoreRows() {
  const { rps } = await alternated(
    'Quota stores',
    ['memory', { ALMANAC_QUOTA_STORE: 'memory' }],
    ['sqlite', { ALMANAC_QUOTA_STORE: 'sqlite' }],
  )
  console.log(`\nsqlite ÷ memory throughput, lowest–highest round: ${range(rps, 3)} (target ≥ 0.95)`)
}

/**
 * The memory quota store against a Redis Cluster (3 masters, 3 replicas, Debian redis-server on loopback, on the
 * same cores) with credit leases of 1,000 credits for the key's plan: one instance's throughput with leases
 * against memory's. The ledger is each store's default (memory; the cluster), as a deployment has it.
 */
async function leaseRows() {
  const cluster = await startCluster(3, 1)
  process.once('exit', () => cluster.stopNow())
  try {
    const leased = { ALMANAC_QUOTA_STORE: clusterUrl(cluster), ALMANAC_QUOTA_LEASES: 'bench:1000' }
    const { rps } = await alternated('Credit leases', ['memory', { ALMANAC_QUOTA_STORE: 'memory' }], ['cluster+leases', leased])
    console.log(`\ncluster with leases ÷ memory throughput, lowest–highest round: ${range(rps, 3)} (target ≥ 0.95)`)
  } finally {
    await cluster.close()
  }
}

/** The usage ledger off and on (SQLite store, the default): what counting every request into it costs. */
async function ledgerRows() {
  const { cpu } = await alternated('Usage ledger', ['off', { ALMANAC_USAGE_LEDGER: 'false' }], ['on', { ALMANAC_USAGE_LEDGER: 'true' }])
  console.log(`\nledger on ÷ off, CPU per request, lowest–highest round: ${range(cpu, 3)} (target ≤ 1.03)`)
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
