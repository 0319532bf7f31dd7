/**
 * `almanac keys` and `almanac customers` through the real CLI (`bun src/main.ts keys …` with a temp
 * ALMANAC_STATE_DIR), then the issued keys over `app.handle`: accepted with their plan (or their
 * customer's), refused once revoked or once a rotation's grace is over — by the same running app. Then
 * updates, rotations, the audit log, two CLIs racing, and the same commands on Redis.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'
import { testApp } from '../support/app.ts'
import { startRedis } from '../support/redis.ts'
import { sampleDomain } from '../support/sample-domain.ts'

const stateDir = mkdtempSync(join(tmpdir(), 'almanac-keys-'))
const env = { ALMANAC_STATE_DIR: stateDir, ALMANAC_PLANS: 'free:100/1d,tiny:5/1m,test:1000/1d', ALMANAC_DEFAULT_PLAN: 'free' }
const MAIN = join(import.meta.dir, '../../src/main.ts')

afterAll(() => rmSync(stateDir, { recursive: true, force: true }))

async function run(command: 'keys' | 'customers', args: string[], extraEnv: Record<string, string> = {}) {
  const proc = Bun.spawn(['bun', MAIN, command, ...args], { env: { ...process.env, ...env, ...extraEnv }, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { stdout, stderr, code }
}
const cli = (...args: string[]) => run('keys', args)

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

  test('list shows id, name, plan, customer, scopes, expiry, created, revoked and never a key', async () => {
    const table = await cli('list')
    expect(table.code).toBe(0)
    expect(table.stdout).toMatch(/^ID\s+NAME\s+PLAN\s+CUSTOMER\s+SCOPES\s+EXPIRES\s+CREATED\s+REVOKED/)
    expect(table.stdout).toContain(aliceId)
    const json = await cli('list', '--json')
    const keys = JSON.parse(json.stdout)
    expect(keys.map((k: any) => [k.name, k.plan, k.revoked])).toEqual([
      ['alice', 'tiny', null],
      ['bob', null, null],
    ])
    expect(Object.keys(keys[0]).sort()).toEqual(['created', 'customer', 'expires', 'id', 'name', 'plan', 'revoked', 'rotated', 'scopes'])
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
    expect(table).toMatch(/scoped\s+\(default\)\s+-\s+ip,countries\s+2099-05-06T00:00:00.000Z/)
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

describe('almanac customers, keys update | rotate | audit', () => {
  const dir = mkdtempSync(join(tmpdir(), 'almanac-customers-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  const own = { ALMANAC_STATE_DIR: dir }
  const keys = (...args: string[]) => run('keys', args, own)
  const customers = (...args: string[]) => run('customers', args, own)
  const actor = `cli:${userInfo().username}`
  let acmeId = ''

  test('customers create prints the id alone; names are unique; plans must be configured; list counts active keys', async () => {
    const acme = await customers('create', '--name', 'Acme', '--plan', 'tiny')
    expect(acme.code).toBe(0)
    acmeId = acme.stdout.trim()
    expect(acmeId).toMatch(/^cus_[0-9A-Za-z]{11}$/)
    expect(acme.stderr).toContain(`created customer ${acmeId} (Acme, plan tiny)`)
    const again = await customers('create', '--name', 'Acme')
    expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 1, stderr: expect.stringContaining('already named "Acme"') })
    const gold = await customers('create', '--name', 'Goldco', '--plan', 'gold')
    expect({ code: gold.code, stderr: gold.stderr }).toEqual({
      code: 2,
      stderr: expect.stringContaining('--plan "gold" is not among the configured plans (free, tiny, test)'),
    })
    expect((await customers('create')).code).toBe(2)
    expect((await keys('create', '--name', 'acme-1', '--customer', 'Acme')).code).toBe(0)
    expect((await keys('create', '--name', 'acme-2', '--customer', acmeId)).code).toBe(0)
    const listed = await customers('list')
    expect(listed.stdout).toMatch(new RegExp(`^ID\\s+NAME\\s+PLAN\\s+KEYS\\s+CREATED\\n${acmeId}\\s+Acme\\s+tiny\\s+2\\s`))
    expect(JSON.parse((await customers('list', '--json')).stdout)).toEqual([
      { id: acmeId, name: 'Acme', plan: 'tiny', created: expect.any(String) },
    ])
  })

  test("a customer's keys share its credits and its plan; a new plan is seen by a running app at once", async () => {
    const one = await keys('create', '--name', 'pool-1', '--customer', 'Acme', '--plan', 'test', '--json')
    const two = await keys('create', '--name', 'pool-2', '--customer', 'Acme', '--json')
    const [k1, k2] = [JSON.parse(one.stdout), JSON.parse(two.stdout)]
    expect([k1.customer, k2.customer, k1.plan]).toEqual([acmeId, acmeId, 'test'])
    const table = (await keys('list')).stdout
    expect(table).toMatch(/pool-1\s+tiny \(customer\)\s+Acme\s/)
    const app = await testApp({ domains: [sampleDomain()], env: { ...env, ...own } })
    try {
      const call = async (key: string) => (await app.json('GET', '/api/v1/planets/earth', { key })).headers
      const first = await call(k1.key)
      expect(first.get('x-quota-limit')).toBe('5')
      const second = await call(k2.key)
      expect(Number(second.get('x-quota-remaining'))).toBe(Number(first.get('x-quota-remaining')) - 1)
      expect((await customers('update', 'Acme', '--plan', 'default')).code).toBe(0)
      expect((await call(k1.key)).get('x-quota-limit')).toBe('100')
      const moved = await keys('update', 'pool-1', '--customer', 'none')
      expect(moved.stderr).toContain('(pool-1, plan test)')
      expect((await call(k1.key)).get('x-quota-limit')).toBe('1000')
    } finally {
      await app.close()
    }
  })

  test('keys update: each field, the words that clear one, and clear refusals', async () => {
    expect((await keys('create', '--name', 'svc', '--plan', 'tiny')).code).toBe(0)
    const changed = await keys(
      'update',
      'svc',
      '--name',
      'svc-2',
      '--plan',
      'free',
      '--scopes',
      'ip,ua',
      '--expires',
      '2099-01-01',
      '--json',
    )
    expect(changed.code).toBe(0)
    expect(JSON.parse(changed.stdout)).toMatchObject({
      name: 'svc-2',
      plan: 'free',
      scopes: ['ip', 'ua'],
      expires: '2099-01-01T00:00:00.000Z',
    })
    const cleared = await keys('update', 'svc-2', '--plan', 'default', '--scopes', 'all', '--expires', 'never', '--json')
    expect(JSON.parse(cleared.stdout)).toMatchObject({ name: 'svc-2', plan: null, scopes: null, expires: null, customer: null })
    for (const [args, code, words] of [
      [['svc-2'], 2, 'name what to change'],
      [['svc-2', '--plan', 'gold'], 2, '--plan "gold" is not among the configured plans (free, tiny, test), nor "default"'],
      [['svc-2', '--scopes', 'ipp'], 2, '"ipp" is not a domain'],
      [['svc-2', '--expires', '2001-01-01'], 2, 'that moment has passed'],
      [['svc-2', '--customer', 'Umbrella'], 1, 'no customer has the id or name "Umbrella"'],
      [['svc-2', '--name', 'acme-1'], 1, 'already named "acme-1"'],
      [['nobody', '--plan', 'free'], 1, 'no key has the id or active name "nobody"'],
      [['--plan', 'free'], 2, 'keys update needs an id or a name'],
    ] as const) {
      const bad = await keys('update', ...args)
      expect({ args, code: bad.code, stderr: bad.stderr }).toEqual({ args, code, stderr: expect.stringContaining(words) })
    }
  })

  test('keys rotate prints the new key alone; the old one works through its grace, and not at all with --grace 0', async () => {
    const made = await keys('create', '--name', 'rot')
    const original = made.stdout.trim()
    const rotated = await keys('rotate', 'rot', '--grace', '1h')
    expect(rotated.code).toBe(0)
    const second = rotated.stdout.trim()
    expect(second).toMatch(/^alm_[0-9A-Za-z]{43}$/)
    expect(rotated.stderr).toMatch(/rotated key_\w+ \(rot\): the old key works until \d{4}-.*Z; the key above is shown only this once/)
    const app = await testApp({ domains: [sampleDomain()], env: { ...env, ...own } })
    try {
      const status = async (key: string) => {
        const res = await app.json('GET', '/api/v1/planets/earth', { key })
        return res.status === 401 ? res.body.error.detail : res.status
      }
      expect([await status(original), await status(second)]).toEqual([200, 200])
      const third = JSON.parse((await keys('rotate', 'rot', '--grace', '0', '--json')).stdout)
      expect(third.key).toMatch(/^alm_/)
      // Both older secrets are refused from the rotation on, naming the rotation.
      expect(await status(original)).toBe(`The API key has been rotated; its grace period ended at ${third.previousUntil}.`)
      expect(await status(second)).toContain('has been rotated')
      expect(await status(third.key)).toBe(200)
    } finally {
      await app.close()
    }
    for (const grace of ['soon', '91d', '-1h']) expect((await keys('rotate', 'rot', '--grace', grace)).code).toBe(2)
  })

  test('keys audit: every change with who made it, newest first; --limit, --since, --json', async () => {
    const all = JSON.parse((await keys('audit', '--json', '--limit', '1000')).stdout) as {
      action: string
      actor: string
      changes: object
    }[]
    expect(all.every((e) => e.actor === actor)).toBe(true)
    expect(all.map((e) => e.action).slice(0, 3)).toEqual(['key.rotate', 'key.rotate', 'key.create'])
    expect(all.at(-1)).toMatchObject({
      action: 'customer.create',
      changes: { name: { from: null, to: 'Acme' }, plan: { from: null, to: 'tiny' } },
    })
    expect(all.filter((e) => e.action === 'customer.update')).toHaveLength(1)
    const text = await keys('audit', '--limit', '2')
    expect(text.stdout).toMatch(/^AT\s+ACTOR\s+ACTION\s+TARGET\s+CHANGES\n/)
    expect(text.stdout.trim().split('\n')).toHaveLength(3)
    expect(text.stdout).toContain(`${actor}  key.rotate`)
    expect(text.stdout).toMatch(/rotated: .* → .*; grace_until: - → \d{4}-/)
    expect(JSON.parse((await keys('audit', '--since', '1d', '--json')).stdout)).toHaveLength(Math.min(all.length, 100))
    expect(JSON.parse((await keys('audit', '--since', '2999-01-01', '--json')).stdout)).toEqual([])
    for (const args of [
      ['--since', 'yesterday'],
      ['--limit', '0'],
      ['--limit', 'ten'],
    ])
      expect((await keys('audit', ...args)).code).toBe(2)
  })

  test('two CLIs renaming two keys to one name at once: exactly one wins', async () => {
    for (const name of ['race-a', 'race-b']) expect((await keys('create', '--name', name)).code).toBe(0)
    const [a, b] = await Promise.all([keys('update', 'race-a', '--name', 'raced'), keys('update', 'race-b', '--name', 'raced')])
    expect([a.code, b.code].sort()).toEqual([0, 1])
    expect([a.stderr, b.stderr].join('')).toContain('already named "raced"')
  })

  test('customers and rotations on Redis too', async () => {
    const redis = await startRedis()
    try {
      const store = { ALMANAC_KEY_STORE: redis.url }
      const customer = await run('customers', ['create', '--name', 'Remote Co', '--plan', 'tiny'], store)
      expect(customer.code).toBe(0)
      expect((await run('keys', ['create', '--name', 'remote', '--customer', 'Remote Co'], store)).code).toBe(0)
      expect((await run('keys', ['rotate', 'remote', '--grace', '0'], store)).stdout).toMatch(/^alm_\w+\n$/)
      expect((await run('customers', ['update', 'Remote Co', '--name', 'Remote Inc'], store)).code).toBe(0)
      const listed = (await run('keys', ['list'], store)).stdout
      expect(listed).toMatch(/remote\s+tiny \(customer\)\s+Remote Inc\s/)
      const audit = JSON.parse((await run('keys', ['audit', '--json'], store)).stdout) as { action: string }[]
      expect(audit.map((e) => e.action)).toEqual(['customer.update', 'key.rotate', 'key.create', 'customer.create'])
    } finally {
      await redis.close()
    }
  })
})

describe('help and usage mistakes', () => {
  test('customers --help, help customers and keys audit --help print usage and run nothing', async () => {
    for (const [command, args, words] of [
      ['customers', ['--help'], 'almanac customers create --name NAME'],
      ['customers', ['update', '--help'], 'almanac customers update <id | name>'],
      ['keys', ['audit', '--help'], 'almanac keys audit [--since 7d|DATE]'],
      ['keys', ['rotate', '-h'], 'almanac keys rotate <id | name> [--grace 24h]'],
    ] as const) {
      const out = await run(command, [...args])
      expect({ code: out.code, stdout: out.stdout }).toEqual({ code: 0, stdout: expect.stringContaining(words) })
    }
    const proc = Bun.spawn(['bun', MAIN, 'help', 'customers'], { stdout: 'pipe' })
    expect(await new Response(proc.stdout).text()).toContain('almanac customers list [--json]')
  })

  test('an unknown subcommand or flag is exit 2 naming the nearest; a target is required where one is taken', async () => {
    const unknown = await run('customers', ['delete', 'Acme'])
    expect({ code: unknown.code, stderr: unknown.stderr }).toEqual({
      code: 2,
      stderr: expect.stringContaining('unknown customers command "delete"'),
    })
    const flag = await run('keys', ['rotate', 'x', '--grase', '1h'])
    expect({ code: flag.code, stderr: flag.stderr }).toEqual({ code: 2, stderr: expect.stringContaining('did you mean --grace') })
    const targetless = await run('customers', ['update', '--plan', 'free'])
    expect({ code: targetless.code, stderr: targetless.stderr }).toEqual({
      code: 2,
      stderr: expect.stringContaining('needs an id or a name'),
    })
  })
})
