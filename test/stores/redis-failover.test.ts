/**
 * The shared stores on a Redis Cluster and a Sentinel group when it matters (issue 46): two instances
 * racing on one quota admit exactly what fits; a revoke through one instance reaches another within
 * KEY_CACHE_MS; and a failover. The master holding a quota key (the cluster master owning its slot, or the
 * Sentinel master) is killed while consuming: every consume during the gap is refused with an error
 * (fail-closed: the caller answers 503), the store resumes by itself once a replica is promoted, and the
 * plan is never over-spent. The gap, from the kill to the first consume that goes through, is printed.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Plan } from '../../src/config.ts'
import { keyHash } from '../../src/stores/keys.ts'
import { KEY_CACHE_MS, redisKeyStore } from '../../src/stores/keys-redis.ts'
import type { QuotaState, QuotaStore } from '../../src/stores/quota.ts'
import { redisQuotaStore } from '../../src/stores/quota-redis.ts'
import { ask, clusterUrl, sentinelUrl, startTopologies } from '../support/redis-topologies.ts'

let topologies: Awaited<ReturnType<typeof startTopologies>>
beforeAll(async () => {
  topologies = await startTopologies()
}, 60_000)
afterAll(() => topologies?.close(), 30_000)

const urlOf = (kind: 'cluster' | 'sentinel') => (kind === 'cluster' ? clusterUrl(topologies.cluster) : sentinelUrl(topologies.sentinel))

describe.each(['cluster', 'sentinel'] as const)('the stores on a Redis %s', (kind) => {
  test('two instances, 20 concurrent consumes of 3 on a 20-credit plan: exactly 6 admitted', async () => {
    const plan: Plan = { name: 'race', credits: 20, windowSeconds: 60 }
    const a = redisQuotaStore(urlOf(kind), { keyPrefix: `race-${kind}:` })
    const b = redisQuotaStore(urlOf(kind), { keyPrefix: `race-${kind}:` })
    const states = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).consume('key:k', plan, 3)))
    expect(states.filter((s) => s.allowed).length).toBe(6)
    expect((await a.peek('key:k', plan)).remaining).toBe(2)
    a.close()
    b.close()
  })

  test('a revoke through one instance is honoured by another within KEY_CACHE_MS', async () => {
    const clock = { ms: 5_000_000 }
    const options = { keyPrefix: `revoke-${kind}:`, now: () => clock.ms }
    const a = redisKeyStore(urlOf(kind), options)
    const b = redisKeyStore(urlOf(kind), options)
    const { key, record } = await b.create({ name: 'mallory', plan: null })
    expect((await a.findByHash(keyHash(key)))?.record.revoked).toBeNull()
    await b.revoke(record.id)
    clock.ms += KEY_CACHE_MS - 1
    expect((await a.findByHash(keyHash(key)))?.record.revoked).toBeNull()
    clock.ms += 1
    expect((await a.findByHash(keyHash(key)))?.record.revoked).toEqual(expect.any(String))
    a.close()
    b.close()
  })
})

/** Credits the counter holds as spent: never fewer than were admitted (none lost, so none given out twice). */
const spent = (state: QuotaState) => state.limit - state.remaining

/** What a consumer saw across a failover: consumes admitted, refused for want of credits, and failed (the 503s). */
interface Tally {
  admitted: number
  refused: number
  failed: number
  gapMs: number
}

/**
 * Consumes one credit at a time; kills `victim` after 50 admitted, then goes on (polling the store through
 * the outage) until the plan is spent. The gap: from the kill to the first consume that answers again.
 */
async function consumeThroughFailover(store: QuotaStore, plan: Plan, kill: () => Promise<void>): Promise<Tally> {
  const tally: Tally = { admitted: 0, refused: 0, failed: 0, gapMs: 0 }
  let killedAt = 0
  for (;;) {
    if (tally.admitted === 50 && !killedAt) {
      await kill()
      killedAt = performance.now()
    }
    try {
      const state = await store.consume('key:failover', plan, 1)
      if (killedAt && !tally.gapMs) tally.gapMs = performance.now() - killedAt
      if (!state.allowed) {
        tally.refused++
        return tally
      }
      tally.admitted++
    } catch {
      tally.failed++
      // Polls the store again shortly: the wait is Redis's failover, not a fixed delay.
      await Bun.sleep(10)
    }
  }
}

describe('failover while consuming', () => {
  const plan: Plan = { name: 'failover', credits: 200, windowSeconds: 3600 }

  test('cluster: the master owning the key is killed; consumes fail (503) until its replica serves, none over-spent', async () => {
    const { cluster } = topologies
    const store = redisQuotaStore(clusterUrl(cluster), { keyPrefix: 'fo-cluster:', timeoutMs: 500, maxBackoffMs: 200 })
    await store.consume('key:failover', plan, 0)
    const key = `fo-cluster:failover:3600:${Math.floor(Date.now() / 3_600_000) * 3600}:key:failover`
    const masters = await cluster.masters()
    // Only the owner answers the key; the others redirect (an error, so null).
    const owner = (await Promise.all(masters.map(async (p) => [p, await ask(p, 'EXISTS', [key])] as const))).find(
      ([, has]) => has !== null,
    )![0]
    const tally = await consumeThroughFailover(store, plan, () => cluster.kill(owner))
    console.log(
      `cluster failover: ${tally.gapMs.toFixed(0)} ms from the kill to the first answer; ${tally.failed} consumes failed meanwhile`,
    )
    expect(tally.failed).toBeGreaterThan(0)
    expect(tally.admitted).toBeLessThanOrEqual(plan.credits)
    expect(spent(await store.peek('key:failover', plan))).toBeGreaterThanOrEqual(tally.admitted)
    expect(await cluster.masters()).not.toContain(owner)
    store.close()
  }, 60_000)

  test('sentinel: the master is killed; consumes fail (503) until the sentinels promote the replica, none over-spent', async () => {
    const { sentinel } = topologies
    const store = redisQuotaStore(sentinelUrl(sentinel), { keyPrefix: 'fo-sentinel:', timeoutMs: 500, maxBackoffMs: 200 })
    const master = (await sentinel.master())!
    const tally = await consumeThroughFailover(store, plan, () => sentinel.kill(master))
    console.log(
      `sentinel failover: ${tally.gapMs.toFixed(0)} ms from the kill to the first answer; ${tally.failed} consumes failed meanwhile`,
    )
    expect(tally.failed).toBeGreaterThan(0)
    expect(tally.admitted).toBeLessThanOrEqual(plan.credits)
    expect(spent(await store.peek('key:failover', plan))).toBeGreaterThanOrEqual(tally.admitted)
    expect(await sentinel.master()).not.toBe(master)
    store.close()
  }, 60_000)
})
