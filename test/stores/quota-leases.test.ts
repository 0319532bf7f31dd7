/**
 * Credit leases (src/stores/quota-leases.ts) on a real redis-server and a real Redis Cluster: several store
 * objects on one Redis stand for several instances. No timers run: an asker's wait for holders is a
 * function that runs the other instances' `tick`, so the give-back path is driven, not slept through.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Plan } from '../../src/config.ts'
import { createQuotaStore } from '../../src/stores/index.ts'
import { leaseHashOf, leasingQuotaStore, type LeasingQuotaStore } from '../../src/stores/quota-leases.ts'
import { quotaKey, redisQuotaStore } from '../../src/stores/quota-redis.ts'
import { redisConnection } from '../../src/stores/redis.ts'
import { startRedis, type TestRedis } from '../support/redis.ts'
import { clusterUrl, startCluster, type TestCluster } from '../support/redis-topologies.ts'

const plan: Plan = { name: 'hot', credits: 100, windowSeconds: 60 }
const T0 = 1_700_000_123_456
const NEXT_WINDOW = 1_700_000_160_000

let redis: TestRedis
let cluster: TestCluster
let prefixes = 0
/** Plain stores that read the counters, closed after every test has read them. */
const readers: { close(): unknown }[] = []

beforeAll(async () => {
  ;[redis, cluster] = await Promise.all([startRedis(), startCluster(3, 0)])
}, 60_000)
afterAll(async () => {
  await Promise.all(readers.map((r) => r.close()))
  await Promise.all([redis?.close(), cluster?.close()])
}, 30_000)

/** `n` instances on one Redis, sharing a key prefix; each one's wait for holders runs every other's tick. */
function fleet(url: string, n: number, block = 10) {
  const keyPrefix = `lease${++prefixes}:`
  const stores: LeasingQuotaStore[] = []
  const plain = redisQuotaStore(url, { keyPrefix })
  readers.push(plain)
  for (let i = 0; i < n; i++) {
    const connection = redisConnection(url, { role: 'quota store' })
    const wait = async () => {
      await Promise.all(stores.filter((_, j) => j !== i).map((s) => s.tick(T0)))
    }
    const blocks = new Map([[plan.name, block]])
    // Whole blocks and polled wants: what each test below counts on (the sized blocks and the channel have tests of their own).
    const settings = { blocks, keyPrefix, tickMs: 0, wait, horizonMs: 0, subscribe: false }
    stores.push(leasingQuotaStore(redisQuotaStore(url, { keyPrefix, connection }), connection, settings))
  }
  /** The window's counter as Redis holds it: credits spent plus credits leased out. */
  const counted = async (subject: string, now = T0) => plan.credits - (await plain.peek(subject, plan, now)).remaining
  const close = () => Promise.all(stores.map((s) => s.close()))
  return { stores, counted, close, keyPrefix }
}

const topologies: [string, () => string][] = [
  ['redis', () => redis.url],
  ['redis cluster', () => clusterUrl(cluster)],
]

describe.each(topologies)('credit leases on %s', (_, url) => {
  test('4 instances × 60 concurrent consumes of 1 to 3 credits never spend more than the plan', async () => {
    const { stores, counted, close, keyPrefix } = fleet(url(), 4)
    const costs = Array.from({ length: 60 }, (_, i) => 1 + (i % 3))
    const results = await Promise.all(
      stores.flatMap((s) => costs.map(async (cost) => ({ cost, allowed: (await s.consume('race', plan, cost, T0)).allowed }))),
    )
    const spent = results.filter((r) => r.allowed).reduce((sum, r) => sum + r.cost, 0)
    await Promise.all(stores.map((s) => s.settled()))
    const held = stores.reduce((sum, s) => sum + s.held(), 0)
    expect(spent).toBeLessThanOrEqual(plan.credits)
    // Redis counts every credit spent or still leased out, and no other.
    expect(await counted('race')).toBe(spent + held)
    await close()
    // Closing gave back what was held: the counter is what was spent.
    expect(await counted('race')).toBe(spent)
    const left = plan.credits - spent
    // And nothing was lost: what is left can all be spent, one credit at a time, then no more.
    const after = redisQuotaStore(url(), { keyPrefix })
    for (let i = 0; i < left; i++) expect((await after.consume('race', plan, 1, T0)).allowed).toBe(true)
    expect((await after.consume('race', plan, 1, T0)).allowed).toBe(false)
    await after.close()
    const refusedWhileLeft = results.filter((r) => !r.allowed && r.cost <= left).length
    console.log(
      `  ${url().split(':')[0]}: ${spent} of ${plan.credits} spent, ${refusedWhileLeft} of ${results.length} refused with ${left} left`,
    )
  })

  test('4 instances × 60 concurrent consumes of 1 credit spend the whole plan, and no more', async () => {
    const { stores, close } = fleet(url(), 4)
    const results = await Promise.all(stores.flatMap((s) => Array.from({ length: 60 }, () => s.consume('ones', plan, 1, T0))))
    expect(results.filter((r) => r.allowed).length).toBe(plan.credits)
    await close()
  })

  test("a hot key's last credits are spendable wherever they are leased: the asker's want makes the holder give back", async () => {
    const { stores, counted, close } = fleet(url(), 2, 100)
    const [a, b] = stores as [LeasingQuotaStore, LeasingQuotaStore]
    expect((await a.consume('hot', plan, 1, T0)).allowed).toBe(true)
    // a took the whole plan as its lease: nothing is left in Redis.
    expect(a.held()).toBe(99)
    expect(await counted('hot')).toBe(100)
    // b finds the window empty while a holds 99: it asks, a gives back on its tick, b's second try is granted.
    const state = await b.consume('hot', plan, 5, T0)
    expect(state.allowed).toBe(true)
    expect(a.held()).toBe(0)
    // Under a want, a grant takes at most half of what is left beyond the need: (99 - 5) / 2.
    expect(b.held()).toBe(47)
    // The rest, alternately: every credit of the plan is spent, then both are refused.
    let spent = 6
    for (let i = 0; spent < plan.credits && i < 200; i++) if ((await stores[i % 2]!.consume('hot', plan, 1, T0)).allowed) spent++
    expect(spent).toBe(plan.credits)
    expect((await a.consume('hot', plan, 1, T0)).allowed).toBe(false)
    expect((await b.consume('hot', plan, 1, T0)).allowed).toBe(false)
    await close()
  })

  test('a request spends from the local lease without a round trip, and the headers are what this instance knows', async () => {
    const { stores, close } = fleet(url(), 2, 20)
    const [a, b] = stores as [LeasingQuotaStore, LeasingQuotaStore]
    expect(await a.consume('view', plan, 1, T0)).toMatchObject({ allowed: true, remaining: 99 })
    // Spent from the lease: the answer is not a promise.
    const local = a.consume('view', plan, 1, T0)
    expect(local instanceof Promise).toBe(false)
    expect(local).toMatchObject({ allowed: true, remaining: 98 })
    // In b's view a's lease counts as spent (a spent 2 of its 21; b sees 100 - 21 - 1).
    expect(await b.consume('view', plan, 1, T0)).toMatchObject({ allowed: true, remaining: 78 })
    // A peek counts the other instances' leases as not spent (they can be given back).
    expect((await a.peek('view', plan, T0)).remaining).toBe(97)
    await close()
  })

  test('close gives back unspent credits, which another instance can then spend', async () => {
    const { stores, counted, close } = fleet(url(), 2, 100)
    const [a, b] = stores as [LeasingQuotaStore, LeasingQuotaStore]
    expect((await a.consume('closing', plan, 10, T0)).allowed).toBe(true)
    expect(await counted('closing')).toBe(100)
    await a.close()
    expect(await counted('closing')).toBe(10)
    expect(await b.consume('closing', plan, 90, T0)).toMatchObject({ allowed: true, remaining: 0 })
    expect((await b.consume('closing', plan, 1, T0)).allowed).toBe(false)
    await close()
  })

  test('a refund goes back to the local lease; a new window starts fresh', async () => {
    const { stores, counted, close } = fleet(url(), 1, 10)
    const [a] = stores as [LeasingQuotaStore]
    expect((await a.consume('win', plan, 4, T0)).allowed).toBe(true)
    expect(a.held()).toBe(10)
    // Four credits back, to the lease and not to Redis: no round trip, and the counter still counts them leased.
    const refunded = a.refund('win', plan, 4, T0)
    expect(refunded instanceof Promise).toBe(false)
    expect(a.held()).toBe(14)
    expect(await counted('win')).toBe(14)
    // The next window: the old lease is gone, the new one starts from the whole plan.
    expect(await a.consume('win', plan, 1, NEXT_WINDOW)).toMatchObject({ allowed: true, remaining: 99 })
    expect(await counted('win', NEXT_WINDOW)).toBe(11)
    expect(a.held()).toBe(10)
    await close()
  })

  test('idle leases go back on the tick', async () => {
    const { stores, counted, close } = fleet(url(), 1, 30)
    const [a] = stores as [LeasingQuotaStore]
    await a.consume('idle', plan, 1, T0)
    await a.tick(T0 + 1000)
    expect(await counted('idle')).toBe(31)
    await a.tick(T0 + 2000)
    expect(a.held()).toBe(0)
    expect(await counted('idle')).toBe(1)
    await close()
  })
})

test('a lease hash shares its counter slot on a cluster, or there is none', () => {
  const key = quotaKey('almanac:quota:', 'key:abc', plan, 1_700_000_100)
  expect(leaseHashOf(key, false)).toBe(`${key}:lease`)
  expect(leaseHashOf(key, true)).toBe(`{${key}}:lease`)
  expect(leaseHashOf('p:{tag}:x', true)).toBe('p:{tag}:x:lease')
  expect(leaseHashOf('p:a}b', true)).toBeNull()
})

test('without ALMANAC_QUOTA_LEASES the Redis store is the plain one', async () => {
  const stores = { quota: { kind: 'redis', url: redis.url } } as never
  const plainStore = createQuotaStore({ stores })
  expect('tick' in plainStore).toBe(false)
  const leased = createQuotaStore({ stores, quotaLeases: new Map([['hot', 5]]) })
  expect('tick' in leased).toBe(true)
  await Promise.all([plainStore.close(), leased.close()])
})
