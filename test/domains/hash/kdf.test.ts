/**
 * Password hashes: formats, fresh salts, defaults, both spellings of scrypt's parameters, Form A `params`,
 * the SPEC ranges (schema) and the operator ceilings (422 naming the ceiling). Outputs are checked by
 * independent code: Bun.password.verify for bcrypt and argon2id, node:crypto recomputation for scrypt.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { scryptSync } from 'node:crypto'
import hash from '../../../src/domains/hash/index.ts'
import { testApp, type TestApp } from '../../support/app.ts'

// KDFs at their default costs are slow by design, and CI machines are shared: no timing is asserted.
setDefaultTimeout(120_000)

let app: TestApp
/** A server with small ceilings, to reach them cheaply. */
let capped: TestApp
beforeAll(async () => {
  app = await testApp({ domains: [hash] })
  capped = await testApp({
    domains: [hash],
    env: {
      ALMANAC_HASH_BCRYPT_MAX_ROUNDS: '6',
      ALMANAC_HASH_SCRYPT_MAX_MEMORY: String(128 * 1024 * 8),
      ALMANAC_HASH_SCRYPT_MAX_PARALLELISM: '2',
      ALMANAC_HASH_ARGON2_MAX_MEMORY: '4096',
      ALMANAC_HASH_ARGON2_MAX_TIME: '2',
      ALMANAC_HASH_ARGON2_MAX_PARALLELISM: '2',
    },
  })
})
afterAll(async () => {
  await app.close()
  await capped.close()
})

const post = (path: string, body: unknown, form: 'enveloped' | 'bare' = 'bare', on = app) =>
  on.json('POST', `/api/v1/hash/${path}`, { body, form })

/** Parses `$scrypt$ln=..,r=..,p=..$salt$hash` and recomputes the key with node:crypto. */
function checkScrypt(phc: string, input: string) {
  const m = /^\$scrypt\$ln=(\d+),r=(\d+),p=(\d+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/.exec(phc)
  expect(m).not.toBeNull()
  const [, ln, r, p, salt, key] = m!
  const expected = Buffer.from(key!, 'base64')
  const N = 2 ** Number(ln)
  const actual = scryptSync(Buffer.from(input, 'utf8'), Buffer.from(salt!, 'base64'), expected.length, {
    N,
    r: Number(r),
    p: Number(p),
    maxmem: 128 * Number(r) * (N + 2 + Number(p)) + 2 ** 20,
  })
  expect(actual.equals(expected)).toBe(true)
  return { ln: Number(ln), r: Number(r), p: Number(p), saltBytes: Buffer.from(salt!, 'base64').length, keyBytes: expected.length }
}

describe('refusals are 422s naming the parameter, never library text', () => {
  test('an empty input is refused by every password hash', async () => {
    for (const algorithm of ['bcrypt', 'scrypt', 'argon2id']) {
      const res = await post(algorithm, { input: '' })
      expect({ algorithm, status: res.status, fields: res.body.errors.map((e: any) => e.field) }).toEqual({
        algorithm,
        status: 422,
        fields: ['input'],
      })
    }
  })

  test('scrypt n 2, r 65536, p 16 (OpenSSL refused it for a maxmem counted short) is computed and verifies', async () => {
    const res = await post('scrypt', { input: 'wide', n: 2, r: 65536, p: 16 })
    expect(res.status).toBe(200)
    expect(checkScrypt(res.body.hash, 'wide')).toMatchObject({ ln: 1, r: 65536, p: 16 })
  })

  test('work ceilings: scrypt n·r·p and argon2id time·memory', async () => {
    const scrypt = await post('scrypt', { input: 'x', n: 2 ** 17, r: 8, p: 16 })
    expect(scrypt.status).toBe(422)
    expect(scrypt.body.ceilings.map((c: any) => c.setting)).toEqual(['hash.scryptMaxWork'])
    const argon = await post('argon2id', { input: 'x', time_cost: 10, memory_cost: 262144, parallelism: 1 })
    expect(argon.status).toBe(422)
    expect(argon.body.ceilings.map((c: any) => c.setting)).toEqual(['hash.argon2MaxWork'])
  })
})

describe('bcrypt', () => {
  test('default rounds 12, $2b$ format, verifies, fresh salt each call', async () => {
    const a = await post('bcrypt', { input: 'correct horse' }, 'enveloped')
    expect(a.status).toBe(200)
    expect(a.body.data.algorithm).toBe('bcrypt')
    expect(a.body.data.hash).toMatch(/^\$2b\$12\$[./A-Za-z0-9]{53}$/)
    expect(a.body.data.params).toEqual({ rounds: 12 })
    expect(await Bun.password.verify('correct horse', a.body.data.hash)).toBe(true)
    expect(await Bun.password.verify('correct horsf', a.body.data.hash)).toBe(false)
  })

  test('rounds is honoured; equal inputs give different hashes; Form B has no params', async () => {
    const [x, y] = await Promise.all([post('bcrypt', { input: 'pässword', rounds: 4 }), post('bcrypt', { input: 'pässword', rounds: 4 })])
    expect(Object.keys(x.body).sort()).toEqual(['algorithm', 'hash'])
    expect(x.body.hash).toStartWith('$2b$04$')
    expect(x.body.hash).not.toBe(y.body.hash)
    for (const h of [x.body.hash, y.body.hash]) expect(await Bun.password.verify('pässword', h)).toBe(true)
  })

  test('rounds 3 and 32 are outside the SPEC range: 422 naming rounds', async () => {
    for (const rounds of [3, 32, 4.5, 'many']) {
      const res = await post('bcrypt', { input: 'x', rounds })
      expect(res.status).toBe(422)
      expect(res.body.errors).toEqual([{ in: 'body', field: 'rounds', message: 'expected an integer from 4 to 31' }])
    }
  })

  test('rounds above the ceiling: 422 naming the ceiling, while SPEC-valid rounds below it work', async () => {
    const res = await post('bcrypt', { input: 'x', rounds: 16 })
    expect(res.status).toBe(422)
    expect(res.body.ceilings).toEqual([
      { field: 'rounds', setting: 'hash.bcryptMaxRounds', env: 'ALMANAC_HASH_BCRYPT_MAX_ROUNDS', value: 15 },
    ])
    const low = await post('bcrypt', { input: 'x', rounds: 7 }, 'bare', capped)
    expect(low.status).toBe(422)
    expect(low.body.detail).toContain('hash.bcryptMaxRounds = 6')
    expect(low.body.errors[0].field).toBe('rounds')
    expect((await post('bcrypt', { input: 'x', rounds: 6 }, 'bare', capped)).status).toBe(200)
  })

  test('input over 256 KB is 413 before any hashing', async () => {
    const res = await post('bcrypt', { input: 'a'.repeat(262145), rounds: 4 })
    expect(res.status).toBe(413)
    expect(res.body.errors[0].field).toBe('input')
  })
})

describe('scrypt', () => {
  test('defaults n 16384, r 8, p 1; format with unpadded standard base64; recomputes', async () => {
    const res = await post('scrypt', { input: 'correct horse' }, 'enveloped')
    expect(res.status).toBe(200)
    expect(res.body.data.hash).toStartWith('$scrypt$ln=14,r=8,p=1$')
    expect(res.body.data.hash).not.toContain('=$')
    expect(res.body.data.params).toEqual({ cost_factor: 16384, block_size: 8, parallelism: 1 })
    expect(checkScrypt(res.body.data.hash, 'correct horse')).toEqual({ ln: 14, r: 8, p: 1, saltBytes: 16, keyBytes: 32 })
  })

  test('Form B spelling n/r/p and Form A spelling cost_factor/block_size/parallelism give the same parameters', async () => {
    const bare = await post('scrypt', { input: 'é', n: 1024, r: 4, p: 2 })
    const enveloped = await post('scrypt', { input: 'é', cost_factor: 1024, block_size: 4, parallelism: 2 }, 'enveloped')
    expect(bare.body.hash).toStartWith('$scrypt$ln=10,r=4,p=2$')
    expect(enveloped.body.data.hash).toStartWith('$scrypt$ln=10,r=4,p=2$')
    expect(enveloped.body.data.params).toEqual({ cost_factor: 1024, block_size: 4, parallelism: 2 })
    expect(bare.body.hash).not.toBe(enveloped.body.data.hash)
    checkScrypt(bare.body.hash, 'é')
    checkScrypt(enveloped.body.data.hash, 'é')
    // Mixed spellings, and both spellings agreeing, are fine too.
    const mixed = await post('scrypt', { input: 'é', n: 1024, block_size: 2, p: 1, parallelism: 1 })
    expect(mixed.body.hash).toStartWith('$scrypt$ln=10,r=2,p=1$')
  })

  test('n = 1000 (not a power of two) and n = 1 are 422 naming the field as sent', async () => {
    const a = await post('scrypt', { input: 'x', n: 1000 })
    expect(a.status).toBe(422)
    expect(a.body.errors).toEqual([{ in: 'body', field: 'n', message: expect.stringContaining('power of two') }])
    const b = await post('scrypt', { input: 'x', cost_factor: 1000 })
    expect(b.body.errors[0].field).toBe('cost_factor')
    const c = await post('scrypt', { input: 'x', n: 1 })
    expect(c.status).toBe(422)
    expect(c.body.errors[0].field).toBe('n')
  })

  test('both spellings with different values is 422 naming both', async () => {
    const res = await post('scrypt', { input: 'x', n: 1024, cost_factor: 2048 })
    expect(res.status).toBe(422)
    expect(res.body.errors.map((e: any) => e.field)).toEqual(['n', 'cost_factor'])
  })

  test('RFC 7914 bounds: n < 2^(16 r) and r·p < 2^30', async () => {
    const a = await post('scrypt', { input: 'x', n: 65536, r: 1 })
    expect(a.status).toBe(422)
    expect(a.body.errors[0].field).toBe('n')
    const b = await post('scrypt', { input: 'x', r: 1024, p: 2 ** 20 })
    expect(b.status).toBe(422)
    expect(b.body.errors[0].field).toBe('p')
  })

  test('memory and parallelism ceilings: 422 naming each', async () => {
    const mem = await post('scrypt', { input: 'x', n: 2048, r: 8 }, 'bare', capped)
    expect(mem.status).toBe(422)
    expect(mem.body.ceilings).toEqual([
      { field: 'n', setting: 'hash.scryptMaxMemoryBytes', env: 'ALMANAC_HASH_SCRYPT_MAX_MEMORY', value: 128 * 1024 * 8 },
    ])
    const par = await post('scrypt', { input: 'x', n: 512, parallelism: 3 }, 'bare', capped)
    expect(par.status).toBe(422)
    expect(par.body.ceilings).toEqual([
      { field: 'parallelism', setting: 'hash.scryptMaxParallelism', env: 'ALMANAC_HASH_SCRYPT_MAX_PARALLELISM', value: 2 },
    ])
    // 128·r·(n + 2 + p) bytes: n 1024 would need 1,052,672, just over the 1 MiB ceiling.
    const over = await post('scrypt', { input: 'x', n: 1024, r: 8, p: 2 }, 'bare', capped)
    expect(over.body.ceilings?.[0]?.setting).toBe('hash.scryptMaxMemoryBytes')
    const ok = await post('scrypt', { input: 'x', n: 512, r: 8, p: 2 }, 'bare', capped)
    expect(ok.status).toBe(200)
    checkScrypt(ok.body.hash, 'x')
  })
})

describe('argon2id', () => {
  test('defaults t 3, m 65536, p 4; PHC format; verifies with Bun.password', async () => {
    const res = await post('argon2id', { input: 'correct horse' }, 'enveloped')
    expect(res.status).toBe(200)
    expect(res.body.data.hash).toMatch(/^\$argon2id\$v=19\$m=65536,t=3,p=4\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/)
    expect(res.body.data.params).toEqual({ time_cost: 3, memory_cost: 65536, parallelism: 4 })
    expect(await Bun.password.verify('correct horse', res.body.data.hash)).toBe(true)
    expect(await Bun.password.verify('correct horsE', res.body.data.hash)).toBe(false)
  })

  test('parameters are honoured (including parallelism) and salts are fresh', async () => {
    const [a, b] = await Promise.all([1, 2].map(() => post('argon2id', { input: '東京', time_cost: 1, memory_cost: 256, parallelism: 2 })))
    for (const r of [a!, b!]) {
      expect(r.body.hash).toStartWith('$argon2id$v=19$m=256,t=1,p=2$')
      expect(await Bun.password.verify('東京', r.body.hash)).toBe(true)
    }
    expect(a!.body.hash).not.toBe(b!.body.hash)
  })

  test('memory_cost below 8 × parallelism and out-of-range values are 422 naming the field', async () => {
    const low = await post('argon2id', { input: 'x', memory_cost: 16, parallelism: 4 })
    expect(low.status).toBe(422)
    expect(low.body.errors[0].field).toBe('memory_cost')
    for (const [field, value] of [
      ['time_cost', 0],
      ['memory_cost', 7],
      ['parallelism', 0],
      ['parallelism', 2 ** 24],
    ] as const) {
      const res = await post('argon2id', { input: 'x', [field]: value })
      expect(res.status).toBe(422)
      expect(res.body.errors[0].field).toBe(field)
    }
  })

  test('ceilings: 422 listing every exceeded ceiling', async () => {
    const res = await post('argon2id', { input: 'x', time_cost: 3, memory_cost: 8192, parallelism: 3 }, 'bare', capped)
    expect(res.status).toBe(422)
    expect(res.body.ceilings.map((c: any) => c.setting)).toEqual([
      'hash.argon2MaxTimeCost',
      'hash.argon2MaxMemoryKiB',
      'hash.argon2MaxParallelism',
    ])
    expect(res.body.errors.map((e: any) => e.field)).toEqual(['time_cost', 'memory_cost', 'parallelism'])
    const def = await post('argon2id', { input: 'x', memory_cost: 262145 })
    expect(def.status).toBe(422)
    expect(def.body.ceilings).toEqual([
      { field: 'memory_cost', setting: 'hash.argon2MaxMemoryKiB', env: 'ALMANAC_HASH_ARGON2_MAX_MEMORY', value: 262144 },
    ])
  })

  test('missing input is 422 naming input', async () => {
    const res = await post('argon2id', { time_cost: 1 })
    expect(res.status).toBe(422)
    expect(res.body.errors.map((e: any) => e.field)).toContain('input')
  })
})
