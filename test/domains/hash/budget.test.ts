/**
 * The hashing memory budget: running jobs never hold more than the budget, nor one caller more than its
 * share; the others wait in the queue (first come, first served) and start as memory frees. The pool is
 * driven directly with a budget of a few MiB; stats are read synchronously after queuing (a job cannot
 * finish before the event loop turns) or in the callback of the first job to finish (the pool has started
 * what it can by then), so nothing depends on how long a hash takes.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import hash from '../../../src/domains/hash/index.ts'
import { BCRYPT_MEMORY, jobMemory, memoryBudget } from '../../../src/domains/hash/budget.ts'
import { scryptMemory } from '../../../src/domains/hash/kdf.ts'
import { createKdfPool } from '../../../src/domains/hash/pool.ts'
import { AlmanacError } from '../../../src/lib/errors.ts'
import { problemIn, testApp, testConfig, TEST_KEY } from '../../support/app.ts'
import { pythonJson } from '../../support/python.ts'

setDefaultTimeout(120_000)

const MiB = 2 ** 20
/** An argon2id job of `mib` MiB (memory_cost KiB), one pass: memory is what the test is about. */
const argon2 = (mib: number, input = 'pw') =>
  ({ algorithm: 'argon2id', input, params: { time_cost: 1, memory_cost: mib * 1024, parallelism: 1 } }) as const

describe('what a job costs', () => {
  test('scrypt as OpenSSL counts, argon2id its memory_cost KiB, bcrypt its fixed state', () => {
    expect(jobMemory({ algorithm: 'scrypt', input: 'x', params: { n: 2 ** 20, r: 8, p: 1 } })).toBe(128 * 8 * (2 ** 20 + 2 + 1))
    expect(scryptMemory({ n: 2 ** 20, r: 8, p: 1 })).toBe(1073744896)
    expect(jobMemory(argon2(64))).toBe(64 * MiB)
    expect(jobMemory({ algorithm: 'bcrypt', input: 'x', params: { rounds: 12 } })).toBe(BCRYPT_MEMORY)
  })

  test('the default budget is a quarter of the machine, split between server processes; a configured one wins', () => {
    expect(memoryBudget(0, 1, 24 * 2 ** 30)).toBe(6 * 2 ** 30)
    expect(memoryBudget(0, 4, 8 * 2 ** 30)).toBe(512 * MiB)
    expect(memoryBudget(3 * MiB, 4, 8 * 2 ** 30)).toBe(3 * MiB)
  })

  test('ALMANAC_HASH_MEMORY_BUDGET is 0 (automatic) or at least 1 MiB', () => {
    expect(testConfig({ ALMANAC_HASH_MEMORY_BUDGET: String(MiB) }).hash.memoryBudgetBytes).toBe(MiB)
    expect(testConfig().hash.memoryBudgetBytes).toBe(0)
    expect(() => testConfig({ ALMANAC_HASH_MEMORY_BUDGET: '4096' })).toThrow('ALMANAC_HASH_MEMORY_BUDGET: expected 0 (automatic)')
  })
})

describe('the pool under a memory budget', () => {
  test('jobs beyond the budget wait although workers are free, and start when memory frees', async () => {
    const pool = createKdfPool({ size: 4, queueSize: 8, memoryBudget: 3 * MiB })
    const seen: number[] = []
    const jobs = ['a', 'b', 'c', 'd'].map((input) =>
      pool.run(argon2(1, input)).then((h) => {
        seen.push(pool.stats().memoryInUse)
        return h
      }),
    )
    expect(pool.stats()).toEqual({ size: 4, busy: 3, queued: 1, queueSize: 8, memoryInUse: 3 * MiB, memoryBudget: 3 * MiB })
    // When the first job is done, the waiting one has taken its memory.
    await Promise.race(jobs)
    expect(pool.stats()).toMatchObject({ busy: 3, queued: 0, memoryInUse: 3 * MiB })
    const hashes = await Promise.all(jobs)
    for (const m of seen) expect(m).toBeLessThanOrEqual(3 * MiB)
    for (const [i, h] of hashes.entries()) expect(await Bun.password.verify('abcd'[i]!, h)).toBe(true)
    expect(pool.stats()).toMatchObject({ busy: 0, queued: 0, memoryInUse: 0 })
    await pool.close()
  })

  test('a job waiting for memory is not passed by smaller ones behind it (first come, first served)', async () => {
    const pool = createKdfPool({ size: 4, queueSize: 8, memoryBudget: 3 * MiB })
    const x = pool.run(argon2(2, 'x'), 'x')
    const y = pool.run(argon2(2, 'y'), 'y') // 2 + 2 > 3: waits
    const z = pool.run(argon2(1, 'z'), 'z') // 2 + 1 fits, but y came first
    expect(pool.stats()).toMatchObject({ busy: 1, queued: 2, memoryInUse: 2 * MiB })
    await x
    // x's 2 MiB went to y, and the 1 MiB left to z.
    expect(pool.stats()).toMatchObject({ busy: 2, queued: 0, memoryInUse: 3 * MiB })
    await Promise.all([y, z])
    await pool.close()
  })

  test("a job held back by its own caller's share is passed by another caller's job, not by its caller's", async () => {
    const pool = createKdfPool({ size: 4, queueSize: 8, memoryBudget: 4 * MiB, memoryPerOwner: 2 * MiB })
    const a1 = pool.run(argon2(2, 'a1'), 'a')
    const a2 = pool.run(argon2(1, 'a2'), 'a') // a would hold 3 MiB, over its 2: waits
    const b1 = pool.run(argon2(1, 'b1'), 'b') // passes a2
    const a3 = pool.run(argon2(0.5, 'a3'), 'a') // would fit a's share beside a1, but keeps behind a2
    expect(pool.stats()).toMatchObject({ busy: 2, queued: 2, memoryInUse: 3 * MiB })
    await Promise.all([a1, a2, b1, a3])
    expect(pool.stats()).toMatchObject({ busy: 0, queued: 0, memoryInUse: 0 })
    await pool.close()
  })

  test('a job larger than a caller may ever hold is refused at once and blocks nobody; a full queue is busy', async () => {
    const pool = createKdfPool({ size: 2, queueSize: 1, memoryBudget: 4 * MiB, memoryPerOwner: 2 * MiB })
    const tooBig = await pool.run(argon2(3), 'a').catch((e) => e)
    expect(tooBig).toBeInstanceOf(AlmanacError)
    expect(tooBig.kind).toBe('invalid')
    expect(tooBig.detail).toBe(`argon2id needs ${3 * MiB} bytes; one hashing job may use at most ${2 * MiB}.`)
    const running = [pool.run(argon2(2, 'a'), 'a'), pool.run(argon2(2, 'b'), 'b')]
    const waiting = pool.run(argon2(1, 'c'), 'c')
    const refused = await pool.run(argon2(1, 'd'), 'd').catch((e) => e)
    expect(refused.kind).toBe('busy')
    expect(refused.options.headers).toEqual({ 'Retry-After': '1' })
    expect(refused.detail).toContain(`${4 * MiB} of ${4 * MiB} bytes in use`)
    await Promise.all([...running, waiting])
    await pool.close()
  })
})

// scrypt n 2^11, r 8, p 64: 128·8·(2048 + 2 + 64) = 2,164,736 bytes each; two are more than the 4 MiB share of an
// 8 MiB budget, so one key's second job waits. p 64 makes each take a few hundred ms, long enough that the
// requests sent together all arrive while the first runs (as in pool.test.ts).
const SLOW_SMALL = { n: 2 ** 11, r: 8, p: 64 }
const VERIFY_SCRYPT = `
import sys, json, base64, hashlib
def b64(s): return base64.b64decode(s + '=' * (-len(s) % 4))
out = []
for item in json.load(sys.stdin):
    _, _, params, salt, key = item['hash'].split('$')
    p = dict(kv.split('=') for kv in params.split(','))
    n, r, par = 2 ** int(p['ln']), int(p['r']), int(p['p'])
    k = b64(key)
    out.append(hashlib.scrypt(item['input'].encode(), salt=b64(salt), n=n, r=r, p=par, dklen=len(k), maxmem=2 ** 26) == k)
print(json.dumps(out))
`

/** The RFC 9457 problem: the body itself (Form B), or the envelope's `error` (Form A). */
describe('over HTTP, a budget of 8 MiB (4 MiB a caller) and a queue of one', () => {
  const opened = testApp({
    domains: [hash],
    env: {
      ALMANAC_HASH_MEMORY_BUDGET: String(8 * MiB),
      ALMANAC_HASH_WORKERS: '4',
      ALMANAC_HASH_QUEUE: '1',
      ALMANAC_HASH_SCRYPT_MAX_PARALLELISM: '64',
    },
  })
  afterAll(async () => (await opened).close())

  for (const form of ['enveloped', 'bare'] as const) {
    test(`a job over a caller's share of the budget is a 422 naming hash.memoryBudgetBytes (${form})`, async () => {
      const app = await opened
      const scrypt = await app.json('POST', '/api/v1/hash/scrypt', { body: { input: 'pw', n: 2 ** 13, r: 8 }, form })
      expect(scrypt.status).toBe(422)
      if (form === 'enveloped') expect(scrypt.body).toMatchObject({ status: 'error', data: null })
      expect(problemIn(scrypt.body, form).errors).toEqual([{ in: 'body', field: 'n', message: expect.stringContaining('half of') }])
      expect(problemIn(scrypt.body, form).ceilings).toEqual([
        { field: 'n', setting: 'hash.memoryBudgetBytes', env: 'ALMANAC_HASH_MEMORY_BUDGET', value: 4 * MiB },
      ])
      expect(problemIn(scrypt.body, form).detail).toContain(`128 × r × (n + 2 + p) = ${scryptMemory({ n: 2 ** 13, r: 8, p: 1 })} bytes`)
      // More than the whole budget, under Form A's names.
      const whole = await app.json('POST', '/api/v1/hash/scrypt', { body: { input: 'pw', cost_factor: 2 ** 14, block_size: 8 }, form })
      expect(whole.status).toBe(422)
      expect(problemIn(whole.body, form).ceilings[0]).toMatchObject({
        field: 'cost_factor',
        setting: 'hash.memoryBudgetBytes',
        value: 4 * MiB,
      })
      const argon = await app.json('POST', '/api/v1/hash/argon2id', { body: { input: 'pw', memory_cost: 4097, parallelism: 1 }, form })
      expect(argon.status).toBe(422)
      expect(problemIn(argon.body, form).ceilings).toEqual([
        { field: 'memory_cost', setting: 'hash.memoryBudgetBytes', env: 'ALMANAC_HASH_MEMORY_BUDGET', value: 4096 },
      ])
      // At the share exactly, it runs.
      const fits = await app.json('POST', '/api/v1/hash/argon2id', {
        body: { input: 'pw', memory_cost: 4096, time_cost: 1, parallelism: 1 },
        form,
      })
      expect(fits.status).toBe(200)
    })

    test(`one key's second job waits for its share and the third finds the queue full: 503 with Retry-After (${form})`, async () => {
      const app = await opened
      const inputs = ['first', 'second', 'third']
      const results = await Promise.all(
        inputs.map((input) => app.json('POST', '/api/v1/hash/scrypt', { body: { input, ...SLOW_SMALL }, form, key: TEST_KEY })),
      )
      expect(results.map((r) => r.status).sort()).toEqual([200, 200, 503])
      const refused = results.find((r) => r.status === 503)!
      expect(refused.headers.get('retry-after')).toBe('1')
      if (form === 'enveloped') expect(refused.body).toMatchObject({ status: 'error', data: null })
      expect(problemIn(refused.body, form).type).toBe('urn:almanac:problem:busy')
      expect(problemIn(refused.body, form).detail).toContain('the queue holds 1')
      // Workers were free: what the first job held was memory.
      expect(problemIn(refused.body, form).detail).toContain(`${scryptMemory(SLOW_SMALL)} of ${8 * MiB} bytes in use`)
      const hashOf = (body: any): string => (form === 'enveloped' ? body.data.hash : body.hash)
      const served = inputs.flatMap((input, i) => (results[i]!.status === 200 ? [{ input, hash: hashOf(results[i]!.body) }] : []))
      expect(pythonJson<boolean[]>(VERIFY_SCRYPT, served)).toEqual([true, true])
      expect(
        pythonJson<boolean[]>(
          VERIFY_SCRYPT,
          served.map((s) => ({ ...s, input: s.input + '!' })),
        ),
      ).toEqual([false, false])
    })
  }

  test('/metrics shows the budget, and no memory held once the jobs are done', async () => {
    const app = await opened
    const metrics = await (await app.request('GET', '/metrics')).text()
    expect(metrics).toContain(`almanac_hash_memory_budget_bytes ${8 * MiB}\n`)
    expect(metrics).toContain('almanac_hash_memory_bytes 0\n')
    expect(metrics).toContain('almanac_hash_jobs{state="queued"} 0\n')
  })
})
