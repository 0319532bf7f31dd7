/**
 * `almanac state migrate-redis` between real Redis servers: a single node filled through the real stores (a
 * customer and its key, credits spent plainly and through a lease, ledger rows over two UTC days, a QR share,
 * an RDAP answer) is copied into a real cluster, a Sentinel group and, from the cluster, back into a single
 * node; the stores opened on each target find the key with its plan and customer, the same credits spent, the
 * same share held, and `almanac usage` reports the same rows. Every key arrives with the TTL it had (none where
 * it had none). A dry run writes nothing; a target already holding a store's keys, or the source itself, is
 * refused; --replace runs again over a finished copy to the same result.
 */
import { afterAll, beforeEach, expect, test } from 'bun:test'
import { MIGRATED_STORES } from '../../src/cli/migrate-redis.ts'
import type { Plan } from '../../src/config.ts'
import { redisRdapStore } from '../../src/domains/email/rdap-store.ts'
import { redisLedger } from '../../src/domains/qr/shares-redis.ts'
import { keyHash } from '../../src/stores/keys.ts'
import { redisKeyStore } from '../../src/stores/keys-redis.ts'
import { leaseHashOf, leasingQuotaStore } from '../../src/stores/quota-leases.ts'
import { QUOTA_KEY_PREFIX, quotaKey, redisQuotaStore } from '../../src/stores/quota-redis.ts'
import { quotaWindow } from '../../src/stores/quota.ts'
import { redisConnection } from '../../src/stores/redis.ts'
import { redisUsageStore } from '../../src/stores/usage-redis.ts'
import { LATENCY_BUCKETS, type UsageRow } from '../../src/stores/usage.ts'
import { startRedis, type TestRedis } from '../support/redis.ts'
import { ask, redisServers } from '../support/redis-topologies.ts'
import { cli } from '../support/served.ts'

const servers = redisServers()
const extra: TestRedis[] = []
afterAll(async () => {
  for (const r of extra) await r.close()
})

/** A fixed clock: windows, share expiries and ledger periods do not depend on when the test runs. */
const NOW = Date.UTC(2026, 2, 10, 12, 30)
const SECONDS = NOW / 1000
const pro: Plan = { name: 'pro', credits: 1000, windowSeconds: 86_400 }
const leased: Plan = { name: 'leased', credits: 500, windowSeconds: 3600 }

/** Every master of every server the tests use, emptied: the CLI works on the stores' default names. */
beforeEach(async () => {
  const ports = [servers.single.port, ...(await servers.cluster.masters()), (await servers.sentinel.master())!]
  for (const port of ports) expect(await ask(port, 'FLUSHALL')).toBe('OK')
})

const row = (period: number, caller: string, customer: string, over: Partial<UsageRow> = {}): UsageRow => ({
  period,
  caller,
  customer,
  domain: 'ip',
  route: 'POST /api/v1/ip/bulk',
  outcome: '2xx',
  requests: 3,
  credits: 3,
  refunded: 0,
  bytes: 120,
  latency: Array.from({ length: LATENCY_BUCKETS }, (_, i) => (i === 2 ? 3 : 0)),
  ...over,
})

interface Filled {
  secret: string
  customerId: string
  subject: string
  audit: number
}

/** Fills `url` through the stores, as servers and the CLI would. */
async function fill(url: string): Promise<Filled> {
  const keys = redisKeyStore(url)
  const customer = await keys.createCustomer({ name: 'acme', plan: 'pro' }, 'test')
  const { key: secret, record } = await keys.create({ name: 'acme-prod', plan: 'pro', customer: 'acme' }, 'test')
  await keys.create({ name: 'spare', plan: null }, 'test')
  const audit = (await keys.audit()).length
  keys.close()
  const subject = `customer:${customer.id}`
  const quota = redisQuotaStore(url)
  for (const cost of [5, 7, 30]) expect((await quota.consume(subject, pro, cost, NOW)).allowed).toBe(true)
  quota.close()
  const connection = redisConnection(url)
  const leasing = leasingQuotaStore(redisQuotaStore(url, { connection }), connection, {
    blocks: new Map([['leased', 50]]),
    tickMs: 0,
    subscribe: false,
    instance: 'a',
    clock: () => NOW,
  })
  // A lease grows with what is spent: spend until this instance holds credits beyond what it has spent.
  for (let i = 0; i < 100 && leasing.held() === 0; i++) expect((await leasing.consume(subject, leased, 1, NOW)).allowed).toBe(true)
  await leasing.settled()
  expect(leasing.held()).toBeGreaterThan(0)
  // Not closed, which would give the lease back: its hash stays, as a stopped server's may.
  connection.close()
  const usage = redisUsageStore(url, { now: () => NOW })
  const caller = `key:${record.id}`
  await usage.write({
    id: 'b1',
    rows: [
      row(SECONDS - 86_400, caller, customer.id),
      row(SECONDS, caller, customer.id, { outcome: '429:quota', credits: 0 }),
      row(SECONDS + 3600, caller, customer.id, { domain: 'hash', route: 'POST /api/v1/hash/:algo' }),
    ],
  })
  usage.close()
  const shares = redisLedger(url)
  expect((await shares.charge(caller, 'img-1', 2048, SECONDS + 3600, SECONDS, 1_000_000)).ok).toBe(true)
  shares.close()
  const rdap = redisRdapStore(url, () => {})
  await rdap.set('example.com', { status: 'found', registered: '1995-08-14T04:00:00Z' }, NOW + 86_400_000, NOW)
  rdap.close()
  return { secret, customerId: customer.id, subject, audit }
}

/** What the stores on `url` tell of what `fill` wrote. */
async function observe(url: string, filled: Filled) {
  const keys = redisKeyStore(url)
  const match = await keys.findByHash(keyHash(filled.secret))
  const listed = (await keys.list()).map((k) => k.name).sort()
  const audit = (await keys.audit()).length
  keys.close()
  const quota = redisQuotaStore(url)
  const used = pro.credits - (await quota.peek(filled.subject, pro, NOW)).remaining
  const leasedUsed = leased.credits - (await quota.peek(filled.subject, leased, NOW)).remaining
  quota.close()
  const shares = redisLedger(url)
  const held = await shares.held(`key:${match?.record.id}`, SECONDS)
  shares.close()
  const rdap = redisRdapStore(url, () => {})
  const answer = await rdap.get('example.com', NOW)
  rdap.close()
  return { plan: match?.record.plan, customer: match?.customer?.name, listed, audit, used, leasedUsed, held, answer }
}

/** `almanac usage` on the stores at `url`, as JSON. */
async function usageReport(url: string) {
  const env = { ALMANAC_QUOTA_STORE: url, ALMANAC_KEY_STORE: url }
  const run = await cli(['usage', '--since', '2026-03-01', '--until', '2026-04-01', '--by', 'hour', '--format', 'json'], env)
  expect({ code: run.code, err: run.err }).toEqual({ code: 0, err: '' })
  return JSON.parse(run.out) as unknown[]
}

const migrate = (from: string, to: string, ...more: string[]) => cli(['state', 'migrate-redis', '--from', from, '--to', to, ...more], {})

/** Every key of the stores on `url`, with its TTL (ms; -1: none), by name. */
async function storeKeys(url: string, ports: number[]): Promise<Map<string, number>> {
  const redis = redisConnection(url)
  const found = new Map<string, number>()
  for (const port of ports)
    for (const key of ((await ask(port, 'KEYS', ['*'])) ?? []) as string[]) found.set(key, Number(await redis.command('PTTL', [key])))
  redis.close()
  return found
}

/** Checks each source key's copy on the target: named as the stores name it there, with the TTL it had (or none). */
function expectSameTtls(source: Map<string, number>, target: Map<string, number>, toCluster: boolean) {
  let compared = 0
  for (const [key, ttl] of source) {
    const store = MIGRATED_STORES.find((s) => key.startsWith(s.prefix) || key.startsWith(`{${s.prefix}`))!
    const type = key.endsWith(':lease') ? 'hash' : 'string'
    const name = store.nameOn(key, type, toCluster)
    if (typeof name !== 'string') continue
    const copied = target.get(name)
    expect({ key, name, present: copied !== undefined }).toEqual({ key, name, present: true })
    if (ttl === -1) expect({ key, ttl: copied }).toEqual({ key, ttl: -1 })
    // Read after the copy: the target's TTL is what the source had left then, give or take the copy's own round trips.
    else expect({ key, near: copied! > 0 && Math.abs(copied! - ttl) < 2000 }).toEqual({ key, near: true })
    compared++
  }
  expect(compared).toBeGreaterThan(10)
}

test('single node → cluster: the stores on the cluster find the key, credits, ledger, share and RDAP answer, with their TTLs', async () => {
  const single = servers.url('single')
  const cluster = servers.url('cluster')
  const filled = await fill(single)
  const before = await observe(single, filled)
  expect(before).toMatchObject({ plan: 'pro', customer: 'acme', used: 42, held: 2048, answer: { status: 'found' } })
  expect(before.leasedUsed).toBeGreaterThanOrEqual(4)

  const dry = await migrate(single, cluster, '--dry-run')
  expect({ code: dry.code, err: dry.err }).toEqual({ code: 0, err: '' })
  expect(dry.out).toMatch(/key store .*: would copy \d+ keys/)
  expect(dry.out).toContain('nothing written')
  expect(await storeKeys(cluster, await servers.cluster.masters())).toEqual(new Map())

  const run = await migrate(single, cluster)
  expect({ code: run.code, err: run.err }).toEqual({ code: 0, err: '' })
  expect(run.out).toMatch(/usage ledger: copied \d+ keys\n {2}not copied: 1 usage batch claims/)
  const masters = await servers.cluster.masters()
  const [source, target] = await Promise.all([storeKeys(single, [servers.single.port]), storeKeys(cluster, masters)])
  expect([...target.keys()].some((k) => k.startsWith('{almanac:keys:}'))).toBe(true)
  // The lease hash, under its counter's tag: the instance that held it still holds what it was granted.
  const counter = quotaKey(QUOTA_KEY_PREFIX, filled.subject, leased, quotaWindow(leased, NOW).start)
  const lease = redisConnection(cluster)
  expect(Number(await lease.command('HGET', [leaseHashOf(counter, true)!, 'a']))).toBeGreaterThan(0)
  lease.close()
  expectSameTtls(source, target, true)
  expect(await observe(cluster, filled)).toEqual(before)
  expect(await usageReport(cluster)).toEqual(await usageReport(single))
  expect((await usageReport(single)).length).toBeGreaterThan(2)

  // The source keeps everything; a second run is refused, and with --replace it lands on the same result.
  expect(new Set((await storeKeys(single, [servers.single.port])).keys())).toEqual(new Set(source.keys()))
  const again = await migrate(single, cluster)
  expect(again.code).toBe(1)
  expect(again.err).toContain('already holds keys of the key store')
  const replaced = await migrate(single, cluster, '--replace')
  expect({ code: replaced.code, err: replaced.err }).toEqual({ code: 0, err: '' })
  expect(new Set((await storeKeys(cluster, masters)).keys())).toEqual(new Set(target.keys()))
  expect(await observe(cluster, filled)).toEqual(before)

  // And back: from the cluster into a fresh single node, the untagged names again.
  const back = await startRedis()
  extra.push(back)
  const home = await migrate(cluster, back.url)
  expect({ code: home.code, err: home.err }).toEqual({ code: 0, err: '' })
  expect(new Set((await storeKeys(back.url, [back.port])).keys())).toEqual(
    new Set([...source.keys()].filter((k) => !k.startsWith('almanac:usage:batch:'))),
  )
  expect(await observe(back.url, filled)).toEqual(before)
  expect(await usageReport(back.url)).toEqual(await usageReport(single))
}, 60_000)

test('single node → Sentinel group: the same names, the same answers', async () => {
  const single = servers.url('single')
  const sentinel = servers.url('sentinel')
  const filled = await fill(single)
  const before = await observe(single, filled)
  const run = await migrate(single, sentinel)
  expect({ code: run.code, err: run.err }).toEqual({ code: 0, err: '' })
  const master = (await servers.sentinel.master())!
  const [source, target] = await Promise.all([storeKeys(single, [servers.single.port]), storeKeys(sentinel, [master])])
  expectSameTtls(source, target, false)
  expect(await observe(sentinel, filled)).toEqual(before)
  expect(await usageReport(sentinel)).toEqual(await usageReport(single))
}, 60_000)

test('refused: the source itself, under its own URL or another, and a target holding keys of a store the source has', async () => {
  const single = servers.url('single')
  await fill(single)
  const same = await migrate(single, single)
  expect(same.code).toBe(2)
  expect(same.err).toContain('--from and --to are the same URL')
  const alias = await migrate(single, `redis://localhost:${servers.single.port}`)
  expect(alias.code).toBe(1)
  expect(alias.err).toContain('are the same Redis')

  // A target that does not answer: named, nothing done.
  const gone = await startRedis()
  await gone.close()
  const unreachable = await migrate(single, gone.url)
  expect(unreachable.code).toBe(1)
  expect(unreachable.err).toContain(`cannot reach Redis at ${gone.url}`)

  // A target with the key store already: refused, naming it, and nothing copied.
  const target = await startRedis()
  extra.push(target)
  const keys = redisKeyStore(target.url)
  await keys.create({ name: 'other', plan: null }, 'test')
  keys.close()
  const before = await storeKeys(target.url, [target.port])
  const refused = await migrate(single, target.url, '--dry-run')
  expect(refused.code).toBe(1)
  expect(refused.err).toMatch(/already holds keys of the key store .*almanac:keys:/)
  expect(await storeKeys(target.url, [target.port])).toEqual(before)

  // Only a store the source lacks: nothing refused, nothing of it touched.
  const only = await startRedis()
  extra.push(only)
  const rdap = redisRdapStore(only.url, () => {})
  await rdap.set('only.example', { status: 'not_found', registered: null }, NOW + 60_000, NOW)
  rdap.close()
  const other = await startRedis()
  extra.push(other)
  const quota = redisQuotaStore(other.url)
  await quota.consume('key:x', pro, 1, NOW)
  quota.close()
  const split = await migrate(only.url, other.url)
  expect({ code: split.code, err: split.err }).toEqual({ code: 0, err: '' })
  expect(split.out).toContain('RDAP cache: copied 1 keys')
  expect(split.out).toContain('quota counters: copied 0 keys')
}, 60_000)
