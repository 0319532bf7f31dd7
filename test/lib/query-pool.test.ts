/**
 * The query-worker pool (src/lib/query-pool.ts) with a fixture worker served by the real `serveQueries`:
 * values and problems cross the thread boundary intact; a full queue and a caller at its cap are refused
 * at once with `busy` (503 + Retry-After); a worker that dies mid-job answers its job `busy` and is
 * replaced; `close` ends the workers once their jobs are done. Deterministic: `hold` keeps the workers
 * from starting their next job, so the queue fills without any timing.
 */
import { afterEach, describe, expect, test } from 'bun:test'
import { AlmanacError } from '../../src/lib/errors.ts'
import { createQueryPool, inlineOr, NotInline, type QueryPool } from '../../src/lib/query-pool.ts'

const url = new URL('./fixtures/query-pool-worker.ts', import.meta.url).href
const pools: QueryPool[] = []
const pool = (options: { size?: number; queueSize?: number; perCaller?: number } = {}) => {
  const p = createQueryPool({ url, init: { label: 'fixture' }, size: 1, queueSize: 8, perCaller: 8, what: 'test query', ...options })
  pools.push(p)
  return p
}
afterEach(async () => {
  for (const p of pools.splice(0)) await p.close()
})

/** The error a promise rejects with. */
const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a rejection')
    },
    (e: Error) => e as AlmanacError,
  )

describe('answers', () => {
  test('a value comes back from a worker that opened the init it was given', async () => {
    const p = pool()
    const answer = await p.run<{ label: string; value: unknown }>('echo', [{ a: [1, 2], b: 'ü' }])
    expect(answer.label).toBe('fixture')
    expect(answer.value).toEqual({ a: [1, 2], b: 'ü' })
    expect(p.stats()).toMatchObject({ completed: 1, workers: 1, running: 0, queued: 0 })
  })

  test('a problem keeps its kind, detail, field errors and members; any other error is an internal one without its text', async () => {
    const p = pool()
    const problem = await failure(p.run('problem', ['q']))
    expect(problem).toBeInstanceOf(AlmanacError)
    expect(problem.kind).toBe('invalid')
    expect(problem.detail).toBe('q: too wide')
    expect(problem.options).toEqual({ errors: [{ in: 'query', field: 'q', message: 'too wide' }], extra: { reason: 'x' } })
    const bug = await failure(p.run('fail', []))
    expect(bug.kind).toBe('internal')
    expect(bug.detail).not.toContain('a bug')
    const unknown = await failure(p.run('constructor', []))
    expect(unknown.kind).toBe('internal')
  })

  test('inlineOr: an inline answer stays synchronous; NotInline sends the query to the pool; other errors are thrown', async () => {
    expect(
      inlineOr(
        () => 42,
        () => Promise.resolve(0),
      ),
    ).toBe(42)
    const pooled = inlineOr(
      () => {
        throw new NotInline()
      },
      () => Promise.resolve(7),
    )
    expect(pooled).toBeInstanceOf(Promise)
    expect(await pooled).toBe(7)
    expect(() =>
      inlineOr(
        () => {
          throw new AlmanacError('invalid', 'no')
        },
        () => Promise.resolve(0),
      ),
    ).toThrow('no')
  })
})

describe('refusals', () => {
  test('with the worker busy and the queue full, the next job is busy with Retry-After; the held ones are answered', async () => {
    const p = pool({ size: 1, queueSize: 2 })
    const release = p.hold()
    const held = [1, 2, 3].map((i) => p.run<{ value: number }>('echo', [i], `caller-${i}`))
    expect(p.stats()).toMatchObject({ running: 1, queued: 2 })
    const refused = await failure(p.run('echo', [4], 'caller-4'))
    expect(refused.kind).toBe('busy')
    expect(refused.options.headers).toEqual({ 'Retry-After': '1' })
    expect(refused.detail).toContain('the queue holds 2')
    expect(p.stats().refused).toBe(1)
    release()
    expect((await Promise.all(held)).map((a) => a.value)).toEqual([1, 2, 3])
    expect((await p.run<{ value: number }>('echo', [5], 'caller-4')).value).toBe(5)
  })

  test('a caller holds at most perCaller jobs running or waiting; others still get in; a finished job frees a place', async () => {
    const p = pool({ size: 1, queueSize: 8, perCaller: 2 })
    const release = p.hold()
    const mine = [p.run('echo', [1], 'greedy'), p.run('echo', [2], 'greedy')]
    const over = await failure(p.run('echo', [3], 'greedy'))
    expect(over.kind).toBe('busy')
    expect(over.detail).toContain('queries.jobsPerCaller')
    const other = p.run('echo', [4], 'modest')
    release()
    await Promise.all([...mine, other])
    expect(p.stats()).toMatchObject({ completed: 3, refused: 1 })
    await p.run('echo', [5], 'greedy')
  })
})

describe('a worker that dies', () => {
  test('its job is answered busy (503), the worker is replaced, and the jobs behind it are served by the new one', async () => {
    const p = pool({ size: 1 })
    const first = await p.run<{ thread: number }>('echo', [0])
    const release = p.hold()
    const dying = p.run('die', [])
    const behind = p.run<{ thread: number; value: number }>('echo', [1])
    release()
    const lost = await failure(dying)
    expect(lost.kind).toBe('busy')
    expect(lost.options.headers?.['Retry-After']).toBe('1')
    const served = await behind
    expect(served.value).toBe(1)
    expect(served.thread).not.toBe(first.thread)
    expect(p.stats()).toMatchObject({ died: 1, workers: 1 })
    expect((await p.run<{ value: number }>('echo', [2])).value).toBe(2)
  })
})

describe('close', () => {
  test('takes no new job, answers the running and queued ones, then ends every worker', async () => {
    const p = pool({ size: 2 })
    await Promise.all([p.run('echo', [0]), p.run('echo', [0])])
    expect(p.stats().workers).toBe(2)
    const release = p.hold()
    const pending = [1, 2, 3].map((i) => p.run<{ value: number }>('echo', [i]))
    let closed = false
    const closing = p.close().then(() => (closed = true))
    const late = await failure(p.run('echo', [4]))
    expect(late.kind).toBe('unavailable')
    await Bun.sleep(0)
    expect(closed).toBe(false)
    expect(p.stats().workers).toBe(2)
    release()
    expect((await Promise.all(pending)).map((a) => a.value)).toEqual([1, 2, 3])
    await closing
    expect(p.stats()).toMatchObject({ workers: 0, running: 0, queued: 0 })
  })

  test('an idle pool closes at once, and one never used starts no worker', async () => {
    const p = pool()
    await p.close()
    expect(p.stats().workers).toBe(0)
  })
})
