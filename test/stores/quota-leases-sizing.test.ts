/**
 * How much a credit lease takes and when it asks (src/stores/quota-leases.ts), on a real redis-server and a
 * real Redis Cluster: blocks sized by what the instance spent over the horizon, the refill before a lease runs
 * dry, the larger block after it ran dry anyway, a refusal repeated locally, and wants heard on the channel
 * rather than polled. Clocks are passed to every call; no timer runs.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Plan } from '../../src/config.ts'
import { leasingQuotaStore, type LeaseOptions, type LeasingQuotaStore } from '../../src/stores/quota-leases.ts'
import { redisQuotaStore } from '../../src/stores/quota-redis.ts'
import { redisConnection } from '../../src/stores/redis.ts'
import { startRedis, type TestRedis } from '../support/redis.ts'
import { clusterUrl, startCluster, waitFor, type TestCluster } from '../support/redis-topologies.ts'

const plan: Plan = { name: 'sized', credits: 1000, windowSeconds: 3600 }
const T0 = 1_700_002_000_000
const HORIZON = 10_000

let redis: TestRedis
let cluster: TestCluster
let prefixes = 0
const opened: { close(): unknown }[] = []

beforeAll(async () => {
  ;[redis, cluster] = await Promise.all([startRedis(), startCluster(3, 0)])
}, 60_000)
afterAll(async () => {
  await Promise.all(opened.map((o) => o.close()))
  await Promise.all([redis?.close(), cluster?.close()])
}, 30_000)

/** `n` instances sharing a key prefix, and a plain store reading the window's counter. */
function fleet(url: string, n: number, options: Partial<LeaseOptions> = {}) {
  const keyPrefix = `sized${++prefixes}:`
  const plain = redisQuotaStore(url, { keyPrefix })
  opened.push(plain)
  const stores = Array.from({ length: n }, () => {
    const connection = redisConnection(url, { role: 'quota store' })
    const settings: LeaseOptions = { blocks: new Map([[plan.name, 50]]), keyPrefix, tickMs: 0, horizonMs: HORIZON, ...options }
    const store = leasingQuotaStore(redisQuotaStore(url, { keyPrefix, connection }), connection, settings)
    opened.push(store)
    return store
  })
  /** Credits spent or leased out, as Redis counts them. */
  const counted = async (subject: string, now = T0) => plan.credits - (await plain.peek(subject, plan, now)).remaining
  return { stores, counted }
}

const topologies: [string, () => string][] = [
  ['redis', () => redis.url],
  ['redis cluster', () => clusterUrl(cluster)],
]

describe.each(topologies)('lease sizing on %s', (_, url) => {
  test('a key seen now and then takes nothing beyond its request; a busy one takes what it spent over the horizon', async () => {
    const { stores, counted } = fleet(url(), 1, { subscribe: false })
    const a = stores[0]!
    // One request a horizon: no rate worth a block, so each is one script and nothing is held.
    for (let i = 0; i < 3; i++) {
      expect((await a.consume('rare', plan, 1, T0 + i * 3 * HORIZON)).allowed).toBe(true)
      expect(a.held()).toBe(0)
    }
    expect(await counted('rare', T0)).toBe(3)
    // Many in one moment: the blocks double with what was spent (1, 2, 4 …), up to the plan's 50.
    let promises = 0
    for (let i = 0; i < 200; i++) {
      const answer = a.consume('busy', plan, 1, T0)
      if (answer instanceof Promise) promises++
      expect((await answer).allowed).toBe(true)
      await a.settled()
    }
    // At most a block and a half: a refill of 50 is asked for under 25 left.
    expect(a.held()).toBeGreaterThan(0)
    expect(a.held()).toBeLessThan(75)
    expect(await counted('busy')).toBe(200 + a.held())
    // Three scripts in the requests' path (two before a rate worth a block, then the first block of 2); every
    // later block was a refill asked for in the background.
    expect(promises).toBe(3)
  })

  test('a lease half spent is refilled while requests go on spending locally', async () => {
    const { stores, counted } = fleet(url(), 1, { subscribe: false, horizonMs: 0 })
    const a = stores[0]!
    expect((await a.consume('refill', plan, 1, T0)).allowed).toBe(true)
    expect(a.held()).toBe(50)
    // Down to 24 of 50: under half, so the next block is asked for; the requests meanwhile are all local.
    for (let i = 0; i < 26; i++) expect(a.consume('refill', plan, 1, T0) instanceof Promise).toBe(false)
    expect(a.held()).toBe(24)
    await a.settled()
    expect(a.held()).toBe(74)
    expect(await counted('refill')).toBe(27 + 74)
  })

  test('a lease that runs dry while its refill is on the way takes twice the block next time', async () => {
    const { stores } = fleet(url(), 1, { subscribe: false, horizonMs: 0 })
    const a = stores[0]!
    await a.consume('dry', plan, 1, T0)
    expect(a.consume('dry', plan, 26, T0) instanceof Promise).toBe(false)
    // 24 held and a refill on its way: a request for 30 finds the lease dry.
    expect((await a.consume('dry', plan, 30, T0)).allowed).toBe(true)
    await a.settled()
    expect(a.held()).toBe(44)
    // The next LEASE (a need of 56 beyond the 44 held) takes 100 beyond it, not 50.
    expect((await a.consume('dry', plan, 100, T0)).allowed).toBe(true)
    expect(a.held()).toBe(100)
  })

  test('a refusal with nothing held anywhere stands locally for refusedMs, and a refund lifts it', async () => {
    const small: Plan = { name: plan.name, credits: 3, windowSeconds: 3600 }
    const { stores } = fleet(url(), 1, { subscribe: false, refusedMs: 1000 })
    const a = stores[0]!
    for (let i = 0; i < 3; i++) expect((await a.consume('out', small, 1, T0)).allowed).toBe(true)
    const asked = a.consume('out', small, 1, T0)
    expect(asked instanceof Promise).toBe(true)
    expect((await asked).allowed).toBe(false)
    // Within refusedMs: refused without a round trip.
    const repeated = a.consume('out', small, 1, T0 + 999)
    expect(repeated instanceof Promise).toBe(false)
    expect((repeated as { allowed: boolean }).allowed).toBe(false)
    // After it, Redis is asked again.
    const again = a.consume('out', small, 1, T0 + 1000)
    expect(again instanceof Promise).toBe(true)
    expect((await again).allowed).toBe(false)
    // A refund lands in the local lease: spendable here at once.
    a.refund('out', small, 1, T0 + 1000)
    expect(a.consume('out', small, 1, T0 + 1001)).toMatchObject({ allowed: true })
  })

  test('a refusal after holders were asked and did not give back also stands locally for refusedMs', async () => {
    const small: Plan = { name: plan.name, credits: 60, windowSeconds: 3600 }
    // Nobody ticks while b waits: a stays sat on its lease, as a stalled instance would.
    const { stores } = fleet(url(), 2, { subscribe: false, horizonMs: 0, refusedMs: 1000, wait: async () => {} })
    const [a, b] = stores as [LeasingQuotaStore, LeasingQuotaStore]
    expect((await a.consume('stalled', small, 10, T0)).allowed).toBe(true)
    expect(a.held()).toBe(50)
    expect((await b.consume('stalled', small, 1, T0)).allowed).toBe(false)
    // One want per refusedMs, not one per refused request.
    const repeated = b.consume('stalled', small, 1, T0 + 500)
    expect(repeated instanceof Promise).toBe(false)
    expect((repeated as { allowed: boolean }).allowed).toBe(false)
    expect(b.consume('stalled', small, 1, T0 + 1000) instanceof Promise).toBe(true)
    await b.settled()
  })

  test('a want is heard on the channel: the holder gives back at once, with no tick and no poll', async () => {
    const small: Plan = { name: plan.name, credits: 60, windowSeconds: 3600 }
    // b waits until a's RETURN has landed in Redis (the counter back to the 10 a spent).
    const wait = () => waitFor('a to give back', async () => (await counted('heard')) === 10)
    const { stores, counted } = fleet(url(), 2, { horizonMs: 0, wait })
    const [a, b] = stores as [LeasingQuotaStore, LeasingQuotaStore]
    await waitFor('both to hear wants', async () => a.hearsWants() && b.hearsWants())
    expect((await a.consume('heard', small, 10, T0)).allowed).toBe(true)
    expect(a.held()).toBe(50)
    // b finds the window empty while a holds 50: its want reaches a through the channel.
    expect((await b.consume('heard', small, 20, T0)).allowed).toBe(true)
    expect(a.held()).toBe(0)
    expect(await counted('heard')).toBe(30 + b.held())
  })

  test('a want names the largest holders: they give back, a smaller holder keeps its lease', async () => {
    const small: Plan = { name: plan.name, credits: 100, windowSeconds: 3600 }
    const wait = () => waitFor('a to give back', async () => (await counted('named')) === 60 - 50 + 40)
    const { stores, counted } = fleet(url(), 3, { horizonMs: 0, wait })
    const [a, b, c] = stores as [LeasingQuotaStore, LeasingQuotaStore, LeasingQuotaStore]
    await waitFor('all to hear', async () => a.hearsWants() && b.hearsWants() && c.hearsWants())
    expect((await a.consume('named', small, 10, T0)).allowed).toBe(true)
    expect((await b.consume('named', small, 10, T0)).allowed).toBe(true)
    expect([a.held(), b.held()]).toEqual([50, 30])
    // c needs 20: a's 50 covers twice that, so only a is named.
    expect((await c.consume('named', small, 20, T0)).allowed).toBe(true)
    expect([a.held(), b.held()]).toEqual([0, 30])
  })

  test('a refusal heard on the channel stands until a give-back announces credits, then Redis is asked again', async () => {
    const small: Plan = { name: plan.name, credits: 60, windowSeconds: 3600 }
    const { stores } = fleet(url(), 2, { horizonMs: 0, wait: async () => {} })
    const [a, b] = stores as [LeasingQuotaStore, LeasingQuotaStore]
    await waitFor('both to hear', async () => a.hearsWants() && b.hearsWants())
    expect((await a.consume('freed', small, 60, T0)).allowed).toBe(true)
    expect((await b.consume('freed', small, 1, T0)).allowed).toBe(false)
    // Long after refusedMs (1 s), the refusal still stands: nothing was given back.
    expect(b.consume('freed', small, 1, T0 + 30_000) instanceof Promise).toBe(false)
    // a's refund goes to its lease, then back to Redis on close: the give-back is announced, b asks again.
    a.refund('freed', small, 5, T0)
    await a.close()
    await waitFor('the refusal lifted', async () => b.consume('freed', small, 1, T0 + 30_001) instanceof Promise)
    expect((await b.consume('freed', small, 1, T0 + 30_002)).allowed).toBe(true)
  })
})
