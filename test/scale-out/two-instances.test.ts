/**
 * Two `almanac serve` processes on different ports sharing one real redis-server (quota counters and API
 * keys) and one S3-compatible server (npm s3rver, QR images), as several instances behind a load balancer:
 * a key made through A's configuration works on B, a revoke through B stops A (polled, within the bound
 * keys-redis.ts documents), a quota is shared exactly (50 concurrent requests split across A and B against
 * 20 credits admit exactly 20), an RDAP answer fetched by A serves B, and a QR link made on A is one
 * shared object that B reuses and that still downloads once A is gone. A second pair shares a local QR
 * directory and signing key instead: there a link made on A downloads through B itself.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { spawn, type Subprocess } from 'bun'
import { resolve } from 'node:path'
import S3rver from 's3rver'
import { startRdapServer, type RdapFixture } from '../domains/email/rdap-server.ts'
import { zbar } from '../domains/qr/decode.ts'
import { freePort } from '../support/ports.ts'
import { startRedis, type TestRedis } from '../support/redis.ts'
import { tempDirs } from '../support/temp.ts'

const ROOT = resolve(import.meta.dir, '../..')
const BUCKET = 'almanac-shared'

let redis: TestRedis
let s3: S3rver
let rdap: RdapFixture
const started: Subprocess[] = []
let env: Record<string, string>
let a: { child: Subprocess; url: string }
let b: { child: Subprocess; url: string }

/** One instance's settings: the shared Redis and S3, its own state dir (nothing shared through the disk). */
const instanceEnv = (): Record<string, string> => ({ ...env, ALMANAC_STATE_DIR: tempDir() })

async function serve(own: Record<string, string>): Promise<{ child: Subprocess; url: string }> {
  const port = freePort()
  const child = spawn({
    cmd: ['bun', 'src/main.ts', 'serve'],
    cwd: ROOT,
    env: { ...process.env, ...own, PORT: String(port) },
    stdout: 'ignore',
    stderr: 'ignore',
  })
  started.push(child)
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`almanac serve exited with ${child.exitCode}`)
    if ((await fetch(url + '/readyz').catch(() => null))?.status === 200) return { child, url }
    await Bun.sleep(50)
  }
  throw new Error('almanac serve did not become ready')
}

async function cli(own: Record<string, string>, ...args: string[]) {
  const proc = spawn(['bun', 'src/main.ts', 'keys', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...own },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  if (code !== 0) throw new Error(`almanac keys ${args.join(' ')} exited with ${code}: ${stderr}`)
  return stdout.trim()
}

const get = (base: string, key: string, path = '/api/v1/countries/FR') =>
  fetch(base + path, { headers: { 'x-api-key': key, 'x-response-form': 'bare' } })

beforeAll(async () => {
  redis = await startRedis()
  s3 = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory: tempDir(),
    configureBuckets: [{ name: BUCKET, configs: [] }],
  })
  const { port } = (await s3.run()) as unknown as { port: number }
  rdap = startRdapServer({ 'shared-age.test': { days: 20 } }, Date.now())
  env = {
    ALMANAC_HOST: '127.0.0.1',
    ALMANAC_ACCESS_LOG: 'false',
    ALMANAC_SHUTDOWN_DELAY: '0',
    // The key store is left unset: it follows the quota store's Redis.
    ALMANAC_QUOTA_STORE: redis.url,
    ALMANAC_PLANS: 'tiny:20/1d,big:100000/1d',
    ALMANAC_DEFAULT_PLAN: 'big',
    ALMANAC_QR_STORE: `s3://${BUCKET}/codes/`,
    S3_ENDPOINT: `http://127.0.0.1:${port}`,
    S3_REGION: 'us-east-1',
    S3_ACCESS_KEY_ID: 'S3RVER',
    S3_SECRET_ACCESS_KEY: 'S3RVER',
    // RDAP from a local server that counts requests; DNS to a loopback port nobody answers (MX unknown).
    ALMANAC_EMAIL_RDAP_URL: rdap.base,
    ALMANAC_EMAIL_DNS_SERVERS: `127.0.0.1:${freePort()}`,
    ALMANAC_EMAIL_DNS_TIMEOUT_MS: '100',
  }
  ;[a, b] = await Promise.all([serve(instanceEnv()), serve(instanceEnv())])
}, 60_000)

afterAll(async () => {
  for (const child of started) if (child.exitCode === null) child.kill('SIGTERM')
  await Promise.all(started.map((c) => c.exited))
  await s3?.close()
  await rdap?.stop()
  await redis?.close()
})
// After the afterAll above: hooks run in the order they are registered, so the processes stop before their directories go.
const tempDir = tempDirs('almanac-scale-out-')

describe('two instances on one Redis and one S3', () => {
  test('a key made through A works on B; a revoke through B stops A', async () => {
    const key = await cli(instanceEnv(), 'create', '--name', 'shared')
    expect((await get(a.url, key)).status).toBe(200)
    expect((await get(b.url, key)).status).toBe(200)
    // A has just read the key, so the revoke below must get past A's copy of it.
    expect((await get(a.url, key)).status).toBe(200)
    // B's side names the store by flag, as an operator on another host would.
    const { ALMANAC_QUOTA_STORE: _, ...withoutQuotaStore } = instanceEnv()
    await cli(withoutQuotaStore, 'revoke', 'shared', '--key-store', redis.url)
    // Both read the key within the last moments: each may answer from its copy until the bound has passed.
    for (const base of [a.url, b.url]) {
      let status = 200
      for (let i = 0; i < 300 && status === 200; i++) {
        status = (await get(base, key)).status
        if (status === 200) await Bun.sleep(10)
      }
      expect(status).toBe(401)
    }
  })

  test('a key listed through either configuration is the same key', async () => {
    const fromA = JSON.parse(await cli(instanceEnv(), 'list', '--json'))
    const fromB = JSON.parse(await cli({ ...instanceEnv(), ALMANAC_KEY_STORE: redis.url }, 'list', '--json'))
    expect(fromB).toEqual(fromA)
    expect(fromA.map((k: { name: string }) => k.name)).toContain('shared')
  })

  test('the quota is shared exactly: 50 concurrent requests over A and B against 20 credits admit 20', async () => {
    const key = await cli(instanceEnv(), 'create', '--name', 'tiny', '--plan', 'tiny')
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => get(i % 2 ? a.url : b.url, key)))
    const statuses = answers.map((r) => r.status)
    expect(statuses.filter((s) => s === 200)).toHaveLength(20)
    expect(statuses.filter((s) => s === 429)).toHaveLength(30)
    for (const base of [a.url, b.url]) {
      const after = await get(base, key)
      expect(after.status).toBe(429)
      expect(after.headers.get('x-quota-remaining')).toBe('0')
    }
  })

  test('a scoped key is refused outside its domains on both instances', async () => {
    const key = await cli(instanceEnv(), 'create', '--name', 'geo', '--scopes', 'countries')
    for (const base of [a.url, b.url]) {
      expect((await get(base, key)).status).toBe(200)
      const refused = await get(base, key, '/api/v1/timezones/Europe%2FParis')
      expect(refused.status).toBe(403)
      expect(((await refused.json()) as { scopes: string[] }).scopes).toEqual(['countries'])
    }
  })

  test('an RDAP answer fetched by A is reused by B from the shared cache', async () => {
    const key = await cli(instanceEnv(), 'create', '--name', 'email')
    const risk = async (base: string, email: string) => {
      const res = await fetch(base + '/api/v1/email/risk', {
        method: 'POST',
        headers: { 'x-api-key': key, 'x-response-form': 'bare', 'content-type': 'application/json' },
        body: JSON.stringify({ email }),
      })
      expect(res.status).toBe(200)
      return (await res.json()) as { domain_age_days: number }
    }
    expect((await risk(a.url, 'a@shared-age.test')).domain_age_days).toBe(20)
    expect((await risk(b.url, 'b@shared-age.test')).domain_age_days).toBe(20)
    expect(rdap.requests.get('shared-age.test')).toBe(1)
  })

  test('a QR image made on A is one object in the shared bucket: B reuses it, and its link downloads once A is gone', async () => {
    const key = await cli(instanceEnv(), 'create', '--name', 'qr')
    const make = async (base: string) => {
      const res = await fetch(base + '/api/v1/qr/text', {
        method: 'POST',
        headers: { 'x-api-key': key, 'x-response-form': 'bare', 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'made on A', ttl: 600 }),
      })
      expect(res.status).toBe(200)
      return ((await res.json()) as { url: string }).url
    }
    const fromA = await make(a.url)
    const fromB = await make(b.url)
    expect(new URL(fromA).origin).toBe(env.S3_ENDPOINT!)
    expect(new URL(fromB).pathname).toBe(new URL(fromA).pathname)
    a.child.kill('SIGTERM')
    await a.child.exited
    const image = await fetch(fromA)
    expect(image.status).toBe(200)
    expect(image.headers.get('content-type')).toBe('image/png')
    expect(zbar(new Uint8Array(await image.arrayBuffer()))).toBe('made on A')
    // B goes on serving the same key without A.
    expect((await get(b.url, key)).status).toBe(200)
  })
})

describe('two instances on a shared local QR directory and signing key', () => {
  test('a QR link made on A downloads through B', async () => {
    const shared = tempDir()
    const own = (): Record<string, string> => ({
      ALMANAC_HOST: '127.0.0.1',
      ALMANAC_ACCESS_LOG: 'false',
      ALMANAC_SHUTDOWN_DELAY: '0',
      ALMANAC_API_KEYS: 'scale-out-key-0123',
      ALMANAC_STATE_DIR: tempDir(),
      ALMANAC_QR_STORE: `local:${shared}`,
      ALMANAC_QR_SIGNING_KEY: 'a-shared-signing-key-of-32-bytes-or-more',
    })
    const [c, d] = await Promise.all([serve(own()), serve(own())])
    const made = await fetch(c.url + '/api/v1/qr/text', {
      method: 'POST',
      headers: { 'x-api-key': 'scale-out-key-0123', 'x-response-form': 'bare', 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'made on A, fetched on B', ttl: 600 }),
    })
    expect(made.status).toBe(200)
    const link = new URL(((await made.json()) as { url: string }).url)
    expect(link.origin).toBe(c.url)
    const image = await fetch(d.url + link.pathname + link.search)
    expect(image.status).toBe(200)
    expect(zbar(new Uint8Array(await image.arrayBuffer()))).toBe('made on A, fetched on B')
    // Without the signature B refuses it: the shared key is what makes A's link good on B.
    expect((await fetch(d.url + link.pathname)).status).toBe(403)
  })
})
