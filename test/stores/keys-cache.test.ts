/**
 * The Redis key store's lookup cache on a single node, a cluster and a Sentinel group: kept KEY_CACHE_LIVE_MS
 * while the change channel is live, and emptied by what another instance's writes announce there (a revoke, a
 * plan, a rotation, a customer's plan) without the clock moving; kept only KEY_CACHE_MS while the channel is
 * down (its SUBSCRIBE refused, or its server stopped); never past a secret's end of grace or a key's expiry.
 * "Answered from the cache" is seen as findByHash returning the match itself rather than a promise.
 */
import { afterEach, describe, expect, test } from 'bun:test'
import { keyHash, type KeyMatch } from '../../src/stores/keys.ts'
import { KEY_CACHE_LIVE_MS, KEY_CACHE_MS, redisKeyStore, type RedisKeyStore } from '../../src/stores/keys-redis.ts'
import { ask, redisServers, waitFor } from '../support/redis-topologies.ts'

const servers = redisServers()
const opened: RedisKeyStore[] = []
afterEach(() => {
  for (const store of opened.splice(0)) store.close()
})

const T0 = Date.parse('2026-06-01T00:00:00Z')
const at = (ms: number) => new Date(ms).toISOString()
type Kind = 'single' | 'cluster' | 'sentinel'

/** Whether the store answered from its cache: a match at once, not a promise of one. */
const cached = (answer: ReturnType<RedisKeyStore['findByHash']>): answer is KeyMatch | null => !(answer instanceof Promise)

/** Whether `store` answers `key` from its cache; a lookup it asks Redis instead is waited for, so none outlives the test. */
async function fromCache(store: RedisKeyStore, key: string): Promise<boolean> {
  const answer = store.findByHash(keyHash(key))
  await answer
  return cached(answer)
}

/** Two instances (a and b) on one fresh store and one clock the test moves. */
function instances(kind: Kind, options: { maxBackoffMs?: number; staleIfErrorMs?: number } = {}) {
  const clock = { ms: T0 }
  const shared = { keyPrefix: servers.prefix('kc'), now: () => clock.ms, ...options }
  const a = redisKeyStore(servers.url(kind), shared)
  const b = redisKeyStore(servers.url(kind), shared)
  opened.push(a, b)
  return { clock, a, b }
}

/**
 * Looks `key` up through `store` (its first lookup subscribes it) until its channel is live, then moves the clock
 * past anything kept so far: the next lookup asks Redis, begun live, so its answer is kept KEY_CACHE_LIVE_MS from now.
 */
async function keptLong(store: RedisKeyStore, key: string, clock: { ms: number }) {
  await waitFor('the change channel to be live', async () => {
    await store.findByHash(keyHash(key))
    return store.cacheLive
  })
  clock.ms += KEY_CACHE_LIVE_MS
  const asked = store.findByHash(keyHash(key))
  expect(cached(asked)).toBe(false)
  expect(await asked).not.toBeNull()
}

/** Looks `key` up until the answer is kept: a lookup that a change's message overtook is not, and is asked again. */
const kept = (store: RedisKeyStore, key: string) =>
  waitFor('the answer to be kept', async () => {
    await store.findByHash(keyHash(key))
    return fromCache(store, key)
  })

/** Waits, the clock standing still, until `store` answers `key` with what `holds` wants. */
const untilAnswers = (store: RedisKeyStore, key: string, what: string, holds: (m: KeyMatch | null) => boolean) =>
  waitFor(what, async () => holds(await store.findByHash(keyHash(key))))

/** Runs `f` while every data node of `kind` refuses SUBSCRIBE and has dropped its subscribers; allowed again after. */
async function subscribeRefused(kind: Kind, f: () => Promise<void>) {
  const ports = kind === 'single' ? [servers.single.port] : kind === 'cluster' ? servers.cluster.ports : servers.sentinel.dataPorts
  const acl = (rule: string) => Promise.all(ports.map((port) => ask(port, 'ACL', ['SETUSER', 'default', rule])))
  await acl('-subscribe')
  try {
    await Promise.all(ports.map((port) => ask(port, 'CLIENT', ['KILL', 'TYPE', 'pubsub'])))
    await f()
  } finally {
    await acl('+subscribe')
  }
}

describe.each(['single', 'cluster', 'sentinel'] as const)('the key cache on %s', (kind) => {
  test('while the channel is live a match is kept KEY_CACHE_LIVE_MS, and no longer', async () => {
    const { clock, a, b } = instances(kind)
    const { key } = await b.create({ name: 'steady', plan: 'free' })
    await keptLong(a, key, clock)
    clock.ms += KEY_CACHE_LIVE_MS - 1
    expect(a.findByHash(keyHash(key))).toMatchObject({ record: { name: 'steady' } })
    clock.ms += 1
    expect(await fromCache(a, key)).toBe(false)
  })

  test("a plan change, a customer's new plan, a rotation and a revoke through another instance reach this one at once", async () => {
    const { clock, a, b } = instances(kind)
    await b.createCustomer({ name: 'Hooli', plan: 'free' }, 'cli:ann')
    const member = await b.create({ name: 'member', plan: null, customer: 'Hooli' }, 'cli:ann')
    const own = await b.create({ name: 'own', plan: 'free' }, 'cli:ann')
    await keptLong(a, member.key, clock)
    await kept(a, own.key)

    await b.update('own', { plan: 'gold' }, 'cli:ann')
    await untilAnswers(a, own.key, 'the new plan', (m) => m?.record.plan === 'gold')
    // Only the key announced was dropped.
    expect(a.findByHash(keyHash(member.key))).toMatchObject({ customer: { plan: 'free' } })

    await b.updateCustomer('Hooli', { plan: 'gold' }, 'cli:ann')
    await untilAnswers(a, member.key, "the customer's new plan", (m) => m?.customer?.plan === 'gold')
    // A customer's change names no key: every copy went.
    const asked = a.findByHash(keyHash(own.key))
    expect(cached(asked)).toBe(false)
    await asked

    expect(await fromCache(a, own.key)).toBe(true)
    const rotated = await b.rotate('own', { graceSeconds: 3600 }, 'cli:ann')
    await untilAnswers(a, own.key, 'the old secret to retire', (m) => m?.retires === rotated.previousUntil)

    expect(await fromCache(a, own.key)).toBe(true)
    await b.revoke('own', 'cli:ann')
    // The replaced secret leads to the revoked record.
    await untilAnswers(a, own.key, 'the revoke', (m) => m?.record.revoked === at(clock.ms))
    expect(clock.ms).toBe(T0 + KEY_CACHE_LIVE_MS)
  })

  test("no match is answered from the cache past its key's expiry or its old secret's end of grace", async () => {
    const { clock, a, b } = instances(kind)
    const expires = T0 + KEY_CACHE_LIVE_MS + KEY_CACHE_LIVE_MS / 2
    const expiring = await b.create({ name: 'expiring', plan: null, expires: at(expires) })
    await keptLong(a, expiring.key, clock)
    clock.ms = expires - 1
    expect(await fromCache(a, expiring.key)).toBe(true)
    clock.ms += 1
    const past = a.findByHash(keyHash(expiring.key))
    expect(cached(past)).toBe(false)
    expect((await past)?.record.expires).toBe(at(clock.ms))

    const old = await b.create({ name: 'rotating', plan: null })
    const { previousUntil } = await b.rotate('rotating', { graceSeconds: 10 }, 'cli:ann')
    expect((await a.findByHash(keyHash(old.key)))?.retires).toBe(previousUntil)
    await kept(a, old.key)
    clock.ms = Date.parse(previousUntil) - 1
    expect(await fromCache(a, old.key)).toBe(true)
    clock.ms += 1
    expect(await fromCache(a, old.key)).toBe(false)
  })

  test('the channel refused: the cache is dropped, lookups are kept KEY_CACHE_MS, and long again once it is back', async () => {
    const { clock, a, b } = instances(kind, { maxBackoffMs: 100 })
    const { key } = await b.create({ name: 'watched', plan: null })
    await keptLong(a, key, clock)
    await subscribeRefused(kind, async () => {
      await waitFor('the store to know its channel is down', async () => !a.cacheLive)
      // Dropped, though the clock has not moved.
      const asked = a.findByHash(keyHash(key))
      expect(cached(asked)).toBe(false)
      await asked
      clock.ms += KEY_CACHE_MS - 1
      expect(await fromCache(a, key)).toBe(true)
      clock.ms += 1
      expect(await fromCache(a, key)).toBe(false)
    })
    await keptLong(a, key, clock)
    clock.ms += KEY_CACHE_MS
    expect(await fromCache(a, key)).toBe(true)
  }, 30_000)
})

test('the single node stopped: the cache is dropped at once, nothing answered from a copy that may have missed a change', async () => {
  const { clock, a, b } = instances('single', { maxBackoffMs: 100 })
  const { key } = await b.create({ name: 'outage', plan: null })
  await keptLong(a, key, clock)
  clock.ms += KEY_CACHE_MS
  expect(await fromCache(a, key)).toBe(true)
  await servers.single.stop()
  try {
    await waitFor('the store to know its channel is down', async () => !a.cacheLive)
    const asked = a.findByHash(keyHash(key))
    expect(cached(asked)).toBe(false)
    expect(await Promise.resolve(asked).catch((e: Error) => e.message)).toContain('unreachable')
  } finally {
    await servers.single.start()
  }
  // The server came back empty (no persistence): the key is unknown, and the channel live again.
  await waitFor('the channel to be live again', async () => a.cacheLive)
  expect(await a.findByHash(keyHash(key))).toBeNull()
}, 30_000)

test('under fail-open, the single node stopped: a key seen in the last minute is answered as last seen, a revoked one is not', async () => {
  const { clock, a, b } = instances('single', { maxBackoffMs: 100, staleIfErrorMs: KEY_CACHE_LIVE_MS })
  const { key: seen } = await b.create({ name: 'seen', plan: null })
  const { key: revoked } = await b.create({ name: 'revoked', plan: null })
  await keptLong(a, revoked, clock)
  await keptLong(a, seen, clock)
  // The revoke's message drops a's copy; the next one a keeps says revoked.
  await b.revoke('revoked')
  await untilAnswers(a, revoked, 'the revoke heard', (m) => m?.record.revoked != null)
  await kept(a, revoked)
  await servers.single.stop()
  try {
    await waitFor('the store to know its channel is down', async () => !a.cacheLive)
    // Not fresh (it may have missed a change), so Redis is asked; Redis cannot answer, so the last copy does.
    const asked = a.findByHash(keyHash(seen))
    expect(cached(asked)).toBe(false)
    expect((await asked)?.record.name).toBe('seen')
    // The revoked key's last copy says it is revoked: answered so, as authentication then refuses it.
    expect((await a.findByHash(keyHash(revoked)))?.record.revoked).not.toBeNull()
    // A minute after it was asked, no copy answers.
    clock.ms += KEY_CACHE_LIVE_MS
    expect(await Promise.resolve(a.findByHash(keyHash(seen))).catch((e: Error) => e.message)).toContain('unreachable')
  } finally {
    await servers.single.start()
  }
}, 30_000)
