/**
 * Keys of customers, and rotated keys, as authentication sees them: the authenticator over a real key
 * store (SQLite in a temp dir, Redis on a real redis-server), on a clock the test moves. Two keys of one
 * customer are one subject on the customer's plan; a customer's new plan is seen at once (Redis: the store that
 * made the change drops its cached lookups); a replaced secret works through its grace, then is a 401 saying it was
 * rotated. Last, through the app: two keys of one customer spend one pool of credits.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createAuthenticator, type Principal } from '../../src/http/admission/auth.ts'
import { AlmanacError } from '../../src/lib/errors.ts'
import { redisKeyStore } from '../../src/stores/keys-redis.ts'
import { openKeyStore, type KeyStore } from '../../src/stores/keys.ts'
import { testApp, testConfig } from '../support/app.ts'
import { startRedis, type TestRedis } from '../support/redis.ts'
import { sampleDomain } from '../support/sample-domain.ts'
import { tempDirs } from '../support/temp.ts'

let redis: TestRedis
const tempDir = tempDirs('almanac-auth-customers-')
beforeAll(async () => {
  redis = await startRedis()
})
afterAll(() => redis.close())

const config = testConfig({ ALMANAC_PLANS: 'free:100/1d,gold:5000/1h,silver:500/1h,test:1000/1d', ALMANAC_DEFAULT_PLAN: 'free' })

/** Each store (a change made through a Redis store drops that store's cached lookups at once). */
const stores: [string, (now: () => number) => KeyStore][] = [
  ['sqlite', (now) => openKeyStore(tempDir(), { now })],
  ['redis', (now) => redisKeyStore(redis.url, { keyPrefix: `auth${Math.random()}:`, now })],
]

describe.each(stores)('%s key store', (_, open) => {
  const clock = { ms: Date.parse('2026-06-01T00:00:00Z') }
  let keys: KeyStore
  let auth: ReturnType<typeof createAuthenticator>
  beforeAll(() => {
    keys = open(() => clock.ms)
    auth = createAuthenticator(config, { keys, clock: () => clock.ms })
  })
  afterAll(() => keys.close())

  const principal = async (key: string): Promise<Principal> =>
    auth.authenticate(new Request('http://localhost/api/v1/planets/earth', { headers: { 'x-api-key': key } }))
  const refusal = async (key: string) => {
    try {
      await principal(key)
    } catch (e) {
      if (e instanceof AlmanacError) return { kind: e.kind, detail: e.detail }
      throw e
    }
    throw new Error('expected the key to be refused')
  }

  test("two keys of one customer: one subject, the customer's plan, each its own caller", async () => {
    const acme = await keys.createCustomer({ name: 'Acme', plan: 'gold' }, 'cli:test')
    const one = await keys.create({ name: 'acme-1', plan: 'silver', customer: 'Acme' }, 'cli:test')
    const two = await keys.create({ name: 'acme-2', plan: null, customer: acme.id, scopes: ['planets'] }, 'cli:test')
    const lone = await keys.create({ name: 'lone', plan: 'silver' }, 'cli:test')
    const [p1, p2, p3] = await Promise.all([principal(one.key), principal(two.key), principal(lone.key)])
    expect(p1).toEqual({
      subject: `customer:${acme.id}`,
      caller: `key:${one.record.id}`,
      customer: acme.id,
      plan: config.plans.get('gold')!,
      via: 'key',
    })
    expect(p2).toMatchObject({ subject: `customer:${acme.id}`, caller: `key:${two.record.id}`, customer: acme.id, plan: { name: 'gold' } })
    expect([...p2.scopes!]).toEqual(['planets'])
    // A key of no customer is as before: its own subject and plan.
    expect(p3).toEqual({ subject: `key:${lone.record.id}`, caller: `key:${lone.record.id}`, plan: config.plans.get('silver')!, via: 'key' })

    // The customer's plan changes: every key of it follows at once, the clock standing still.
    await keys.updateCustomer('Acme', { plan: null }, 'cli:test')
    expect((await principal(one.key)).plan.name).toBe('free')
    expect((await principal(two.key)).plan.name).toBe('free')

    // Out of the customer, the key's own plan counts again.
    await keys.update('acme-1', { customer: null }, 'cli:test')
    expect(await principal(one.key)).toEqual({
      subject: `key:${one.record.id}`,
      caller: `key:${one.record.id}`,
      plan: config.plans.get('silver')!,
      via: 'key',
    })
  })

  test('a customer on a plan this server does not offer: a 403 naming the plans', async () => {
    await keys.createCustomer({ name: 'Legacy', plan: 'bronze' }, 'cli:test')
    const { key } = await keys.create({ name: 'legacy-1', plan: 'gold', customer: 'Legacy' }, 'cli:test')
    expect(await refusal(key)).toEqual({
      kind: 'forbidden',
      detail: expect.stringMatching(/customer names plan "bronze".*plans: free, gold, silver, test/),
    })
  })

  test('a rotated secret works through its grace, then is refused as rotated; the new one works at once', async () => {
    const { key: old } = await keys.create({ name: 'rotating', plan: null }, 'cli:test')
    await principal(old)
    const { key: fresh, previousUntil } = await keys.rotate('rotating', { graceSeconds: 60 }, 'cli:test')
    expect((await principal(fresh)).caller).toBe((await principal(old)).caller)
    clock.ms = Date.parse(previousUntil) - 1
    expect((await principal(old)).plan.name).toBe('free')
    clock.ms += 1
    expect(await refusal(old)).toEqual({
      kind: 'unauthorized',
      detail: `The API key has been rotated; its grace period ended at ${previousUntil}.`,
    })
    expect((await principal(fresh)).plan.name).toBe('free')

    // No grace: refused at once.
    const { key: newest } = await keys.rotate('rotating', { graceSeconds: 0 }, 'cli:test')
    expect((await refusal(fresh)).detail).toContain('has been rotated')
    expect((await principal(newest)).via).toBe('key')
  })
})

test('through the app: two keys of one customer draw on one pool of credits, a third key on its own', async () => {
  const stateDir = tempDir()
  const keys = openKeyStore(stateDir)
  await keys.createCustomer({ name: 'Pool', plan: 'tiny' }, 'cli:test')
  const a = keys.create({ name: 'pool-a', plan: null, customer: 'Pool' }, 'cli:test') as { key: string }
  const b = keys.create({ name: 'pool-b', plan: 'big', customer: 'Pool' }, 'cli:test') as { key: string }
  const c = keys.create({ name: 'alone', plan: 'tiny' }, 'cli:test') as { key: string }
  keys.close()
  const app = await testApp({
    domains: [sampleDomain()],
    env: { ALMANAC_STATE_DIR: stateDir, ALMANAC_PLANS: 'tiny:10/1d,big:1000/1d,test:1000/1d' },
  })
  try {
    const remaining = async (key: string) =>
      Number((await app.json('GET', '/api/v1/planets/earth', { key })).headers.get('x-quota-remaining'))
    const [first, ...rest] = [await remaining(a.key), await remaining(b.key), await remaining(a.key), await remaining(c.key)]
    // Each call of a customer's key takes one credit from the one pool; the lone key starts where the pool did.
    expect(rest).toEqual([first! - 1, first! - 2, first!])
  } finally {
    await app.close()
  }
})

test('the key store unreachable: a 503 naming it, with a Retry-After as the quota store gives', async () => {
  const own = await startRedis()
  const keys = redisKeyStore(own.url, { keyPrefix: 'down:', maxBackoffMs: 50 })
  try {
    const { key } = await keys.create({ name: 'unread', plan: null }, 'cli:test')
    await own.stop()
    const auth = createAuthenticator(config, { keys, clock: () => Date.parse('2026-06-01T00:00:00Z') })
    const refused = await Promise.resolve()
      .then(() => auth.authenticate(new Request('http://localhost/api/v1/planets/earth', { headers: { 'x-api-key': key } })))
      .catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(AlmanacError)
    const { kind, detail, options } = refused as AlmanacError
    expect({ kind, retryAfter: options.headers?.['Retry-After'] }).toEqual({ kind: 'unavailable', retryAfter: '2' })
    expect(detail).toMatch(/^The API key database cannot be read: Redis at redis:\/\/127\.0\.0\.1:\d+ is unreachable/)
  } finally {
    keys.close()
    await own.close()
  }
})
