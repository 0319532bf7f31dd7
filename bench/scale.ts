/**
 * Scale-out (issue 18, Measures): two instances behind the same wrk load with the Redis quota store,
 * against one instance with the memory store, in one run. "Two instances" are two `almanac serve`
 * processes on one port (SO_REUSEPORT, what `--workers 2` starts): the kernel spreads wrk's connections
 * over them, as a load balancer would, without a balancer's own cost in the figures. One instance with
 * Redis is measured too, to separate the store's cost from the second process's gain.
 * Prints requests/s and p99 as ratios to the baseline; asserts nothing. The machine has 2 cores shared
 * with other work, and wrk itself takes CPU: a second instance cannot double anything here.
 * Run: `bun bench/scale.ts` (datasets built, Debian `redis-server` and `wrk`; `SECONDS=10` for longer runs).
 */
import { startRedis } from '../test/support/redis.ts'
import { type BenchServer, type LoadResult, load, startAlmanac } from './lib.ts'

const seconds = Number(process.env.SECONDS ?? 5)
const routes: { name: string; path: string; headers: Record<string, string> }[] = [
  { name: 'GET /api/v1/countries/FR?fields=name', path: '/api/v1/countries/FR?fields=name', headers: { 'x-response-form': 'bare' } },
  { name: 'GET /healthz (no quota)', path: '/healthz', headers: {} },
]

const redis = await startRedis()
const setups: { name: string; start: () => Promise<BenchServer> }[] = [
  { name: 'one instance, memory quota store (baseline)', start: () => startAlmanac({ ALMANAC_QUOTA_STORE: 'memory' }) },
  { name: 'one instance, Redis quota store', start: () => startAlmanac({ ALMANAC_QUOTA_STORE: redis.url }) },
  {
    name: 'two instances (one port), Redis quota store',
    start: () => startAlmanac({ ALMANAC_QUOTA_STORE: redis.url }, ['--workers', '2']),
  },
]
try {
  const results = new Map<string, LoadResult[]>()
  for (const setup of setups) {
    const server = await setup.start()
    try {
      // load() warms each route up for a second first, so both workers have compiled their hot paths.
      const out: LoadResult[] = []
      for (const route of routes) out.push(await load(server, { path: route.path, headers: route.headers, seconds }))
      results.set(setup.name, out)
    } finally {
      await server.stop()
    }
  }
  routes.forEach((route, i) => {
    const base = results.get(setups[0]!.name)![i]!
    console.log(`\n${route.name} (wrk, 32 connections, ${seconds} s each)`)
    console.log('| setup | req/s | req/s ratio | p50 ms | p99 ms | p99 ratio | non-2xx |')
    console.log('|---|---:|---:|---:|---:|---:|---:|')
    for (const setup of setups) {
      const r = results.get(setup.name)![i]!
      console.log(
        `| ${setup.name} | ${r.rps.toFixed(0)} | ${(r.rps / base.rps).toFixed(2)} | ${r.p50Ms.toFixed(2)} | ${r.p99Ms.toFixed(2)} ` +
          `| ${(r.p99Ms / base.p99Ms).toFixed(2)} | ${r.non2xx} |`,
      )
    }
  })
} finally {
  await redis.close()
}
