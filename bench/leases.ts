/**
 * Credit leases (src/stores/quota-leases.ts, issue 46): Redis operations per credited request with and
 * without them, and what leasing costs in refusals while the plan still had credits.
 *
 * What runs: a real `redis-server` (test/support/redis.ts; CLUSTER=1: a Redis Cluster of 3 masters, no
 * replicas) and INSTANCES quota stores in this process, each on a connection of its own as separate
 * processes would be, with the settings they have in production (a tick every 100 ms, a 300 ms wait for holders,
 * wants heard on the channel, blocks sized by the last 30 s).
 * Each instance runs CONCURRENCY consumes at a time, closed loop. Rows:
 * - hot: one key, a plan far larger than the demand (nothing refused), REQUESTS requests of 1 credit (5% of 10);
 * - hot, running out: the same key and mix against a plan of 60% of the demand, so the last credits are
 *   fought over and leases must be given back (the ask/return path);
 * - cold: COLD keys of REQUESTS / COLD requests each (1 credit): each key's lease taken and given back for
 *   a few requests.
 * Figures per row: client operations per admitted request, and per request, refused ones included (`INFO
 * commandstats` deltas summed over the masters: EVALSHA/EVAL and ZRANGEBYSCORE; the GET, INCRBY, HINCRBY,
 * PUBLISH … that scripts run inside Redis are left out, their time is in the script's), Redis CPU µs
 * per admitted request (those commands' `usec`),
 * credits over-spent (must be 0: the counter after every store closed, against the plan), credits counted
 * unspent after close (the counter minus what was admitted: leases not given back; should be 0), and refused while
 * left: a refusal whose cost still fitted what had not been admitted when it came back (an upper bound: an
 * admission whose reply is on its way makes a refusal look early), and requests a second in this process
 * (2 shared cores beside Redis: a relative figure only). The operations counted include the stores' close (the
 * leases given back), and the counter is read after it.
 *
 * Run: `bun bench/leases.ts`. Settings: INSTANCES (4), CONCURRENCY (16 per instance), REQUESTS (40000 per row),
 * BLOCKS (`100,1000`: the lease block sizes tried beside no leases), COLD (2000 keys), CLUSTER (0).
 */
import type { Plan } from '../src/config.ts'
import { leasingQuotaStore } from '../src/stores/quota-leases.ts'
import type { QuotaStore } from '../src/stores/quota.ts'
import { redisQuotaStore } from '../src/stores/quota-redis.ts'
import { redisConnection } from '../src/stores/redis.ts'
import { startRedis } from '../test/support/redis.ts'
import { ask, clusterUrl, startCluster } from '../test/support/redis-topologies.ts'

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback)
const INSTANCES = env('INSTANCES', 4)
const CONCURRENCY = env('CONCURRENCY', 16)
const REQUESTS = env('REQUESTS', 40_000)
const COLD = env('COLD', 2000)
const BLOCKS = (process.env.BLOCKS ?? '100,1000').split(',').map(Number)
const CLUSTER = process.env.CLUSTER === '1'

/** Commands a client sends on the quota path; the rest of commandstats is scripts' insides or this bench's INFO. */
// ZADD and ZREMRANGEBYSCORE now run inside the WANT script, PUBLISH inside LEASE and RETURN; a poll (ZRANGEBYSCORE)
// is still sent by the client, while the channel is down.
const CLIENT_OPS = new Set(['evalsha', 'eval', 'zrangebyscore'])

async function clientOps(ports: number[]): Promise<{ calls: number; usec: number }> {
  let calls = 0
  let usec = 0
  for (const port of ports) {
    const text = String((await ask(port, 'INFO', ['commandstats'])) ?? '')
    for (const m of text.matchAll(/cmdstat_([^:]+):calls=(\d+),usec=(\d+)/g)) {
      if (!CLIENT_OPS.has(m[1]!)) continue
      calls += Number(m[2])
      usec += Number(m[3])
    }
  }
  return { calls, usec }
}

interface Row {
  name: string
  plan: Plan
  /** The subject and cost of request `i`. */
  request(i: number): [string, number]
  /** Credits the plan allows over every subject of the row (to count over-spending and refusals while left). */
  subjects: string[]
}

let prefixes = 0

async function run(url: string, ports: number[], row: Row, block: number | null) {
  const keyPrefix = `bench${++prefixes}:`
  const stores: QuotaStore[] = Array.from({ length: INSTANCES }, () => {
    const connection = redisConnection(url, { role: 'quota store' })
    const plain = redisQuotaStore(url, { keyPrefix, connection })
    return block === null ? plain : leasingQuotaStore(plain, connection, { blocks: new Map([[row.plan.name, block]]), keyPrefix })
  })
  const admitted = new Map<string, number>()
  let [allowed, refused, refusedWhileLeft, next] = [0, 0, 0, 0]
  const before = await clientOps(ports)
  const t0 = performance.now()
  const worker = async (store: QuotaStore) => {
    for (let i = next++; i < REQUESTS; i = next++) {
      const [subject, cost] = row.request(i)
      const state = await store.consume(subject, row.plan, cost)
      const sofar = admitted.get(subject) ?? 0
      if (state.allowed) {
        allowed++
        admitted.set(subject, sofar + cost)
      } else {
        refused++
        if (sofar + cost <= row.plan.credits) refusedWhileLeft++
      }
    }
  }
  await Promise.all(stores.flatMap((s) => Array.from({ length: CONCURRENCY }, () => worker(s))))
  const seconds = (performance.now() - t0) / 1000
  // The leases' give-back on close is part of what they cost.
  await Promise.all(stores.map((s) => s.close()))
  const after = await clientOps(ports)
  const reader = redisQuotaStore(url, { keyPrefix })
  let overSpent = 0
  let stranded = 0
  for (const subject of row.subjects) {
    const counted = row.plan.credits - (await reader.peek(subject, row.plan)).remaining
    overSpent += Math.max(0, (admitted.get(subject) ?? 0) - row.plan.credits) + Math.max(0, counted - row.plan.credits)
    stranded += counted - (admitted.get(subject) ?? 0)
  }
  reader.close()
  const ops = after.calls - before.calls
  console.log(
    [
      `  ${(block === null ? 'no leases' : `block ${block}`).padEnd(12)}`,
      `${(ops / allowed).toFixed(4).padStart(8)} ops/admitted (${(ops / REQUESTS).toFixed(4)}/request)`,
      `${((after.usec - before.usec) / allowed).toFixed(2).padStart(7)} µs Redis/admitted`,
      `admitted ${allowed}, refused ${refused} (${refusedWhileLeft} while left)`,
      `over-spent ${overSpent}, counted unspent after close ${stranded}`,
      `${Math.round(REQUESTS / seconds)} req/s here`,
    ].join('  '),
  )
}

function rows(): Row[] {
  const cost = (i: number) => (i % 20 === 0 ? 10 : 1)
  const demand = Array.from({ length: REQUESTS }, (_, i) => cost(i)).reduce((a, b) => a + b, 0)
  const window = { windowSeconds: 3600 }
  return [
    {
      name: 'hot key, plan larger than demand',
      plan: { name: 'hot', credits: 10 * demand, ...window },
      request: (i) => ['hot', cost(i)],
      subjects: ['hot'],
    },
    {
      name: `hot key, plan of 60% of the demand (${Math.round(0.6 * demand)} credits)`,
      plan: { name: 'short', credits: Math.round(0.6 * demand), ...window },
      request: (i) => ['short', cost(i)],
      subjects: ['short'],
    },
    {
      name: `cold keys: ${COLD} keys × ${Math.round(REQUESTS / COLD)} requests of 1 credit`,
      plan: { name: 'cold', credits: 1_000_000, ...window },
      request: (i) => [`cold${i % COLD}`, 1],
      subjects: Array.from({ length: COLD }, (_, i) => `cold${i}`),
    },
  ]
}

async function main() {
  const redis = CLUSTER ? null : await startRedis()
  const cluster = CLUSTER ? await startCluster(3, 0) : null
  process.once('exit', () => cluster?.stopNow())
  const url = cluster ? clusterUrl(cluster) : redis!.url
  const ports = cluster ? await cluster.masters() : [redis!.port]
  console.log(
    `credit leases: ${CLUSTER ? 'Redis Cluster, 3 masters' : 'one redis-server'}, ${INSTANCES} instances × ${CONCURRENCY} in flight, ` +
      `${REQUESTS} requests a row`,
  )
  try {
    for (const row of rows()) {
      console.log(row.name)
      for (const block of [null, ...BLOCKS]) await run(url, ports, row, block)
    }
  } finally {
    await redis?.close()
    await cluster?.close()
  }
}

await main()
