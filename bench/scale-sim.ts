/**
 * Scale simulation (issue 46): what 100 instances ask of a shared Redis Cluster, with and without credit
 * leases, measured on the real store code rather than guessed.
 *
 * What runs: a Redis Cluster of 3 masters and 3 replicas started here (test/support/redis-topologies.ts,
 * Debian `redis-server` on loopback), and in this one process 100 simulated instances, each with its own
 * key store (`keys-redis.ts`, with its lookup cache: 60 s while its change channel is heard, 500 ms while not),
 * usage ledger (`usage-redis.ts` behind the real
 * `usage-meter.ts`: one batch a second) and quota store (made by a factory per row: `quota-redis.ts`, or the
 * same wrapped in `quota-leases.ts`), every one its own ioredis cluster client, as 100
 * processes would have. A request is what the HTTP path asks of the stores: the key's lookup, one consume,
 * one row counted in the meter; no HTTP, no domain work. Requests arrive open-loop at RATE a second spread
 * evenly over the instances (a balancer), from CUSTOMERS keys whose rates follow a Zipf spread (weight 1/rank)
 * plus one hot key taking HOT of all traffic; 5% are bulk requests of 10 credits. Every third key, the hot one
 * included, has a plan of half the credits it will ask for, so it runs out mid-run.
 *
 * Each row runs WARMUP seconds first, not counted (connections opened, key caches filled, lease rates learnt:
 * the steady state of instances that have been up a while), then SECONDS measured.
 *
 * What it prints, per row (without leases, with leases):
 * - Redis operations per credited (admitted) request: `INFO commandstats` deltas summed over the masters, over
 *   the measured seconds only. An operation is a command a client sent (EVALSHA, EVAL, anything else but the
 *   INFO this script sends); the commands a Lua script runs inside Redis are counted apart ("inside scripts").
 *   The split by store is counted here: key lookups that went to Redis (findByHash answered with a new promise),
 *   ledger batches (the meter's writes); quota operations are the rest. Then the operations by command, and the
 *   quota store's own by script (a LEASE by what it got: a refill, a block, the need alone, refused) or command.
 * - Redis CPU per credited request: the `usec` of those client commands (a script's includes what it runs).
 * - Credits over-spent: per key and window, credits admitted beyond the plan (must be 0).
 * - Credits refused while the plan had them left: refused requests whose cost fitted in what the plan still had
 *   when the row ended (`refusedWhileLeft`), as a share of those keys' plans. (Judged at each refusal's reply,
 *   as earlier runs did, it counted admissions whose replies were still on their way on a loaded loop as
 *   credits left, and swung from 0.01% to 90% between runs of one store.)
 * - Added latency per request: time in store calls (lookup + consume), p50 and p99, in this process; on
 *   2 shared cores with 6 Redis servers beside it that time includes waiting for the CPU.
 * Then one instance alone, closed loop (CONCURRENCY in flight): requests a second with the memory quota store,
 * the Redis one and the leased Redis one on the same loop, alternated, and the ratio to memory.
 * Targets from the issue are printed beside the figures; nothing is asserted.
 *
 * Run: `bun bench/scale-sim.ts` (Debian `redis-server` and `redis-cli`). Settings: RATE (requests a second
 * over all instances, 6000), SECONDS (measured seconds a row, 15), INSTANCES (100), CUSTOMERS (400), HOT (0.2),
 * CONCURRENCY (64), SOLO_SECONDS (2), LEASE_BLOCK (the most a lease takes at once, every plan: 50), WARMUP (5),
 * ROWS (which rows, `1,2`: both), LEASE_OPTS (JSON of quota-leases.ts options, e.g. `{"horizonMs":0}`). A default
 * run takes about a minute and a half on 2 cores: ~5 s to start the cluster, ~2 × 22 s of rows, ~15 s of
 * single-instance loops.
 */
import type { Plan } from '../src/config.ts'
import type { Exchange } from '../src/http/edge/exchange.ts'
import { createUsageMeter, type UsageMeter } from '../src/http/edge/usage-meter.ts'
import { keyHash } from '../src/stores/keys.ts'
import { redisKeyStore } from '../src/stores/keys-redis.ts'
import { memoryQuotaStore, type QuotaStore, quotaWindow } from '../src/stores/quota.ts'
import { leasingQuotaStore } from '../src/stores/quota-leases.ts'
import { LEASE, PEEK, RETURN } from '../src/stores/quota-leases-lua.ts'
import type { RedisConnection } from '../src/stores/redis-connection.ts'
import { redisQuotaStore } from '../src/stores/quota-redis.ts'
import type { KeyStore } from '../src/stores/keys.ts'
import type { UsageStore } from '../src/stores/usage.ts'
import { redisConnection } from '../src/stores/redis.ts'
import { redisUsageStore } from '../src/stores/usage-redis.ts'
import { ask, clusterUrl, startCluster, type TestCluster } from '../test/support/redis-topologies.ts'
import { percentile } from './lib.ts'

const RATE = Number(process.env.RATE ?? 6000)
const SECONDS = Number(process.env.SECONDS ?? 15)
const WARMUP = Number(process.env.WARMUP ?? 5)
const INSTANCES = Number(process.env.INSTANCES ?? 100)
const CUSTOMERS = Number(process.env.CUSTOMERS ?? 400)
const HOT = Number(process.env.HOT ?? 0.2)
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 64)
const SOLO_SECONDS = Number(process.env.SOLO_SECONDS ?? 2)
const LEASE_BLOCK = Number(process.env.LEASE_BLOCK ?? 50)
const BULK_SHARE = 0.05
const BULK_COST = 10
const MEAN_COST = 1 + BULK_SHARE * (BULK_COST - 1)
/**
 * CPU µs of one HTTP request without the store calls, to put the in-process loop's µs in proportion:
 * docs/performance.md, "The usage ledger's cost", `GET /api/v1/countries/FR` 23.1–27.5 µs (machine C); the low end.
 */
const HTTP_US = 23

/** Makes an instance's quota store on a store URL: the parameter the rows differ by. */
export type QuotaFactory = (url: string) => QuotaStore

interface Customer {
  key: string
  digest: Uint8Array
  subject: string
  /** Share of all requests. */
  share: number
  /** Tight plans run out mid-run (half of what the key will ask for); the others never do. */
  tight: boolean
  exchange: Exchange
}

interface Instance {
  keys: KeyStore
  usage: UsageStore
  meter: UsageMeter
}

/** Per key and window: credits admitted, and the refused requests by cost. */
interface Admitted {
  subject: string
  /** The window's start, in ms. */
  start: number
  plan: Plan
  credits: number
  refused: Map<number, number>
}

/**
 * Credits refused while the plan had them left: refused requests whose cost fitted in what the plan still had
 * once the row ended, by the window's counter in Redis after every lease went back (`used`: it also counts
 * requests Redis admitted whose answer came too late and were errors here), at most that much. Nothing is
 * refunded, so what was left then was left at every refusal. An exact store never refuses those; leases can,
 * while credits sit unspent in another instance's lease.
 */
function refusedWhileLeft({ plan, refused }: Admitted, used: number): number {
  const left = plan.credits - used
  let fitting = 0
  for (const [cost, count] of refused) if (cost <= left) fitting += cost * count
  return Math.min(left, fitting)
}

/** What one row counts while it runs. */
interface Tally {
  requests: number
  credited: number
  refused: number
  refusedWhileLeft: number
  errors: number
  storeMs: number[]
  /** Admitted credits per key and window: the truth a plan is compared with. */
  admitted: Map<string, Admitted>
  lookups: number
  ledgerWrites: number
  ledgerRows: number
  /** Quota operations by script or command, where the row's store counts them (`countingCalls`). */
  calls: Map<string, number>
}

const newTally = (): Tally => ({
  requests: 0,
  credited: 0,
  refused: 0,
  refusedWhileLeft: 0,
  errors: 0,
  storeMs: [],
  admitted: new Map(),
  lookups: 0,
  ledgerWrites: 0,
  ledgerRows: 0,
  calls: new Map(),
})
let tally = newTally()

/**
 * Commands the stores' scripts run inside Redis: not operations a client sent. (PUBLISH is both: a refund with
 * no lease to take it sends one, which no row here makes.)
 */
const INSIDE = new Set(
  (
    'get incrby decrby expire hget hgetall hset hdel hincrby time sadd set exists lpush ltrim del rename smembers zrange ' +
    'publish zadd zremrangebyscore'
  ).split(' '),
)

/** calls and usec per command name, summed over `ports`. */
async function commandStats(ports: number[]): Promise<Map<string, { calls: number; usec: number }>> {
  const out = new Map<string, { calls: number; usec: number }>()
  for (const port of ports) {
    const text = String((await ask(port, 'INFO', ['commandstats'])) ?? '')
    for (const m of text.matchAll(/cmdstat_([^:]+):calls=(\d+),usec=(\d+)/g)) {
      const entry = out.get(m[1]!) ?? { calls: 0, usec: 0 }
      entry.calls += Number(m[2])
      entry.usec += Number(m[3])
      out.set(m[1]!, entry)
    }
  }
  return out
}

/** What the masters did between two `commandStats`: client operations, their usec, commands inside scripts. */
function opsBetween(before: Map<string, { calls: number; usec: number }>, after: Map<string, { calls: number; usec: number }>) {
  let ops = 0
  let usec = 0
  let inside = 0
  const byCommand = new Map<string, number>()
  for (const [name, a] of after) {
    const b = before.get(name) ?? { calls: 0, usec: 0 }
    const calls = a.calls - b.calls
    if (name === 'info' || name.startsWith('config')) continue
    if (INSIDE.has(name)) inside += calls
    else {
      ops += calls
      usec += a.usec - b.usec
      if (calls) byCommand.set(name, calls)
    }
  }
  return { ops, usec, inside, byCommand }
}

/** Keys of CUSTOMERS customers: the first is the hot one, the rest share 1 − HOT by 1/rank. */
async function makeCustomers(keys: KeyStore): Promise<Customer[]> {
  const harmonic = Array.from({ length: CUSTOMERS - 1 }, (_, i) => 1 / (i + 1)).reduce((s, w) => s + w, 0)
  const routes = ['/api/v1/countries/:code', '/api/v1/ip', '/api/v1/timezones/:zone']
  const out: Customer[] = []
  for (let i = 0; i < CUSTOMERS; i++) {
    const { key, record } = await keys.create({ name: `sim-${i}-${Date.now()}`, plan: null })
    const share = i === 0 ? HOT : (1 - HOT) / i / harmonic
    const exchange = {
      principal: { caller: `key:${record.id}`, customer: '' },
      route: { owner: { domain: { name: 'countries' } }, pattern: routes[i % routes.length] },
      credits: 0,
      refunded: 0,
    } as unknown as Exchange
    out.push({ key, digest: keyHash(key), subject: record.id, share, tight: i % 3 === 0, exchange })
  }
  return out
}

/** Picks a customer by share: a cumulative table and a binary search. */
function picker(customers: Customer[]): () => Customer {
  const cumulative: number[] = []
  let sum = 0
  for (const c of customers) cumulative.push((sum += c.share))
  return () => {
    const x = Math.random() * sum
    let lo = 0
    let hi = cumulative.length - 1
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (cumulative[mid]! < x) lo = mid + 1
      else hi = mid
    }
    return customers[lo]!
  }
}

/** A plan per customer for one row: names of their own, so each row starts from fresh counters. */
function plansFor(row: string, customers: Customer[], seconds: number, rate: number): Map<Customer, Plan> {
  const plans = new Map<Customer, Plan>()
  for (const [i, c] of customers.entries()) {
    const asked = rate * seconds * c.share * MEAN_COST
    const credits = c.tight ? Math.max(BULK_COST, Math.floor(asked / 2)) : Math.ceil(asked * 10) + 1000
    plans.set(c, { name: `sim-${row}-${i}`, credits, windowSeconds: 3600 })
    leaseBlocks.set(`sim-${row}-${i}`, LEASE_BLOCK)
  }
  return plans
}

/** Lookups that went to Redis: a findByHash answer that is a promise not seen before (concurrent ones share it). */
const seenLookups = new WeakSet<Promise<unknown>>()

/** One request's store calls: the key's lookup, a consume, a row in the meter. Returns the time in store calls. */
async function request(instance: Instance, quota: QuotaStore, customer: Customer, plan: Plan, t: Tally): Promise<void> {
  const cost = Math.random() < BULK_SHARE ? BULK_COST : 1
  const started = performance.now()
  const now = Date.now()
  try {
    const found = instance.keys.findByHash(customer.digest)
    if (found instanceof Promise && !seenLookups.has(found)) {
      seenLookups.add(found)
      t.lookups++
    }
    if (!(await found)) throw new Error('the key was not found')
    const state = await quota.consume(customer.subject, plan, cost, now)
    t.storeMs.push(performance.now() - started)
    t.requests++
    const start = quotaWindow(plan, now).start
    const window = `${customer.subject}:${plan.name}:${start}`
    const admitted = t.admitted.get(window) ?? { subject: customer.subject, start: start * 1000, plan, credits: 0, refused: new Map() }
    t.admitted.set(window, admitted)
    if (state.allowed) {
      admitted.credits += cost
      t.credited++
    } else {
      t.refused++
      admitted.refused.set(cost, (admitted.refused.get(cost) ?? 0) + 1)
    }
    const exchange = customer.exchange as { credits?: number; problem?: string }
    exchange.credits = state.allowed ? cost : 0
    exchange.problem = state.allowed ? undefined : 'quota'
    instance.meter.record(customer.exchange, 'GET', state.allowed ? 200 : 429, (performance.now() - started) / 1000, 200)
  } catch {
    t.errors++
  }
}

/** The ledger store behind a meter, counting its batches and rows on the way. */
function countingUsage(store: UsageStore): UsageStore {
  return {
    ...store,
    write(batch) {
      tally.ledgerWrites++
      tally.ledgerRows += batch.rows.length
      return store.write(batch)
    },
  }
}

/** What the rows differ by: the quota store each instance makes, and the requests a second over all instances. */
interface RowSpec {
  name: string
  factory: QuotaFactory
  rate: number
}

/** Open loop: every 10 ms each instance gets its share of `rate`; for `seconds`. */
async function drive(
  instances: Instance[],
  quotas: QuotaStore[],
  customers: Customer[],
  plans: Map<Customer, Plan>,
  seconds: number,
  rate: number,
) {
  const pick = picker(customers)
  const perInstanceMs = rate / instances.length / 1000
  const owed = new Array<number>(instances.length).fill(0)
  const inFlight = new Set<Promise<void>>()
  const start = performance.now()
  let last = start
  while (performance.now() - start < seconds * 1000) {
    await Bun.sleep(10)
    const now = performance.now()
    for (let i = 0; i < instances.length; i++) {
      owed[i]! += (now - last) * perInstanceMs
      for (; owed[i]! >= 1; owed[i]!--) {
        const customer = pick()
        const p = request(instances[i]!, quotas[i]!, customer, plans.get(customer)!, tally)
        inFlight.add(p)
        void p.finally(() => inFlight.delete(p))
      }
    }
    last = now
  }
  await Promise.all(inFlight)
  return (performance.now() - start) / 1000
}

interface RowResult {
  name: string
  rate: number
  seconds: number
  t: Tally
  ops: number
  usec: number
  inside: number
  /** Client operations by command, from the masters' commandstats. */
  byCommand: Map<string, number>
  overSpent: number
  tightPlan: number
}

/** One row: fresh quota stores from its factory, WARMUP seconds (caches filled, lease rates learnt), then SECONDS measured. */
async function runRow({ name, factory, rate }: RowSpec, url: string, cluster: TestCluster, instances: Instance[], customers: Customer[]) {
  const quotas = instances.map(() => factory(url))
  const plans = plansFor(name.replace(/\W+/g, '-'), customers, WARMUP + SECONDS, rate)
  // Connections opened, scripts loaded and keys cached before anything is counted: a request timed out while
  // 300 clients connect at once would be an error here and a credit spent in Redis.
  await Promise.all(quotas.map((q) => q.check?.()))
  tally = newTally()
  await drive(instances, quotas, customers, plans, WARMUP, rate)
  await Promise.all(instances.map((i) => i.meter.flush()))
  const masters = await cluster.masters()
  const before = await commandStats(masters)
  const warm = tally
  tally = newTally()
  tally.admitted = warm.admitted
  const seconds = await drive(instances, quotas, customers, plans, SECONDS, rate)
  await Promise.all(instances.map((i) => i.meter.flush()))
  const { ops, usec, inside, byCommand } = opsBetween(before, await commandStats(masters))
  let overSpent = 0
  let tightPlan = 0
  for (const c of customers) if (c.tight) tightPlan += plans.get(c)!.credits
  await Promise.all(quotas.map((q) => q.close()))
  const counters = redisQuotaStore(url)
  for (const admitted of tally.admitted.values()) {
    overSpent += Math.max(0, admitted.credits - admitted.plan.credits)
    const used = admitted.plan.credits - (await counters.peek(admitted.subject, admitted.plan, admitted.start)).remaining
    tally.refusedWhileLeft += refusedWhileLeft(admitted, Math.max(used, admitted.credits))
  }
  await counters.close()
  return { name, rate, seconds, t: tally, ops, usec, inside, byCommand, overSpent, tightPlan } satisfies RowResult
}

function printRows(rows: RowResult[]) {
  console.log(`\n${INSTANCES} instances, ${CUSTOMERS} keys (one hot at ${HOT * 100}%), ${WARMUP} s warm-up and ${SECONDS} s measured a row`)
  console.log(
    '| row | requests/s offered | done | credited | Redis ops / request | Redis ops / credited request | ' +
      'of which key lookups / ledger batches / quota | ' +
      'commands inside scripts / credited | Redis CPU µs / credited | over-spent credits | refused while left, share of tight plans | ' +
      'store time p50 / p99 ms | errors |',
  )
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
  for (const r of rows) {
    const { t } = r
    const per = (n: number) => (n / Math.max(1, t.credited)).toFixed(4)
    const quotaOps = r.ops - t.lookups - t.ledgerWrites
    const perRequest = (r.ops / Math.max(1, t.requests)).toFixed(4)
    console.log(
      `| ${r.name} | ${r.rate} | ${(t.requests / r.seconds).toFixed(0)} | ${t.credited} | ${perRequest} | ${per(r.ops)} ` +
        `| ${per(t.lookups)} / ${per(t.ledgerWrites)} / ${per(quotaOps)} ` +
        `| ${per(r.inside)} | ${(r.usec / Math.max(1, t.credited)).toFixed(2)} | ${r.overSpent} ` +
        `| ${((100 * t.refusedWhileLeft) / Math.max(1, r.tightPlan)).toFixed(2)}% (${t.refusedWhileLeft} of ${r.tightPlan}) ` +
        `| ${percentile(t.storeMs, 50).toFixed(2)} / ${percentile(t.storeMs, 99).toFixed(2)} | ${t.errors} |`,
    )
  }
  const last = rows.at(-1)!
  const batchSizes = rows.map((r) => `${r.name} ${(r.t.ledgerRows / Math.max(1, r.t.ledgerWrites)).toFixed(1)}`).join(', ')
  console.log(
    `\nTargets (issue 46), with leases: ≤ 0.05 Redis ops / credited request (${(last.ops / Math.max(1, last.t.credited)).toFixed(4)}); ` +
      `over-spent 0; refused while left < 1% of the plan. Ledger: ${batchSizes} rows a batch.`,
  )
  const perCredited = (r: RowResult, counts: Map<string, number>) =>
    [...counts]
      .sort((a, b) => b[1] - a[1])
      .map(([n, c]) => `${n} ${(c / r.t.credited).toFixed(4)}`)
      .join(', ')
  for (const r of rows) {
    console.log(`Redis operations of "${r.name}" by command, per credited request: ${perCredited(r, r.byCommand)}`)
    if (!r.t.calls.size) continue
    console.log(`Quota operations of "${r.name}" by script or command, per credited request: ${perCredited(r, r.t.calls)}`)
  }
}

/** One instance, closed loop: requests a second through each quota store, alternated for two rounds. */
async function solo(instance: Instance, customer: Customer, stores: [string, () => QuotaStore][]) {
  const plan: Plan = { name: `sim-solo-${Date.now()}`, credits: 1e12, windowSeconds: 3600 }
  leaseBlocks.set(plan.name, LEASE_BLOCK)
  const rates = new Map<string, number[]>(stores.map(([name]) => [name, []]))
  for (let round = 0; round < 2; round++)
    for (const [name, make] of stores) {
      const quota = make()
      const t = newTally()
      const loop = async (until: number) => {
        while (performance.now() < until) await request(instance, quota, customer, plan, t)
      }
      await loop(performance.now() + 300)
      const t0 = performance.now()
      t.requests = 0
      await Promise.all(Array.from({ length: CONCURRENCY }, () => loop(t0 + SOLO_SECONDS * 1000)))
      rates.get(name)!.push(t.requests / ((performance.now() - t0) / 1000))
      await quota.close()
    }
  const base = Math.max(...rates.get(stores[0]![0])!)
  console.log(
    `\nOne instance alone, ${CONCURRENCY} requests in flight, ${SOLO_SECONDS} s a run, two rounds (lookup + consume + meter, no HTTP)`,
  )
  console.log(
    '| quota store | requests/s, rounds | best ÷ memory best | µs a request (best) | ' +
      `over HTTP: ${HTTP_US} µs + this, ÷ memory's | target |`,
  )
  console.log('|---|---:|---:|---:|---:|---|')
  for (const [name, rs] of rates) {
    const us = 1e6 / Math.max(...rs)
    const overHttp = (HTTP_US + 1e6 / base) / (HTTP_US + us)
    const target = name.includes('with leases') ? '≥ 0.95' : ''
    console.log(
      `| ${name} | ${rs.map((r) => r.toFixed(0)).join(', ')} | ${(Math.max(...rs) / base).toFixed(3)} | ${us.toFixed(2)} ` +
        `| ${overHttp.toFixed(3)} | ${target} |`,
    )
  }
}

/** Block sizes by plan name for the lease wrapper: every plan of every row, LEASE_BLOCK credits (plansFor fills it). */
const leaseBlocks = new Map<string, number>()

/** The Redis store in the lease wrapper (src/stores/quota-leases.ts), on one connection, as src/stores/index.ts wires them. */
const leased: QuotaFactory = (url) => {
  const connection = countingCalls(redisConnection(url, { role: 'quota store' }))
  return leasingQuotaStore(redisQuotaStore(url, { connection }), connection, {
    blocks: leaseBlocks,
    ...JSON.parse(process.env.LEASE_OPTS ?? '{}'),
  })
}

/** The names of the lease scripts, by their source, for `countingCalls`. */
const SCRIPT_NAMES = new Map([
  [LEASE, 'LEASE'],
  [RETURN, 'RETURN'],
  [PEEK, 'PEEK'],
])

/** A connection counting, in the row's tally, the scripts it runs by name and the commands it sends by name. */
function countingCalls(connection: RedisConnection): RedisConnection {
  const count = (name: string) => tally.calls.set(name, (tally.calls.get(name) ?? 0) + 1)
  return {
    ...connection,
    command: (name, args) => {
      count(name)
      return connection.command(name, args)
    },
    script(source) {
      const run = connection.script(source)
      const name = SCRIPT_NAMES.get(source) ?? 'other script'
      if (name !== 'LEASE')
        return (keys, args) => {
          count(name)
          return run(keys, args)
        }
      // A LEASE by what it was and what it got: a refill, a block beyond the need, the need alone, or refused.
      return async (keys, args) => {
        const reply = (await run(keys, args)) as number[]
        const [ok, , grant] = reply.map(Number) as [number, number, number]
        const need = Number(args[1])
        count(need === 0 ? 'LEASE refill' : !ok ? 'LEASE refused' : grant > need ? 'LEASE with a block' : 'LEASE, the need alone')
        return reply
      }
    },
  }
}

async function main() {
  const cluster = await startCluster(3, 1)
  process.once('exit', () => cluster.stopNow())
  const url = clusterUrl(cluster)
  const instances: Instance[] = Array.from({ length: INSTANCES }, () => {
    const usage = countingUsage(redisUsageStore(url))
    return { keys: redisKeyStore(url), usage, meter: createUsageMeter(usage) }
  })
  const customers = await makeCustomers(instances[0]!.keys)
  const specs: RowSpec[] = [
    { name: 'without leases', factory: (u) => redisQuotaStore(u), rate: RATE },
    { name: 'with leases', factory: leased, rate: RATE },
  ]
  const chosen = process.env.ROWS?.split(',').map(Number)
  const rows: RowResult[] = []
  for (const [i, spec] of specs.entries())
    if (!chosen || chosen.includes(i + 1)) rows.push(await runRow(spec, url, cluster, instances, customers))
  printRows(rows)
  const stores: [string, () => QuotaStore][] = [
    ['memory', () => memoryQuotaStore()],
    ['Redis Cluster, no leases', () => redisQuotaStore(url)],
  ]
  stores.push(['Redis Cluster with leases', () => leased(url)])
  await solo(instances[0]!, customers[1]!, stores)
  await Promise.all(instances.map((i) => i.meter.close()))
  for (const i of instances) {
    i.keys.close()
    i.usage.close()
  }
  await cluster.close()
}

await main()
process.exit(0)
