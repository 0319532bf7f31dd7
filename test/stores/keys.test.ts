/**
 * The KeyStore contract, run against both stores: sqlite (a temp state dir) and redis (a real
 * redis-server). Then what only Redis has: several stores (as several instances) on one server, a revoke
 * honoured by all within KEY_CACHE_MS on a clock the test moves, racing creates of one name, an outage.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { keyHash, KeyStoreError, openKeyStore, type KeyStore } from '../../src/stores/keys.ts'
import { KEY_CACHE_MS, redisKeyStore } from '../../src/stores/keys-redis.ts'
import { startRedis, type TestRedis } from '../support/redis.ts'
import { tempDirs } from '../support/temp.ts'

let redis: TestRedis
const tempDir = tempDirs('almanac-keys-store-')
let prefixes = 0

beforeAll(async () => {
  redis = await startRedis()
})
afterAll(() => redis.close())

const stores: [string, () => KeyStore][] = [
  ['sqlite', () => openKeyStore(tempDir())],
  // A fresh key prefix per store, so tests do not see each other's keys on the shared server.
  ['redis', () => redisKeyStore(redis.url, { keyPrefix: `k${++prefixes}:` })],
]

const failure = async (f: () => unknown) => {
  try {
    await f()
  } catch (e) {
    return e as Error
  }
  throw new Error('expected a failure')
}

describe.each(stores)('%s key store', (_, make) => {
  test('create, find by hash, list and revoke keep every field', async () => {
    const store = make()
    const { key, record } = await store.create({ name: 'alice', plan: 'tiny', scopes: ['ip', 'ua', 'ip'], expires: '2099-01-01' })
    expect(key).toMatch(/^alm_[0-9A-Za-z]{43}$/)
    expect(record).toEqual({
      id: expect.stringMatching(/^key_[0-9A-Za-z]{11}$/),
      name: 'alice',
      plan: 'tiny',
      created: expect.any(String),
      revoked: null,
      scopes: ['ip', 'ua'],
      expires: '2099-01-01T00:00:00.000Z',
    })
    expect(await store.findByHash(keyHash(key))).toEqual(record)
    expect(await store.findByHash(keyHash(key + 'x'))).toBeNull()
    const bob = await store.create({ name: 'bob', plan: null })
    expect(bob.record).toMatchObject({ plan: null, scopes: null, expires: null })
    // Oldest first; two keys made in the same millisecond are ordered by id, so compare as sets.
    expect((await store.list()).map((k) => k.name).sort()).toEqual(['alice', 'bob'])
    const revoked = await store.revoke('alice')
    expect(revoked).toEqual({ ...record, revoked: expect.any(String) })
    expect((await store.findByHash(keyHash(bob.key)))?.revoked).toBeNull()
    expect((await store.list()).map((k) => [k.name, k.revoked !== null]).sort()).toEqual([
      ['alice', true],
      ['bob', false],
    ])
    store.close()
  })

  test('names: one active key per name; a revoked name can be reused; revoke by id', async () => {
    const store = make()
    const first = await store.create({ name: 'carol', plan: null })
    const taken = await failure(() => store.create({ name: 'carol', plan: null }))
    expect(taken).toBeInstanceOf(KeyStoreError)
    expect(taken.message).toContain('already named "carol"')
    await store.revoke(first.record.id)
    const again = await failure(() => store.revoke(first.record.id))
    expect(again.message).toContain('already revoked')
    expect((await failure(() => store.revoke('carol'))).message).toContain('no key has the id or active name "carol"')
    const second = await store.create({ name: 'carol', plan: null })
    expect(second.record.id).not.toBe(first.record.id)
    expect((await store.revoke('carol')).id).toBe(second.record.id)
    expect((await failure(() => store.revoke('nobody'))).message).toContain('no key has the id or active name')
    store.close()
  })

  test('bad names, scopes and expiry are refused before anything is written', async () => {
    const store = make()
    for (const [input, words] of [
      [{ name: ' ', plan: null }, 'the name is empty'],
      [{ name: 'key_0123456789A', plan: null }, 'looks like a key id'],
      [{ name: 'x', plan: null, scopes: [] }, 'no scopes given'],
      [{ name: 'x', plan: null, scopes: ['IP'] }, '"IP" is not a domain name'],
      [{ name: 'x', plan: null, expires: 'soon' }, 'not a date'],
    ] as const)
      expect((await failure(() => store.create(input as never))).message).toContain(words)
    expect(await store.list()).toEqual([])
    store.close()
  })
})

describe('redis key store across instances', () => {
  test('a key made through one store is found by another at once; a revoke is honoured within KEY_CACHE_MS', async () => {
    const prefix = `shared${++prefixes}:`
    const clock = { ms: 1_000_000 }
    const a = redisKeyStore(redis.url, { keyPrefix: prefix, now: () => clock.ms })
    const b = redisKeyStore(redis.url, { keyPrefix: prefix, now: () => clock.ms })
    const { key, record } = await b.create({ name: 'dora', plan: null })
    expect(await a.findByHash(keyHash(key))).toEqual(record)
    // a now answers from its copy (no promise) until KEY_CACHE_MS has passed on its clock.
    expect(a.findByHash(keyHash(key))).toEqual(record)
    await b.revoke(record.id)
    clock.ms += KEY_CACHE_MS - 1
    expect((a.findByHash(keyHash(key)) as { revoked: string | null }).revoked).toBeNull()
    clock.ms += 1
    expect((await a.findByHash(keyHash(key)))?.revoked).toEqual(expect.any(String))
    a.close()
    b.close()
  })

  test('two stores creating one name at once: exactly one wins', async () => {
    const prefix = `race${++prefixes}:`
    const stores = Array.from({ length: 8 }, () => redisKeyStore(redis.url, { keyPrefix: prefix }))
    const results = await Promise.allSettled(stores.map((s) => s.create({ name: 'same', plan: null })))
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
    expect(results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.message)).toEqual(
      Array(7).fill('an active key is already named "same"; revoke it first or choose another name'),
    )
    expect((await stores[0]!.list()).map((k) => k.name)).toEqual(['same'])
    for (const s of stores) s.close()
  })

  test('Redis down: lookups fail fast with the store named, and work again when it is back', async () => {
    const own = await startRedis()
    const store = redisKeyStore(own.url, { timeoutMs: 300, maxBackoffMs: 100 })
    const { key } = await store.create({ name: 'eve', plan: null })
    await own.stop()
    const down = await failure(() => store.findByHash(keyHash(key + 'other')))
    expect(down.message).toContain(`Redis at ${own.url} is unreachable`)
    await own.start()
    // The server restarted without persistence: the key is gone, and the store answers again.
    let answer: unknown = 'unreachable'
    for (let i = 0; i < 200 && answer === 'unreachable'; i++) {
      answer = await Promise.resolve(store.findByHash(keyHash(key))).catch(() => 'unreachable')
      if (answer === 'unreachable') await Bun.sleep(20)
    }
    expect(answer).toBeNull()
    store.close()
    await own.close()
  })
})

test('a key database of the first schema gains scopes and expiry; its keys keep working, unscoped and unexpiring', async () => {
  const { Database } = await import('bun:sqlite')
  const dir = tempDir()
  const old = new Database(`${dir}/keys.sqlite`, { create: true })
  old.exec(`CREATE TABLE api_keys (
     id TEXT PRIMARY KEY, hash BLOB NOT NULL UNIQUE, name TEXT NOT NULL, plan TEXT, created_at TEXT NOT NULL, revoked_at TEXT
   ) STRICT;
   CREATE UNIQUE INDEX api_keys_active_name ON api_keys(name) WHERE revoked_at IS NULL;
   PRAGMA user_version = 1;`)
  old
    .query('INSERT INTO api_keys (id, hash, name, plan, created_at) VALUES (?, ?, ?, ?, ?)')
    .run('key_AAAAAAAAAAA', keyHash('alm_old-key'), 'legacy', 'free', '2026-01-01T00:00:00.000Z')
  old.close()
  const store = openKeyStore(dir)
  expect(await store.findByHash(keyHash('alm_old-key'))).toEqual({
    id: 'key_AAAAAAAAAAA',
    name: 'legacy',
    plan: 'free',
    created: '2026-01-01T00:00:00.000Z',
    revoked: null,
    scopes: null,
    expires: null,
  })
  const made = await store.create({ name: 'new', plan: null, scopes: ['ip'] })
  expect((await store.findByHash(keyHash(made.key)))?.scopes).toEqual(['ip'])
  store.close()
})
