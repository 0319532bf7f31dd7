/**
 * The stores over TLS (issue 46): a real `redis-server` and a real Redis Cluster listening with TLS, their
 * certificates from a throwaway CA made here with `openssl`. The quota store, the key store and the usage
 * ledger work over `rediss://` and `rediss+cluster://` given that CA as operators give it, by `?ca=<PEM
 * file>` on the store's URL or by NODE_EXTRA_CA_CERTS for the whole process; a server whose certificate
 * the client's CAs did not sign is refused (the store reports it unreachable, and the TLS error says why).
 *
 * Each node also keeps a plain port for the test's own probes; the stores are given the TLS ports only, and
 * a cluster tells a TLS client its nodes' TLS ports, so every connection a store makes is TLS.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Plan } from '../../src/config.ts'
import { keyHash } from '../../src/stores/keys.ts'
import { redisKeyStore } from '../../src/stores/keys-redis.ts'
import { redisQuotaStore } from '../../src/stores/quota-redis.ts'
import { emptyCounts, periodOf } from '../../src/stores/usage.ts'
import { redisUsageStore } from '../../src/stores/usage-redis.ts'
import { startRedis, testCertificates, type TestCertificates, type TestRedis } from '../support/redis.ts'
import { clusterUrl, startCluster, type TestCluster } from '../support/redis-topologies.ts'
import { tempDirs } from '../support/temp.ts'

const tempDir = tempDirs('almanac-redis-tls-')
let certs: TestCertificates
let node: TestRedis
let cluster: TestCluster
beforeAll(async () => {
  certs = testCertificates(tempDir())
  // Three masters, no replicas: this file tests TLS, not failover.
  ;[node, cluster] = await Promise.all([startRedis({ tls: certs }), startCluster(3, 0, { tls: certs })])
}, 60_000)
afterAll(async () => {
  await node?.close()
  await cluster?.close()
}, 30_000)

const urls = { 'single node': () => node.url, cluster: () => clusterUrl(cluster) }
const withCa = (url: string, ca: string) => `${url}?ca=${encodeURIComponent(ca)}`

describe.each(['single node', 'cluster'] as const)('the stores over TLS on a Redis %s', (kind) => {
  test('the URLs are TLS ones', () => {
    expect(urls[kind]()).toMatch(/^rediss(\+cluster)?:\/\//)
  })

  test('with ?ca= naming the CA: quota, keys and the usage ledger work', async () => {
    const url = withCa(urls[kind](), certs.ca)
    const plan: Plan = { name: 'tls', credits: 5, windowSeconds: 60 }
    const quota = redisQuotaStore(url, { keyPrefix: `tls-${kind}:` })
    const keys = redisKeyStore(url, { keyPrefix: `tls-${kind}:keys:` })
    const usage = redisUsageStore(url, { keyPrefix: `tls-${kind}:usage:` })
    try {
      expect(await quota.check?.()).toBeNull()
      expect((await quota.consume('key:k', plan, 2)).remaining).toBe(3)
      const { key, record } = await keys.create({ name: 'over-tls', plan: null })
      expect((await keys.findByHash(keyHash(key)))?.record.id).toBe(record.id)
      const period = periodOf('hour', Math.floor(Date.now() / 1000))
      const counts = { ...emptyCounts(), requests: 3 }
      await usage.write({
        id: 'b1',
        rows: [{ period, caller: 'key:k', customer: '', domain: 'ip', route: 'GET /x', outcome: '2xx', ...counts }],
      })
      const rows = await usage.read({ grain: 'day', since: periodOf('day', period) })
      expect(rows.map((r) => r.requests)).toEqual([3])
    } finally {
      quota.close()
      keys.close()
      await usage.close()
    }
  })

  test('a server certificate from another CA is refused, and so is one the system CAs do not know', async () => {
    for (const url of [withCa(urls[kind](), certs.otherCa), urls[kind]()]) {
      const quota = redisQuotaStore(url, { keyPrefix: `tls-refused-${kind}:`, timeoutMs: 1000 })
      const keys = redisKeyStore(url, { keyPrefix: `tls-refused-${kind}:keys:`, timeoutMs: 1000 })
      try {
        const why = await quota.check?.()
        console.log(`${kind}, ${url.includes('?ca=') ? 'another CA' : 'system CAs only'}: refused with ${why}`)
        expect(why).toContain('unreachable')
        await expect(keys.findByHash(keyHash('alm_nothing'))).rejects.toThrow(/unreachable/)
      } finally {
        quota.close()
        keys.close()
      }
    }
  }, 15_000)
})

test('NODE_EXTRA_CA_CERTS, read when the process starts, is trusted by the single-node and the cluster clients', () => {
  // A process of its own: the variable is read once, at start-up. (`bun -e` passes its arguments from argv[1].)
  const script = `
    import { redisQuotaStore } from './src/stores/quota-redis.ts'
    for (const url of process.argv.slice(1)) {
      const store = redisQuotaStore(url, { timeoutMs: 2000 })
      console.log(JSON.stringify(await store.check()))
      store.close()
    }
    process.exit(0)
  `
  const run = (env: Record<string, string>) =>
    Bun.spawnSync(['bun', '-e', script, node.url, clusterUrl(cluster)], {
      env: { ...process.env, ...env },
      cwd: `${import.meta.dir}/../..`,
    })
      .stdout.toString()
      .trim()
      .split('\n')
  expect(run({ NODE_EXTRA_CA_CERTS: certs.ca })).toEqual(['null', 'null'])
  // And without it, both refused: the variable is what made them trust the CA.
  expect(run({ NODE_EXTRA_CA_CERTS: '' }).every((line) => line.includes('unreachable'))).toBe(true)
}, 30_000)
