/**
 * Keys on a plan the server does not offer are answered 403 on every call; the server says so instead of
 * starting silently. The authenticator over a real key store (SQLite in a temp dir, Redis on a real
 * redis-server), on a clock the test moves: the store is listed at most once a PLAN_RECHECK_MS, and a key
 * created or re-planned since is seen by the first call after that. Then /readyz through the app, each
 * warning's key truly refused; last `almanac serve` itself: one warn line at start, the same words in /readyz.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { openDataDir } from '../../src/data/open.ts'
import { openDomains } from '../../src/domains/mount.ts'
import { createAuthenticator, PLAN_RECHECK_MS } from '../../src/http/admission/auth.ts'
import { createApp } from '../../src/server.ts'
import { createQuotaStore } from '../../src/stores/index.ts'
import { redisKeyStore } from '../../src/stores/keys-redis.ts'
import { openKeyStore, type KeyStore } from '../../src/stores/keys.ts'
import { SMOKE_KEY } from '../../build/smoke.ts'
import { testConfig } from '../support/app.ts'
import { startRedis, type TestRedis } from '../support/redis.ts'
import { sampleDomain } from '../support/sample-domain.ts'
import { startFromSource } from '../support/source-server.ts'
import { tempDirs } from '../support/temp.ts'

let redis: TestRedis
const tempDir = tempDirs('almanac-unknown-plans-')
beforeAll(async () => {
  redis = await startRedis()
})
afterAll(() => redis.close())

const config = testConfig({ ALMANAC_PLANS: 'free:100/1d,test:1000/1d', ALMANAC_DEFAULT_PLAN: 'free' })
const ACTOR = 'cli:test'

/** A store that counts how often it is listed (the bound on /readyz's work), over the real one. */
function counted(store: KeyStore) {
  const calls = { list: 0, listCustomers: 0 }
  const wrapped: KeyStore = {
    ...store,
    list: () => (calls.list++, store.list()),
    listCustomers: () => (calls.listCustomers++, store.listCustomers()),
  }
  return { store: wrapped, calls }
}

describe.each([
  ['sqlite', (now: () => number) => openKeyStore(tempDir(), { now })],
  ['redis', (now: () => number) => redisKeyStore(redis.url, { keyPrefix: `plans${Math.random()}:`, now })],
])('%s key store', (_, open) => {
  const clock = { ms: Date.parse('2026-06-01T00:00:00Z') }
  let keys: KeyStore
  let calls: { list: number; listCustomers: number }
  let auth: ReturnType<typeof createAuthenticator>
  beforeAll(() => {
    ;({ store: keys, calls } = counted(open(() => clock.ms)))
    auth = createAuthenticator(config, { keys, clock: () => clock.ms })
  })
  afterAll(() => keys.close())

  test('each plan not offered is one warning naming its active own-plan keys and its customers, with the fix', async () => {
    expect(await auth.unknownPlans!()).toEqual([])
    const gold = await keys.create({ name: 'gold-key', plan: 'gold' }, ACTOR)
    const acme = await keys.createCustomer({ name: 'Acme', plan: 'silver' }, ACTOR)
    // Not named: a customer's key (its own plan waits unused), a revoked key, an expired key, keys on offered plans.
    await keys.create({ name: 'acme-1', plan: 'gold', customer: acme.id }, ACTOR)
    const revoked = await keys.create({ name: 'revoked', plan: 'gold' }, ACTOR)
    await keys.revoke(revoked.record.id, ACTOR)
    await keys.create({ name: 'expired', plan: 'gold', expires: new Date(clock.ms - 1000).toISOString() }, ACTOR)
    await keys.create({ name: 'fine', plan: 'test' }, ACTOR)
    await keys.createCustomer({ name: 'Fine Co', plan: null }, ACTOR)
    const many: string[] = []
    for (let i = 0; i < 22; i++) many.push((await keys.create({ name: `bronze-${i}`, plan: 'bronze' }, ACTOR)).record.id)

    // Listed a moment ago: the same answer, no new listing, however often /readyz asks.
    const listed = { ...calls }
    for (let i = 0; i < 5; i++) expect(await auth.unknownPlans!()).toEqual([])
    expect(calls).toEqual(listed)

    clock.ms += PLAN_RECHECK_MS
    const warnings = await auth.unknownPlans!()
    expect(calls).toEqual({ list: listed.list + 1, listCustomers: listed.listCustomers + 1 })
    expect(warnings.map((w) => w.component)).toEqual(['keys', 'keys', 'keys'])
    const text = (plan: string) => warnings.find((w) => w.problem.startsWith(`Plan "${plan}"`))!.problem
    expect(text('gold')).toBe(
      'Plan "gold" is not among ALMANAC_PLANS (free, test): every call of key ' +
        `${gold.record.id} is answered 403. Add plan gold to ALMANAC_PLANS, or move them to an offered plan ` +
        '(`almanac keys update <id> --plan <p>`).',
    )
    expect(text('silver')).toBe(
      `Plan "silver" is not among ALMANAC_PLANS (free, test): every call of the keys of customer ${acme.id} is answered 403. ` +
        'Add plan silver to ALMANAC_PLANS, or move them to an offered plan (`almanac customers update <id> --plan <p>`).',
    )
    // Twenty named, the rest counted: /readyz stays small whatever the store holds.
    const bronze = text('bronze')
    const named = /every call of keys (.*) and 2 more is answered 403/.exec(bronze)![1]!.split(', ')
    expect(named).toHaveLength(20)
    expect(named.every((id) => many.includes(id))).toBe(true)

    // Re-planned: seen by the first call after the next listing.
    await keys.update(gold.record.id, { plan: 'test' }, ACTOR)
    await keys.updateCustomer(acme.id, { plan: null }, ACTOR)
    for (const id of many) await keys.revoke(id, ACTOR)
    expect(await auth.unknownPlans!()).toHaveLength(3)
    clock.ms += PLAN_RECHECK_MS
    expect(await auth.unknownPlans!()).toEqual([])
  })
})

test('/readyz lists the warnings (still ready), and each named key is indeed refused 403; re-planned, it answers', async () => {
  const clock = { ms: Date.parse('2026-06-01T00:00:00Z') }
  const keys = openKeyStore(tempDir())
  const authenticator = createAuthenticator(config, { keys, clock: () => clock.ms })
  const data = openDataDir(config.dataDir)
  const domains = [sampleDomain()]
  const quota = createQuotaStore(config)
  const app = createApp(
    config,
    { data, domains, authenticator, quota, keys, clock: () => clock.ms },
    await openDomains(config, data, domains),
  )
  const get = async (path: string, key?: string) => {
    const res = await app.handle(new Request(`http://localhost${path}`, { headers: key ? { 'x-api-key': key } : {} }))
    return { status: res.status, body: (await res.json()) as any }
  }
  try {
    const gold = keys.create({ name: 'gold-key', plan: 'gold' }, ACTOR) as { key: string; record: { id: string } }
    clock.ms += PLAN_RECHECK_MS
    const ready = await get('/readyz')
    expect(ready.status).toBe(200)
    expect(ready.body.status).toBe('ready')
    expect(ready.body.warnings).toEqual([{ component: 'keys', problem: expect.stringContaining(gold.record.id) }])
    const refused = await get('/api/v1/planets/earth', gold.key)
    expect(refused.status).toBe(403)
    expect(refused.body.error.detail).toContain('names plan "gold", which this server does not offer')

    keys.update(gold.record.id, { plan: 'test' }, ACTOR)
    expect((await get('/api/v1/planets/earth', gold.key)).status).toBe(200)
    clock.ms += PLAN_RECHECK_MS
    expect((await get('/readyz')).body.warnings).toBeUndefined()
  } finally {
    await quota.close()
    keys.close()
  }
})

test('almanac serve: one warn line at start per plan not offered, the same words in /readyz', async () => {
  const stateDir = tempDir()
  const keys = openKeyStore(stateDir)
  const gold = keys.create({ name: 'gold-key', plan: 'gold' }, ACTOR) as { key: string; record: { id: string } }
  keys.close()
  const server = await startFromSource(tempDir, { ALMANAC_STATE_DIR: stateDir, ALMANAC_API_KEYS: `${SMOKE_KEY}:smoke` })
  try {
    const lines = server.lines.filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>)
    const warned = lines.filter((l) => String(l.msg).startsWith('Plan "gold"'))
    expect(warned).toHaveLength(1)
    expect(warned[0]).toMatchObject({ level: 'warn' })
    expect(warned[0]!.msg).toContain(gold.record.id)
    expect(warned[0]!.msg).toContain('almanac keys update <id> --plan <p>')
    // Said before the server listens.
    expect(lines.indexOf(warned[0]!)).toBeLessThan(lines.findIndex((l) => l.msg === 'listening'))
    const ready = await fetch(`${server.url}/readyz`)
    expect(ready.status).toBe(200)
    const body = (await ready.json()) as any
    expect(body.warnings.filter((w: { component: string }) => w.component === 'keys')).toEqual([
      { component: 'keys', problem: warned[0]!.msg },
    ])
    expect((await fetch(`${server.url}/api/v1/countries/FR`, { headers: { 'x-api-key': gold.key } })).status).toBe(403)
  } finally {
    await server.stop()
  }
}, 130_000)
