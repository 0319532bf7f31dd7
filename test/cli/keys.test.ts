/**
 * `almanac keys` through the real CLI (`bun src/main.ts keys …` with a temp ALMANAC_STATE_DIR), then the
 * issued key over `app.handle`: accepted with its plan, refused once revoked — by the same running app.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { testApp } from '../support/app.ts'
import { startRedis } from '../support/redis.ts'
import { sampleDomain } from '../support/sample-domain.ts'

const stateDir = mkdtempSync(join(tmpdir(), 'almanac-keys-'))
const env = { ALMANAC_STATE_DIR: stateDir, ALMANAC_PLANS: 'free:100/1d,tiny:5/1m,test:1000/1d', ALMANAC_DEFAULT_PLAN: 'free' }
const MAIN = join(import.meta.dir, '../../src/main.ts')

afterAll(() => rmSync(stateDir, { recursive: true, force: true }))

async function cli(...args: string[]) {
  const proc = Bun.spawn(['bun', MAIN, 'keys', ...args], { env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { stdout, stderr, code }
}

describe('almanac keys', () => {
  let aliceKey = ''
  let aliceId = ''
  let bobKey = ''

  test('create prints a new key once, alone on stdout', async () => {
    const alice = await cli('create', '--name', 'alice', '--plan', 'tiny')
    expect(alice.code).toBe(0)
    aliceKey = alice.stdout.trim()
    // alm_ + 32 random bytes in fixed-width base62 (43 characters).
    expect(aliceKey).toMatch(/^alm_[0-9A-Za-z]{43}$/)
    expect(alice.stderr).toMatch(/created key_\w+ \(alice, plan tiny\)/)
    aliceId = /created (key_\w+)/.exec(alice.stderr)![1]!
    const bob = await cli('create', '--name', 'bob', '--json')
    expect(bob.code).toBe(0)
    const created = JSON.parse(bob.stdout)
    expect(created).toMatchObject({ name: 'bob', plan: null, revoked: null })
    bobKey = created.key
    expect(bobKey).not.toBe(aliceKey)
  })

  test('create refuses an unknown plan, a duplicate active name and a missing name', async () => {
    const unknown = await cli('create', '--name', 'carol', '--plan', 'gold')
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toMatch(/--plan "gold" is not among the configured plans \(free, tiny, test\)/)
    const duplicate = await cli('create', '--name', 'alice')
    expect(duplicate.code).toBe(1)
    expect(duplicate.stderr).toMatch(/already named "alice"/)
    const nameless = await cli('create')
    expect(nameless.code).toBe(2)
    expect(nameless.stdout).toBe('')
  })

  test('list shows id, name, plan, scopes, expiry, created, revoked and never a key', async () => {
    const table = await cli('list')
    expect(table.code).toBe(0)
    expect(table.stdout).toMatch(/^ID\s+NAME\s+PLAN\s+SCOPES\s+EXPIRES\s+CREATED\s+REVOKED/)
    expect(table.stdout).toContain(aliceId)
    const json = await cli('list', '--json')
    const keys = JSON.parse(json.stdout)
    expect(keys.map((k: any) => [k.name, k.plan, k.revoked])).toEqual([
      ['alice', 'tiny', null],
      ['bob', null, null],
    ])
    expect(Object.keys(keys[0]).sort()).toEqual(['created', 'expires', 'id', 'name', 'plan', 'revoked', 'scopes'])
    expect([keys[0].scopes, keys[0].expires]).toEqual([null, null])
    for (const out of [table.stdout, json.stdout]) {
      expect(out).not.toContain(aliceKey)
      expect(out).not.toContain(bobKey)
    }
  })

  test('the database holds the SHA-256 of each key, never the key', () => {
    const bytes = readFileSync(join(stateDir, 'keys.sqlite')).toString('latin1')
    expect(bytes).not.toContain(aliceKey)
    expect(bytes).not.toContain(aliceKey.slice(4, 24))
    const db = new Database(join(stateDir, 'keys.sqlite'), { readonly: true })
    const row = db.query('SELECT hash FROM api_keys WHERE name = ?').get('alice') as { hash: Uint8Array }
    db.close()
    expect(Buffer.from(row.hash).toString('hex')).toBe(new Bun.CryptoHasher('sha256').update(aliceKey).digest('hex'))
  })

  test('the key works with its plan, and a running app refuses it as soon as it is revoked', async () => {
    const app = await testApp({ domains: [sampleDomain()], env })
    try {
      const ok = await app.json('GET', '/api/v1/planets/earth', { key: aliceKey })
      expect(ok.status).toBe(200)
      expect(ok.headers.get('x-quota-limit')).toBe('5')
      expect(ok.headers.get('ratelimit-policy')).toBe('"tiny";q=5;w=60')
      // A key created without --plan follows the default plan.
      expect((await app.json('GET', '/api/v1/planets/earth', { key: bobKey })).headers.get('x-quota-limit')).toBe('100')
      // Configuration keys still work beside stored ones.
      expect((await app.json('GET', '/api/v1/planets/earth')).status).toBe(200)

      const revoke = await cli('revoke', 'alice')
      expect(revoke.code).toBe(0)
      expect(revoke.stderr).toContain(`revoked ${aliceId} (alice)`)
      const refused = await app.json('GET', '/api/v1/planets/earth', { key: aliceKey })
      expect(refused.status).toBe(401)
      expect(refused.body.error.detail).toBe('The API key has been revoked.')
      expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"')
      expect((await app.json('GET', '/api/v1/planets/earth', { key: bobKey })).status).toBe(200)

      // Revoking by id works too; a second revocation says so.
      expect((await cli('revoke', aliceId)).stderr).toMatch(/already revoked/)
      const byId = await cli('revoke', JSON.parse((await cli('list', '--json')).stdout)[1].id)
      expect(byId.code).toBe(0)
      expect((await app.json('GET', '/api/v1/planets/earth', { key: bobKey })).status).toBe(401)
    } finally {
      await app.close()
    }
    const listed = JSON.parse((await cli('list', '--json')).stdout)
    expect(listed.every((k: any) => typeof k.revoked === 'string')).toBe(true)
  })

  test('a revoked name can be issued again, as a new key', async () => {
    const again = await cli('create', '--name', 'alice', '--plan', 'tiny')
    expect(again.code).toBe(0)
    expect(again.stdout.trim()).not.toBe(aliceKey)
    expect((await cli('revoke', 'nobody')).code).toBe(1)
  })

  test('revoke finds its target among flags: after --state-dir DIR, and after --json', async () => {
    for (const name of ['carol', 'dave']) expect((await cli('create', '--name', name)).code).toBe(0)
    const carol = await cli('revoke', '--state-dir', stateDir, 'carol')
    expect({ code: carol.code, stderr: carol.stderr }).toEqual({ code: 0, stderr: expect.stringContaining('(carol)') })
    const dave = await cli('revoke', '--json', 'dave')
    expect(dave.code).toBe(0)
    expect(JSON.parse(dave.stdout)).toMatchObject({ name: 'dave', revoked: expect.any(String) })
  })
})

describe('almanac keys: scopes, expiry, and the Redis store', () => {
  test('--scopes and --expires are kept and shown; bad ones exit 2 before anything is written', async () => {
    const made = await cli('create', '--name', 'scoped', '--scopes', 'ip, countries,ip', '--expires', '2099-05-06', '--json')
    expect(made.code).toBe(0)
    expect(JSON.parse(made.stdout)).toMatchObject({ scopes: ['ip', 'countries'], expires: '2099-05-06T00:00:00.000Z' })
    const table = (await cli('list')).stdout
    expect(table).toMatch(/scoped\s+\(default\)\s+ip,countries\s+2099-05-06T00:00:00.000Z/)
    for (const [args, words] of [
      [['--scopes', 'ip,countrys'], '--scopes: "countrys" is not a domain (did you mean countries?)'],
      [['--scopes', ','], '--scopes: no domain named'],
      [['--expires', '2020-01-01'], '--expires "2020-01-01": that moment has passed'],
      [['--expires', 'next week'], '--expires "next week": expected a date such as 2027-01-01'],
      [['--expires', '2099-01-01T10:00:00'], 'expected a date such as 2027-01-01 or a time such as 2027-01-01T12:00:00Z'],
    ] as const) {
      const bad = await cli('create', '--name', 'bad', ...args)
      expect({ code: bad.code, stderr: bad.stderr }).toEqual({ code: 2, stderr: expect.stringContaining(words) })
    }
    expect(JSON.parse((await cli('list', '--json')).stdout).some((k: { name: string }) => k.name === 'bad')).toBe(false)
  })

  test('--key-store redis://… creates, lists and revokes there, not in the state dir', async () => {
    const redis = await startRedis()
    try {
      const made = await cli('create', '--name', 'remote', '--key-store', redis.url)
      expect(made.code).toBe(0)
      expect(made.stderr).toContain(`in ${redis.url}`)
      const remote = JSON.parse((await cli('list', '--json', '--key-store', redis.url)).stdout)
      expect(remote.map((k: { name: string }) => k.name)).toEqual(['remote'])
      expect(JSON.parse((await cli('list', '--json')).stdout).some((k: { name: string }) => k.name === 'remote')).toBe(false)
      // The quota store's Redis is the default key store.
      const viaQuota = await cli('revoke', 'remote', '--quota-store', redis.url)
      expect(viaQuota.code).toBe(0)
      await redis.stop()
      const down = await cli('list', '--key-store', redis.url)
      expect({ code: down.code, stderr: down.stderr }).toEqual({ code: 1, stderr: expect.stringContaining('is unreachable') })
    } finally {
      await redis.close()
    }
  })
})
