/**
 * The shared stores on a Redis Cluster and a Sentinel group when it matters (issue 46): two instances
 * racing on one quota admit exactly what fits; a revoke through one instance reaches another through the
 * key store's change channel; and a failover. The master holding a quota key (the cluster master owning
 * its slot, or the Sentinel master) is killed while consuming: every consume during the gap is refused with an error
 * (fail-closed: the caller answers 503), the store resumes by itself once a replica is promoted, and the
 * plan is never over-spent. The gap, from the kill to the first consume that goes through, is printed.
 *
 * The key store and the usage ledger fail over too: the master holding the key store's slot (or the
 * Sentinel master) is killed while lookups and a revoke run; lookups fail fast, resume by themselves, and
 * a key created and a key revoked after the kill are seen. The master holding a day's ledger slot is
 * killed while a usage meter writes batches; the meter keeps and retries them, the ledger applies each
 * once, and afterwards it holds what was recorded (the bound on what asynchronous replication may lose is
 * asserted and what was lost printed).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Plan } from '../../src/config.ts'
import { keyHash } from '../../src/stores/keys.ts'
import { KEY_CACHE_MS, redisKeyStore } from '../../src/stores/keys-redis.ts'
import type { QuotaState, QuotaStore } from '../../src/stores/quota.ts'
import { quotaKey, redisQuotaStore } from '../../src/stores/quota-redis.ts'
import { periodOf } from '../../src/stores/usage.ts'
import { redisUsageStore } from '../../src/stores/usage-redis.ts'
import type { Exchange } from '../../src/http/edge/exchange.ts'
import { createUsageMeter } from '../../src/http/edge/usage-meter.ts'
import { ask, clusterUrl, sentinelUrl, startTopologies, waitFor } from '../support/redis-topologies.ts'

let topologies: Awaited<ReturnType<typeof startTopologies>>
beforeAll(async () => {
  // Three Sentinel failovers in this file (quota, keys, ledger): each uses up one replica.
  topologies = await startTopologies({ sentinelReplicas: 3 })
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

  test('a revoke through one instance reaches another through the change channel, the clock standing still', async () => {
    const clock = { ms: 5_000_000 }
    const options = { keyPrefix: `revoke-${kind}:`, now: () => clock.ms }
    const a = redisKeyStore(urlOf(kind), options)
    const b = redisKeyStore(urlOf(kind), options)
    const { key, record } = await b.create({ name: 'mallory', plan: null })
    await waitFor('a to keep the key, its change channel live', async () => {
      expect((await a.findByHash(keyHash(key)))?.record.revoked).toBeNull()
      return a.cacheLive && !(a.findByHash(keyHash(key)) instanceof Promise)
    })
    await b.revoke(record.id)
    // The clock never moves, so a's copy could not have lapsed: only the channel can have told it.
    await waitFor(
      'the revoke to reach a',
      async () => (await a.findByHash(keyHash(key)))?.record.revoked === new Date(clock.ms).toISOString(),
    )
    expect(clock.ms).toBe(5_000_000)
    a.close()
    b.close()
  })
})

/** Credits the counter holds as spent: never fewer than were admitted (none lost, so none given out twice). */
const spent = (state: QuotaState) => state.limit - state.remaining

/** What a consumer saw across a failover: consumes admitted, refused for want of credits, and failed (the 503s). */
/** One moment every consume and key name of this file counts in: a window never turns between two of them. */
const NOW = Date.now()

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
      const state = await store.consume('key:failover', plan, 1, NOW)
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

describe.each(['cluster', 'sentinel'] as const)('failover of the quota store on a Redis %s', (kind) => {
  const plan: Plan = { name: 'failover', credits: 200, windowSeconds: 3600 }

  test('the master holding the counter is killed; consumes fail (503) until a replica serves, none over-spent', async () => {
    const window = Math.floor(NOW / 3_600_000) * 3600
    const { prefix, owner } = await failoverTarget(kind, `fo-quota-${kind}`, (p) => quotaKey(p, 'key:failover', plan, window))
    const store = redisQuotaStore(urlOf(kind), { keyPrefix: prefix, timeoutMs: 500, maxBackoffMs: 200 })
    const tally = await consumeThroughFailover(store, plan, () => killer(kind)(owner))
    console.log(
      `${kind} failover: ${tally.gapMs.toFixed(0)} ms from the kill to the first answer; ${tally.failed} consumes failed meanwhile`,
    )
    expect(tally.failed).toBeGreaterThan(0)
    expect(tally.admitted).toBeLessThanOrEqual(plan.credits)
    // Every admitted credit is counted; beyond them, at most the one consume in flight at the kill.
    const counted = spent(await store.peek('key:failover', plan, NOW))
    expect(counted).toBeGreaterThanOrEqual(tally.admitted)
    expect(counted - tally.admitted).toBeLessThanOrEqual(1)
    const masters = kind === 'cluster' ? await topologies.cluster.masters() : [await topologies.sentinel.master()]
    expect(masters).not.toContain(owner)
    store.close()
  }, 60_000)
})

/**
 * A prefix whose store lands on a master that has a live replica, and that master: earlier kills in this
 * file leave a shard (cluster) or the group (Sentinel) without one, and killing that would be an outage, not
 * a failover. `keyOf` names a key of the store under a prefix (only the owner answers it on a cluster).
 */
async function failoverTarget(kind: 'cluster' | 'sentinel', name: string, keyOf: (prefix: string) => string) {
  const hasReplica = async (port: number) => String(await ask(port, 'INFO', ['replication'])).includes('state=online')
  if (kind === 'sentinel') {
    const { sentinel } = topologies
    let master = 0
    // After a failover the sentinels reconfigure the other replicas to follow the new master: wait for one.
    await waitFor('the Sentinel master has a live replica', async () => {
      master = (await sentinel.master()) ?? 0
      return master > 0 && (await hasReplica(master))
    })
    return { prefix: `${name}:`, owner: master }
  }
  for (let i = 0; i < 50; i++) {
    const prefix = `${name}-${i}:`
    const masters = await topologies.cluster.masters()
    const owner = (await Promise.all(masters.map(async (p) => [p, await ask(p, 'EXISTS', [keyOf(prefix)])] as const))).find(
      ([, has]) => has !== null,
    )?.[0]
    if (owner && (await hasReplica(owner))) return { prefix, owner }
  }
  throw new Error('no master with a live replica')
}

const killer = (kind: 'cluster' | 'sentinel') => (port: number) =>
  kind === 'cluster' ? topologies.cluster.kill(port) : topologies.sentinel.kill(port)

describe.each(['cluster', 'sentinel'] as const)('failover of the key store on a Redis %s', (kind) => {
  test('lookups fail fast while the master is away, resume by themselves; a key created and one revoked since are seen', async () => {
    const timeoutMs = 500
    const { prefix, owner } = await failoverTarget(kind, `fo-keys-${kind}`, (p) => `{${p}}ids`)
    // Every lookup moves the store's clock past KEY_CACHE_MS: each one asks Redis, none is answered from the cache.
    const clock = { ms: Date.now() }
    const store = redisKeyStore(urlOf(kind), { keyPrefix: prefix, timeoutMs, maxBackoffMs: 200, now: () => clock.ms })
    const kept = await store.create({ name: 'kept', plan: null })
    const doomed = await store.create({ name: 'doomed', plan: null })
    await killer(kind)(owner)
    const killedAt = performance.now()
    let failed = 0
    let slowest = 0
    let gapMs = 0
    // The revoke runs alongside the lookups, retried until Redis takes it (a retry after a lost reply finds it done).
    const revoked = (async () => {
      for (;;) {
        try {
          return await store.revoke(doomed.record.id)
        } catch (e) {
          if (/already revoked/i.test((e as Error).message)) return null
          await Bun.sleep(20)
        }
      }
    })()
    while (!gapMs) {
      clock.ms += KEY_CACHE_MS
      const started = performance.now()
      try {
        expect((await store.findByHash(keyHash(kept.key)))?.record.id).toBe(kept.record.id)
        gapMs = performance.now() - killedAt
      } catch (e) {
        if (!/unreachable|took longer/.test((e as Error).message)) throw e
        failed++
        slowest = Math.max(slowest, performance.now() - started)
        if (performance.now() - killedAt > 30_000) throw new Error('the key store did not resume within 30 s')
        await Bun.sleep(10)
      }
    }
    await revoked
    const fresh = await store.create({ name: 'made-after', plan: null })
    clock.ms += KEY_CACHE_MS
    console.log(
      `${kind} key store failover: ${gapMs.toFixed(0)} ms from the kill to the first lookup answered; ` +
        `${failed} lookups failed meanwhile, the slowest in ${slowest.toFixed(0)} ms (timeout ${timeoutMs} ms)`,
    )
    expect(failed).toBeGreaterThan(0)
    expect((await store.findByHash(keyHash(fresh.key)))?.record.id).toBe(fresh.record.id)
    expect((await store.findByHash(keyHash(doomed.key)))?.record.revoked).toEqual(expect.any(String))
    store.close()
  }, 60_000)
})

/** Rows the meter holds, written or not: its own gauge. */
const pendingRows = (metrics: string) => Number(/^almanac_usage_pending_rows (\d+)$/m.exec(metrics)?.[1])

describe.each(['cluster', 'sentinel'] as const)('failover of the usage ledger on a Redis %s', (kind) => {
  test('a meter writing batches through the kill retries them; afterwards the ledger holds what was recorded', async () => {
    // One hour on the meter's clock: every batch is one day, one slot.
    const hour = Math.floor(NOW / 3_600_000) * 3_600_000
    const day = periodOf('day', hour / 1000)
    const { prefix, owner } = await failoverTarget(kind, `fo-usage-${kind}`, (p) => `{${p}${day}}:day:${day}`)
    const store = redisUsageStore(urlOf(kind), { keyPrefix: prefix, timeoutMs: 500, maxBackoffMs: 200 })
    // A long interval: the test writes with flush(), never waits for the timer.
    const meter = createUsageMeter(store, { intervalMs: 3_600_000, clock: () => hour })
    const exchange = { principal: { caller: 'key:failover' } } as unknown as Exchange
    let sent = 0
    /** Requests in the batches acknowledged by the last flush before the kill: what replication may not have carried yet. */
    let lastAcknowledged = 0
    let killedAt = 0
    let gapMs = 0
    let failedFlushes = 0
    for (let flushes = 0; !gapMs || flushes < 200; flushes++) {
      const requests = 1 + (flushes % 5)
      for (let i = 0; i < requests; i++) meter.record(exchange, 'GET', 200, 0.001, 10)
      sent += requests
      await meter.flush()
      const pending = pendingRows(meter.metrics())
      if (pending) failedFlushes++
      else if (killedAt && !gapMs) gapMs = performance.now() - killedAt
      if (flushes === 50) {
        // Every batch so far was acknowledged (nothing pending): the last one is the most a kill can take with it.
        expect(pending).toBe(0)
        lastAcknowledged = requests
        await killer(kind)(owner)
        killedAt = performance.now()
      }
      if (killedAt && performance.now() - killedAt > 30_000) throw new Error('the ledger did not resume within 30 s')
      // While failing, poll the store again shortly: the wait is Redis's failover, not a fixed delay.
      if (pending) await Bun.sleep(10)
    }
    await meter.close()
    expect(pendingRows(meter.metrics())).toBe(0)
    const rows = await store.read({ grain: 'day', since: day, until: day + 1 })
    const total = rows.reduce((sum, r) => sum + r.requests, 0)
    console.log(
      `${kind} usage ledger failover: ${gapMs.toFixed(0)} ms from the kill to the first batch written; ${failedFlushes} flushes ` +
        `failed and were retried; ${sent} requests recorded, ${total} in the ledger (${sent - total} lost)`,
    )
    expect(failedFlushes).toBeGreaterThan(0)
    // Never counted twice; at most the batch acknowledged just before the kill lost with the master (asynchronous replication).
    expect(total).toBeLessThanOrEqual(sent)
    expect(total).toBeGreaterThanOrEqual(sent - lastAcknowledged)
    await store.close()
  }, 60_000)
})
