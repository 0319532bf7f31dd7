/**
 * The KeyStore contract, run against both stores: sqlite (a temp state dir) and redis (a real
 * redis-server), each on a clock the test moves. Keys, their updates and rotations, customers, the audit
 * log, and several stores on one database (as several CLIs or instances) racing. Then what only Redis
 * has: an outage (its lookup cache, and changes reaching every instance, are keys-cache.test.ts's). Last,
 * key databases of older schemas opening with their keys.
 */
import { describe, expect, test } from 'bun:test'
import { hex, keyHash, KeyStoreError, openKeyStore, type AuditEntry, type KeyStore } from '../../src/stores/keys.ts'
import { redisKeyStore } from '../../src/stores/keys-redis.ts'
import { startRedis } from '../support/redis.ts'
import { redisServers } from '../support/redis-topologies.ts'
import { tempDirs } from '../support/temp.ts'

const servers = redisServers()
const tempDir = tempDirs('almanac-keys-store-')

/** Given a clock, a fresh database and a way to open stores on it (each one a CLI or an instance of its own). */
type Backing = (now: () => number) => () => KeyStore
const backings: [string, Backing][] = [
  [
    'sqlite',
    (now) => {
      const dir = tempDir()
      return () => openKeyStore(dir, { now })
    },
  ],
  [
    'redis',
    (now) => {
      // A fresh key prefix per database, so tests do not see each other's keys on the shared server.
      const keyPrefix = servers.prefix('k')
      return () => redisKeyStore(servers.single.url, { keyPrefix, now })
    },
  ],
  ...(['cluster', 'sentinel'] as const).map((kind): [string, Backing] => [
    `redis ${kind}`,
    (now) => {
      const keyPrefix = servers.prefix('k')
      return () => redisKeyStore(servers.url(kind), { keyPrefix, now })
    },
  ]),
]

const T0 = Date.parse('2026-06-01T00:00:00Z')
const at = (ms: number) => new Date(ms).toISOString()

const failure = async (f: () => unknown) => {
  try {
    await f()
  } catch (e) {
    return e as Error
  }
  throw new Error('expected a failure')
}

describe.each(backings)('%s key store', (_, backing) => {
  /** A store on a new database. A store's own change is seen by its next lookup: it drops what it made wrong (SQLite keeps none). */
  const setup = () => {
    const clock = { ms: T0 }
    const open = backing(() => clock.ms)
    return { clock, open, store: open() }
  }

  test('create, find by hash, list and revoke keep every field', async () => {
    const { store } = setup()
    const { key, record } = await store.create({ name: 'alice', plan: 'tiny', scopes: ['ip', 'ua', 'ip'], expires: '2099-01-01' })
    expect(key).toMatch(/^alm_[0-9A-Za-z]{43}$/)
    expect(record).toEqual({
      id: expect.stringMatching(/^key_[0-9A-Za-z]{11}$/),
      name: 'alice',
      plan: 'tiny',
      created: at(T0),
      revoked: null,
      scopes: ['ip', 'ua'],
      expires: '2099-01-01T00:00:00.000Z',
      customer: null,
      rotated: null,
    })
    expect(await store.findByHash(keyHash(key))).toEqual({ record, customer: null, retires: null })
    expect(await store.findByHash(keyHash(key + 'x'))).toBeNull()
    const bob = await store.create({ name: 'bob', plan: null })
    expect(bob.record).toMatchObject({ plan: null, scopes: null, expires: null })
    // Oldest first; two keys made in the same millisecond are ordered by id, so compare as sets.
    expect((await store.list()).map((k) => k.name).sort()).toEqual(['alice', 'bob'])
    const revoked = await store.revoke('alice', 'cli:ops')
    expect(revoked).toEqual({ ...record, revoked: at(T0) })
    expect((await store.findByHash(keyHash(bob.key)))?.record.revoked).toBeNull()
    expect((await store.list()).map((k) => [k.name, k.revoked !== null]).sort()).toEqual([
      ['alice', true],
      ['bob', false],
    ])
    store.close()
  })

  test('names: one active key per name; a revoked name can be reused; revoke by id', async () => {
    const { store } = setup()
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

  test('bad names, plans, scopes, expiry, customers and actors are refused before anything is written', async () => {
    const { store } = setup()
    for (const [input, words] of [
      [{ name: ' ', plan: null }, 'the name is empty'],
      [{ name: 'key_0123456789A', plan: null }, 'looks like a key id'],
      [{ name: 'x', plan: 'no plan' }, '"no plan": not a plan name'],
      [{ name: 'x', plan: null, scopes: [] }, 'no scopes given'],
      [{ name: 'x', plan: null, scopes: ['IP'] }, '"IP" is not a domain name'],
      [{ name: 'x', plan: null, expires: 'soon' }, 'not a date'],
      [{ name: 'x', plan: null, customer: 'nobody' }, 'no customer has the id or name "nobody"'],
      [{ name: 'x', plan: null, customer: '' }, 'no customer has the id or name ""'],
    ] as const)
      expect((await failure(() => store.create(input as never))).message).toContain(words)
    expect((await failure(() => store.create({ name: 'x', plan: null }, ' '))).message).toContain('the actor " "')
    expect((await failure(() => store.createCustomer({ name: 'cus_0123456789A', plan: null }, 'cli:ops'))).message).toContain(
      'looks like a customer id',
    )
    expect(await store.list()).toEqual([])
    expect(await store.listCustomers()).toEqual([])
    expect(await store.audit()).toEqual([])
    store.close()
  })

  test('update changes a key in place: the same secret works with the new fields; null clears a field', async () => {
    const { store, clock } = setup()
    const { key, record } = await store.create({ name: 'svc', plan: 'free', scopes: ['ip'] }, 'cli:ann')
    await store.findByHash(keyHash(key))
    clock.ms += 1000
    const updated = await store.update('svc', { name: 'svc-2', plan: 'gold', scopes: null, expires: '2030-01-01' }, 'cli:bo')
    expect(updated).toEqual({ ...record, name: 'svc-2', plan: 'gold', scopes: null, expires: '2030-01-01T00:00:00.000Z' })
    expect(await store.findByHash(keyHash(key))).toEqual({ record: updated, customer: null, retires: null })
    // The old name is free again; the new one is taken.
    await store.create({ name: 'svc', plan: null })
    expect((await failure(() => store.update(record.id, { name: 'svc' }, 'cli:bo'))).message).toContain('already named "svc"')
    expect(await store.update(record.id, { plan: null, expires: null }, 'cli:bo')).toEqual({ ...updated, plan: null, expires: null })
    expect((await failure(() => store.update(record.id, {}, 'cli:bo'))).message).toContain('nothing to change')
    expect((await failure(() => store.update('ghost', { plan: null }, 'cli:bo'))).message).toContain('no key has the id or active name')
    await store.revoke(record.id)
    expect((await failure(() => store.update(record.id, { plan: 'free' }, 'cli:bo'))).message).toContain('cannot be changed')
    const updates = (await store.audit()).filter((e) => e.action === 'key.update')
    expect(updates).toEqual([
      {
        at: at(T0 + 1000),
        actor: 'cli:bo',
        action: 'key.update',
        target: record.id,
        changes: { plan: { from: 'gold', to: null }, expires: { from: '2030-01-01T00:00:00.000Z', to: null } },
      },
      {
        at: at(T0 + 1000),
        actor: 'cli:bo',
        action: 'key.update',
        target: record.id,
        changes: {
          name: { from: 'svc', to: 'svc-2' },
          plan: { from: 'free', to: 'gold' },
          scopes: { from: ['ip'], to: null },
          expires: { from: null, to: '2030-01-01T00:00:00.000Z' },
        },
      },
    ])
    // An update that changes nothing records nothing.
    const other = await store.create({ name: 'same', plan: 'free' })
    const before = (await store.audit()).length
    expect(await store.update('same', { plan: 'free' }, 'cli:bo')).toEqual(other.record)
    expect(await store.audit()).toHaveLength(before)
    store.close()
  })

  test('customers: unique names, a plan, keys joined by id or name; a lookup brings the customer along', async () => {
    const { store, clock } = setup()
    const acme = await store.createCustomer({ name: 'Acme', plan: 'gold' }, 'cli:ann')
    expect(acme).toEqual({ id: expect.stringMatching(/^cus_[0-9A-Za-z]{11}$/), name: 'Acme', plan: 'gold', created: at(T0) })
    expect((await failure(() => store.createCustomer({ name: 'Acme', plan: null }, 'cli:ann'))).message).toContain(
      'a customer is already named "Acme"',
    )
    clock.ms += 1
    const initech = await store.createCustomer({ name: 'Initech', plan: null }, 'cli:ann')
    expect(await store.listCustomers()).toEqual([acme, initech])
    const one = await store.create({ name: 'one', plan: 'free', customer: 'Acme' }, 'cli:ann')
    const two = await store.create({ name: 'two', plan: null, customer: acme.id }, 'cli:ann')
    expect([one.record.customer, two.record.customer]).toEqual([acme.id, acme.id])
    // The key keeps its own plan, unused while it has a customer.
    expect(await store.findByHash(keyHash(one.key))).toEqual({ record: one.record, customer: acme, retires: null })

    const renamed = await store.updateCustomer('Acme', { name: 'Acme Corp', plan: 'platinum' }, 'cli:bo')
    expect(renamed).toEqual({ ...acme, name: 'Acme Corp', plan: 'platinum' })
    expect((await store.findByHash(keyHash(two.key)))?.customer).toEqual(renamed)
    expect((await failure(() => store.updateCustomer(initech.id, { name: 'Acme Corp' }, 'cli:bo'))).message).toContain('already named')
    expect((await failure(() => store.updateCustomer('Acme', { plan: null }, 'cli:bo'))).message).toContain(
      'no customer has the id or name',
    )
    expect((await failure(() => store.updateCustomer(initech.id, {}, 'cli:bo'))).message).toContain('nothing to change')

    // Moving a key between customers, and out of any.
    expect((await store.update('one', { customer: 'Initech' }, 'cli:bo')).customer).toBe(initech.id)
    expect((await failure(() => store.update('one', { customer: 'Umbrella' }, 'cli:bo'))).message).toContain('"Umbrella"')
    expect((await store.update('one', { customer: null }, 'cli:bo')).customer).toBeNull()
    expect(await store.findByHash(keyHash(one.key))).toMatchObject({ record: { customer: null, plan: 'free' }, customer: null })
    const audit = await store.audit()
    expect(audit.filter((e) => e.target === acme.id).map((e) => [e.action, e.actor, e.changes])).toEqual([
      ['customer.update', 'cli:bo', { name: { from: 'Acme', to: 'Acme Corp' }, plan: { from: 'gold', to: 'platinum' } }],
      ['customer.create', 'cli:ann', { name: { from: null, to: 'Acme' }, plan: { from: null, to: 'gold' } }],
    ])
    expect(audit.find((e) => e.action === 'key.create' && e.target === two.record.id)?.changes).toEqual({
      name: { from: null, to: 'two' },
      customer: { from: null, to: acme.id },
    })
    store.close()
  })

  test('rotate: a new secret at once, the old one found with the end of its grace; a later rotation cuts older graces', async () => {
    const { store, clock } = setup()
    const first = await store.create({ name: 'rot', plan: null }, 'cli:ann')
    clock.ms += 60_000
    const second = await store.rotate('rot', { graceSeconds: 3600 }, 'cli:bo')
    expect(second.key).toMatch(/^alm_[0-9A-Za-z]{43}$/)
    expect(second.key).not.toBe(first.key)
    expect(second).toMatchObject({ record: { ...first.record, rotated: at(T0 + 60_000) }, previousUntil: at(T0 + 60_000 + 3_600_000) })
    expect(await store.findByHash(keyHash(second.key))).toEqual({ record: second.record, customer: null, retires: null })
    expect(await failure(() => store.rotate('rot', { graceSeconds: -1 }, 'cli:bo'))).toBeInstanceOf(KeyStoreError)
    expect(await failure(() => store.rotate('rot', { graceSeconds: 1.5 }, 'cli:bo'))).toBeInstanceOf(KeyStoreError)

    clock.ms += 60_000
    const firstMatch = await store.findByHash(keyHash(first.key))
    expect(firstMatch).toEqual({ record: second.record, customer: null, retires: second.previousUntil })
    // A second rotation with no grace: the first secret's grace is cut to now too, only the newest works.
    const third = await store.rotate(first.record.id, { graceSeconds: 0 }, 'cli:bo')
    expect(third.previousUntil).toBe(at(clock.ms))
    expect((await store.findByHash(keyHash(first.key)))?.retires).toBe(at(clock.ms))
    expect((await store.findByHash(keyHash(second.key)))?.retires).toBe(at(clock.ms))
    expect((await store.findByHash(keyHash(third.key)))?.retires).toBeNull()

    const rotations = (await store.audit()).filter((e) => e.action === 'key.rotate')
    expect(rotations.map((e) => e.changes)).toEqual([
      { rotated: { from: at(T0 + 60_000), to: at(T0 + 120_000) }, grace_until: { from: null, to: at(T0 + 120_000) } },
      { rotated: { from: null, to: at(T0 + 60_000) }, grace_until: { from: null, to: second.previousUntil } },
    ])
    await store.revoke('rot', 'cli:bo')
    expect((await failure(() => store.rotate('rot', { graceSeconds: 0 }, 'cli:bo'))).message).toContain('no key has the id or active name')
    expect((await failure(() => store.rotate(first.record.id, { graceSeconds: 0 }, 'cli:bo'))).message).toContain('cannot be changed')
    // A revoked key's old secrets lead to the revoked record.
    expect((await store.findByHash(keyHash(first.key)))?.record.revoked).toEqual(expect.any(String))
    store.close()
  })

  test('the audit log: every action with its actor and time, newest first, by limit and since; never a secret', async () => {
    const { store, clock } = setup()
    const made = await store.create({ name: 'audited', plan: null }, 'cli:ann')
    clock.ms += 1000
    await store.createCustomer({ name: 'Globex', plan: null }, 'admin:console')
    clock.ms += 1000
    await store.update('audited', { customer: 'Globex' }, 'cli:ann')
    clock.ms += 1000
    const rotated = await store.rotate('audited', { graceSeconds: 10 }, 'cli:ann')
    clock.ms += 1000
    await store.revoke('audited')
    const all = await store.audit()
    expect(all.map((e) => [e.action, e.actor, e.at])).toEqual([
      ['key.revoke', 'unknown', at(T0 + 4000)],
      ['key.rotate', 'cli:ann', at(T0 + 3000)],
      ['key.update', 'cli:ann', at(T0 + 2000)],
      ['customer.create', 'admin:console', at(T0 + 1000)],
      ['key.create', 'cli:ann', at(T0)],
    ])
    expect((await store.audit({ limit: 2 })).map((e) => e.action)).toEqual(['key.revoke', 'key.rotate'])
    expect((await store.audit({ since: at(T0 + 2000) })).map((e) => e.action)).toEqual(['key.revoke', 'key.rotate', 'key.update'])
    expect(await failure(() => store.audit({ limit: 0 }))).toBeInstanceOf(KeyStoreError)
    expect(await failure(() => store.audit({ since: 'last week' }))).toBeInstanceOf(KeyStoreError)
    const text = JSON.stringify(all)
    for (const secret of [made.key, rotated.key]) {
      expect(text).not.toContain(secret)
      expect(text).not.toContain(hex(keyHash(secret)))
    }
    store.close()
  })

  test('stores racing on one database: one name is won once; every rotation lands, one secret is current', async () => {
    const { open } = setup()
    const stores = Array.from({ length: 6 }, open)
    const keys = await Promise.all(stores.map((s, i) => s.create({ name: `racer-${i}`, plan: null }, `cli:${i}`)))
    // SQLite answers (and throws) at once: async, so a refusal is a rejected promise for both stores.
    const renames = await Promise.allSettled(stores.map(async (s, i) => s.update(`racer-${i}`, { name: 'winner' }, `cli:${i}`)))
    expect(renames.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
    for (const r of renames.filter((r) => r.status === 'rejected'))
      expect((r as PromiseRejectedResult).reason.message).toContain('already named "winner"')
    expect((await stores[0]!.list()).filter((k) => k.name === 'winner')).toHaveLength(1)

    const customers = await Promise.allSettled(stores.map(async (s, i) => s.createCustomer({ name: 'Same Co', plan: null }, `cli:${i}`)))
    expect(customers.filter((r) => r.status === 'fulfilled')).toHaveLength(1)

    const target = keys[0]!.record.id
    const rotations = await Promise.all(stores.map((s, i) => s.rotate(target, { graceSeconds: 60 }, `cli:${i}`)))
    const finder = open()
    const current = await Promise.all(rotations.map(async (r) => (await finder.findByHash(keyHash(r.key)))?.retires))
    finder.close()
    expect(current.filter((retires) => retires === null)).toHaveLength(1)
    expect(current.filter((retires) => typeof retires === 'string')).toHaveLength(stores.length - 1)
    const audit = await stores[0]!.audit({ limit: 1000 })
    expect(audit.filter((e: AuditEntry) => e.action === 'key.rotate' && e.target === target)).toHaveLength(stores.length)
    expect(audit.filter((e: AuditEntry) => e.action === 'key.update')).toHaveLength(1)
    expect(audit.filter((e: AuditEntry) => e.action === 'customer.create')).toHaveLength(1)
    for (const s of stores) s.close()
  })
})

describe('redis key store', () => {
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

describe('key databases of older schemas', () => {
  const { Database } = require('bun:sqlite') as typeof import('bun:sqlite')
  const FIRST_SCHEMA = `CREATE TABLE api_keys (
     id TEXT PRIMARY KEY, hash BLOB NOT NULL UNIQUE, name TEXT NOT NULL, plan TEXT, created_at TEXT NOT NULL, revoked_at TEXT
   ) STRICT;
   CREATE UNIQUE INDEX api_keys_active_name ON api_keys(name) WHERE revoked_at IS NULL;`

  test('the first schema gains scopes and expiry; its keys keep working, unscoped and unexpiring', async () => {
    const dir = tempDir()
    const old = new Database(`${dir}/keys.sqlite`, { create: true })
    old.exec(`${FIRST_SCHEMA} PRAGMA user_version = 1;`)
    old
      .query('INSERT INTO api_keys (id, hash, name, plan, created_at) VALUES (?, ?, ?, ?, ?)')
      .run('key_AAAAAAAAAAA', keyHash('alm_old-key'), 'legacy', 'free', '2026-01-01T00:00:00.000Z')
    old.close()
    const store = openKeyStore(dir)
    expect((await store.findByHash(keyHash('alm_old-key')))?.record).toEqual({
      id: 'key_AAAAAAAAAAA',
      name: 'legacy',
      plan: 'free',
      created: '2026-01-01T00:00:00.000Z',
      revoked: null,
      scopes: null,
      expires: null,
      customer: null,
      rotated: null,
    })
    const made = await store.create({ name: 'new', plan: null, scopes: ['ip'] })
    expect((await store.findByHash(keyHash(made.key)))?.record.scopes).toEqual(['ip'])
    store.close()
  })

  test('the second schema (scopes, expiry) gains customers, rotation and the audit log; its keys are kept as they were', async () => {
    const dir = tempDir()
    const old = new Database(`${dir}/keys.sqlite`, { create: true })
    old.exec(`${FIRST_SCHEMA}
      ALTER TABLE api_keys ADD COLUMN scopes TEXT;
      ALTER TABLE api_keys ADD COLUMN expires_at TEXT;
      PRAGMA user_version = 2;`)
    const insert = old.query(
      'INSERT INTO api_keys (id, hash, name, plan, created_at, revoked_at, scopes, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    )
    insert.run(
      'key_BBBBBBBBBBB',
      keyHash('alm_scoped'),
      'scoped',
      'gold',
      '2026-01-01T00:00:00.000Z',
      null,
      'ip ua',
      '2099-01-01T00:00:00.000Z',
    )
    insert.run('key_CCCCCCCCCCC', keyHash('alm_gone'), 'gone', null, '2026-01-02T00:00:00.000Z', '2026-02-01T00:00:00.000Z', null, null)
    old.close()
    const store = openKeyStore(dir, { now: () => T0 })
    expect((await store.list()).map((k) => [k.id, k.name, k.plan, k.revoked, k.scopes, k.expires, k.customer, k.rotated])).toEqual([
      ['key_BBBBBBBBBBB', 'scoped', 'gold', null, ['ip', 'ua'], '2099-01-01T00:00:00.000Z', null, null],
      ['key_CCCCCCCCCCC', 'gone', null, '2026-02-01T00:00:00.000Z', null, null, null, null],
    ])
    expect((await store.findByHash(keyHash('alm_scoped')))?.record.name).toBe('scoped')
    await store.createCustomer({ name: 'Legacy Co', plan: null }, 'cli:ops')
    await store.update('scoped', { customer: 'Legacy Co' }, 'cli:ops')
    const rotated = await store.rotate('scoped', { graceSeconds: 60 }, 'cli:ops')
    expect((await store.findByHash(keyHash('alm_scoped')))?.retires).toBe(rotated.previousUntil)
    expect((await store.audit()).map((e) => e.action)).toEqual(['key.rotate', 'key.update', 'customer.create'])
    store.close()
    // Opened again, nothing runs twice.
    const reopened = openKeyStore(dir)
    expect((await reopened.list()).length).toBe(2)
    reopened.close()
  })
})
