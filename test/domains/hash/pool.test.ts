/**
 * The server stays up under KDF abuse: password hashes run on worker threads, so digests are answered
 * while the pool is busy; a full queue is refused at once with 503 + Retry-After; closing the pool fails
 * waiting jobs cleanly. No timing is asserted: the checks are about which requests finish before which.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import hash from '../../../src/domains/hash/index.ts'
import { createKdfPool } from '../../../src/domains/hash/pool.ts'
import { AlmanacError } from '../../../src/lib/errors.ts'
import { testApp, TEST_KEY } from '../../support/app.ts'
import { runCompiledProbe } from '../../support/compile-probe.ts'

setDefaultTimeout(120_000)

describe('over HTTP, one worker and a queue of one', () => {
  const opened = testApp({ domains: [hash], env: { ALMANAC_HASH_WORKERS: '1', ALMANAC_HASH_QUEUE: '1' } })
  afterAll(async () => (await opened).close())

  test('sha256 is answered while bcrypt work is in progress; the third KDF request gets 503 with Retry-After', async () => {
    const app = await opened
    // Rounds 12 (hundreds of ms each): the digest is sent after the three KDF requests and must still be answered
    // before they all are, i.e. while the worker is busy with bcrypt.
    const kdfs = [1, 2, 3].map((i) => app.json('POST', '/api/v1/hash/bcrypt', { body: { input: `user${i}`, rounds: 12 }, form: 'bare' }))
    const pending = app.json('POST', '/api/v1/hash/sha256', { body: { input: 'abc' }, form: 'bare' })
    expect(await Promise.race([pending.then(() => 'digest'), Promise.all(kdfs).then(() => 'kdfs')])).toBe('digest')
    const digest = await pending
    expect(digest.status).toBe(200)
    expect(digest.body.hash).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')

    const results = await Promise.all(kdfs)
    const refused = results.filter((r) => r.status === 503)
    const served = results.filter((r) => r.status === 200)
    expect(refused.length).toBe(1)
    expect(served.length).toBe(2)
    expect(refused[0]!.headers.get('retry-after')).toBe('1')
    expect(refused[0]!.body.type).toBe('urn:almanac:problem:busy')
    expect(refused[0]!.body.detail).toContain('queue holds 1')
    for (const [i, r] of results.entries()) if (r.status === 200) expect(await Bun.password.verify(`user${i + 1}`, r.body.hash)).toBe(true)

    // Once the work drains, the pool serves again.
    const after = await app.json('POST', '/api/v1/hash/bcrypt', { body: { input: 'later', rounds: 4 }, form: 'bare' })
    expect(after.status).toBe(200)
  })
})

describe('one caller cannot hold the pool', () => {
  const other = 'second-key-0123456789'
  const opened = testApp({
    domains: [hash],
    env: {
      ALMANAC_HASH_WORKERS: '1',
      ALMANAC_HASH_QUEUE: '8',
      ALMANAC_HASH_JOBS_PER_CALLER: '2',
      ALMANAC_API_KEYS: `${TEST_KEY}:test,${other}:test`,
    },
  })
  afterAll(async () => (await opened).close())

  test('a third concurrent KDF job of one key is a 503 naming hash.jobsPerCaller; another key is still served', async () => {
    const app = await opened
    const mine = [1, 2, 3].map((i) => app.json('POST', '/api/v1/hash/bcrypt', { body: { input: `mine${i}`, rounds: 10 }, form: 'bare' }))
    const theirs = app.json('POST', '/api/v1/hash/bcrypt', { body: { input: 'theirs', rounds: 4 }, form: 'bare', key: other })
    const results = await Promise.all(mine)
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 503])
    const refused = results.find((r) => r.status === 503)!
    expect(refused.body.detail).toContain('hash.jobsPerCaller')
    expect(refused.headers.get('retry-after')).toBe('1')
    expect((await theirs).status).toBe(200)
    // Released when done: the same key is served again.
    expect((await app.json('POST', '/api/v1/hash/bcrypt', { body: { input: 'again', rounds: 4 }, form: 'bare' })).status).toBe(200)
  })
})

describe('the pool itself', () => {
  test('runs jobs in parallel up to its size, queues up to queueSize, refuses the rest with busy', async () => {
    const pool = createKdfPool({ size: 2, queueSize: 1 })
    // The stats are read synchronously after queuing, so the cost only needs to be above nothing.
    const job = (input: string) => pool.run({ algorithm: 'bcrypt', input, params: { rounds: 8 } })
    const running = [job('a'), job('b'), job('c')]
    expect(pool.stats()).toMatchObject({ size: 2, busy: 2, queued: 1, queueSize: 1 })
    const refused = await job('d').then(
      () => null,
      (e) => e,
    )
    expect(refused).toBeInstanceOf(AlmanacError)
    expect(refused.kind).toBe('busy')
    expect(refused.options.headers).toEqual({ 'Retry-After': '1' })
    const hashes = await Promise.all(running)
    for (const [i, h] of hashes.entries()) expect(await Bun.password.verify('abc'[i]!, h)).toBe(true)
    expect(pool.stats()).toMatchObject({ size: 2, busy: 0, queued: 0, queueSize: 1, memoryInUse: 0 })
    await pool.close()
  })

  test('a job that fails inside the worker rejects with an internal error and the worker keeps serving', async () => {
    const pool = createKdfPool({ size: 1, queueSize: 4 })
    // Bypasses the service's checks on purpose: n = 3 is refused by node:crypto inside the worker.
    const bad = await pool.run({ algorithm: 'scrypt', input: 'x', params: { n: 3, r: 8, p: 1 } }).catch((e) => e)
    expect(bad).toBeInstanceOf(AlmanacError)
    expect(bad.kind).toBe('internal')
    // OpenSSL's own words stay in the log.
    expect(bad.detail).toBe('scrypt failed.')
    const good = await pool.run({ algorithm: 'argon2id', input: 'x', params: { time_cost: 1, memory_cost: 64, parallelism: 1 } })
    expect(await Bun.password.verify('x', good)).toBe(true)
    await pool.close()
  })

  test.skipIf(process.platform !== 'linux')('worker threads run reniced (10) so the event loop gets the CPU first', async () => {
    /** Thread ids of this process running at nice 10. */
    const reniced = () =>
      readdirSync('/proc/self/task').filter((tid) => {
        try {
          const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')
          return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]) === 10
        } catch {
          return false // the thread ended meanwhile (a worker of an earlier test)
        }
      })
    const mainNice = () => Number(readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1]!.split(' ')[16])
    const mainBefore = mainNice()
    const before = new Set(reniced())
    const pool = createKdfPool({ size: 2, queueSize: 4 })
    await Promise.all([1, 2].map(() => pool.run({ algorithm: 'bcrypt', input: 'x', params: { rounds: 4 } })))
    expect(reniced().filter((tid) => !before.has(tid)).length).toBeGreaterThanOrEqual(2)
    expect(mainNice()).toBe(mainBefore) // the event-loop thread is untouched
    await pool.close()
  })

  test('close fails running and queued jobs as unavailable and refuses new ones', async () => {
    const pool = createKdfPool({ size: 1, queueSize: 2 })
    const jobs = [1, 2].map(() => pool.run({ algorithm: 'bcrypt', input: 'x', params: { rounds: 13 } }).catch((e) => e))
    await pool.close()
    for (const e of await Promise.all(jobs)) expect(e.kind).toBe('unavailable')
    expect((await pool.run({ algorithm: 'bcrypt', input: 'x', params: { rounds: 4 } }).catch((e) => e)).kind).toBe('unavailable')
  })
})

describe('inside a compiled executable', () => {
  const dir = mkdtempSync(join(tmpdir(), 'almanac-hash-compile-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  test('the pool finds kdf-worker among the entry points, as build/compile.ts lays them out', async () => {
    // A minimal program (fixtures/compile-probe.ts) that imports the pool the way the server does; built like
    // build/compile.ts does (root = the repository, every *worker.ts an extra entry point), then run from
    // another directory.
    const out = (await runCompiledProbe(join(import.meta.dir, 'fixtures/compile-probe.ts'), 'src/domains/hash/kdf-worker.ts', dir)).trim()
    expect(out).toStartWith('$argon2id$v=19$m=64,t=1,p=2$')
    expect(await Bun.password.verify('compiled', out)).toBe(true)
  })
})
