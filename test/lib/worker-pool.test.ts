/**
 * The generic worker pool (src/lib/worker-pool.ts) and its scheduling policies (src/lib/scheduling.ts):
 * each policy's order on its own, caller slots by weight, then pools of real worker threads (a fixture
 * served by the real `serveJobs`). Deterministic: a job waits in its worker on a gate of shared memory
 * until the test opens it, so which jobs run, wait or are refused is decided before any of them finishes,
 * and a pool of one worker answers its jobs in the order it started them.
 */
import { afterEach, describe, expect, test } from 'bun:test'
import { callerSlots } from '../../src/lib/caller-slots.ts'
import { AlmanacError, busy } from '../../src/lib/errors.ts'
import { createLogger } from '../../src/lib/logger.ts'
import { fifo, memoryBudget, roundRobin, type Scheduled, type SchedulingPolicy } from '../../src/lib/scheduling.ts'
import { createWorkerPool, type WorkerPool } from '../../src/lib/worker-pool.ts'
import type { FixtureJob } from './fixtures/pool-job-worker.ts'

let nextId = 1
const job = (caller: string | undefined, tag = `${caller}${nextId}`): Scheduled<string> => ({ id: nextId++, job: tag, caller })
/** Adds the jobs, then takes every one the policy lets start, in its order. */
const order = (policy: SchedulingPolicy<string>, jobs: Scheduled<string>[]) => {
  for (const j of jobs) policy.add(j)
  const started: string[] = []
  for (let next = policy.next(); next; next = policy.next()) started.push(next.job)
  return started
}

describe('policies', () => {
  test('fifo: first come, first served; a removed job is skipped', () => {
    const policy = fifo<string>()
    const jobs = ['a', 'b', 'c'].map((tag) => job(undefined, tag))
    for (const j of jobs) policy.add(j)
    policy.remove(jobs[1]!)
    expect(policy.waiting).toBe(2)
    expect(order(policy, [])).toEqual(['a', 'c'])
  })

  test('roundRobin: one job per caller in turn, callers in the order they first waited', () => {
    const policy = roundRobin<string>()
    const jobs = [job('a', 'a1'), job('a', 'a2'), job('a', 'a3'), job('b', 'b1'), job(undefined, 'x1'), job('b', 'b2')]
    expect(order(policy, jobs)).toEqual(['a1', 'b1', 'x1', 'a2', 'b2', 'a3'])
    // Removing a caller's last waiting job ends its turn.
    const c = job('c', 'c1')
    order(policy, [])
    policy.add(c)
    policy.add(job('d', 'd1'))
    policy.remove(c)
    expect(policy.waiting).toBe(1)
    expect(order(policy, [])).toEqual(['d1'])
  })

  const weighed = () =>
    memoryBudget<string>({
      budget: 4,
      perCaller: 2,
      weigh: (tag) => Number(tag.split(':')[1]),
      tooLarge: (tag, bytes, largest) => new Error(`${tag} ${bytes} > ${largest}`),
    })
  const admitted = (policy: ReturnType<typeof weighed>, caller: string, tag: string) => {
    const j = job(caller, tag)
    expect(policy.admit(j)).toBeUndefined()
    return j
  }

  test("memoryBudget: a job held back by its caller's share is passed by others' jobs, never by its caller's", () => {
    const policy = weighed()
    const jobs = [admitted(policy, 'a', 'a:2'), admitted(policy, 'a', 'a:1'), admitted(policy, 'b', 'b:1'), admitted(policy, 'a', 'a:0.5')]
    expect(order(policy, jobs)).toEqual(['a:2', 'b:1'])
    expect(policy.inUse).toBe(3)
    policy.done(jobs[0]!)
    expect(order(policy, [])).toEqual(['a:1', 'a:0.5'])
    expect(policy.inUse).toBe(2.5)
  })

  test('memoryBudget: a job held back by the budget is passed by nobody; one over the share is refused at admission', () => {
    const policy = weighed()
    const jobs = [admitted(policy, 'a', 'a:2'), admitted(policy, 'b', 'b:2'), admitted(policy, 'c', 'c:2'), admitted(policy, 'd', 'd:1')]
    expect(order(policy, jobs)).toEqual(['a:2', 'b:2'])
    expect(policy.waiting).toBe(2)
    policy.done(jobs[1]!)
    expect(order(policy, [])).toEqual(['c:2'])
    expect(policy.admit(job('e', 'e:3'))?.message).toBe('e:3 3 > 2')
  })
})

describe('caller slots by weight', () => {
  test('a take weighs its units against the share and the total; a unit take is as before; release frees what was taken', () => {
    const slots = callerSlots(10, 6)
    expect(slots.take('a', 5)).toBe(true)
    expect(slots.refusal('a', 2)).toBe('share')
    expect(slots.take('b', 6)).toBe(false)
    expect(slots.refused).toEqual({ share: 0, full: 1 })
    expect(slots.take('a')).toBe(true)
    expect(slots.take('a')).toBe(false)
    expect(slots.refused).toEqual({ share: 1, full: 1 })
    slots.release('a', 4)
    expect([slots.held('a'), slots.held()]).toEqual([2, 2])
    slots.release('a', 9)
    expect([slots.held('a'), slots.held()]).toEqual([0, 0])
  })
})

const url = new URL('./fixtures/pool-job-worker.ts', import.meta.url).href
const pools: WorkerPool<FixtureJob, { tag: string; thread: number }>[] = []
const logged: string[] = []
const pool = (options: { policy?: SchedulingPolicy<FixtureJob>; size?: number; queueSize?: number; perCaller?: number } = {}) => {
  const p = createWorkerPool<FixtureJob, { tag: string; thread: number }>({
    url,
    size: 1,
    queueSize: 8,
    policy: fifo(),
    log: createLogger((line) => logged.push(line)),
    describe: () => 'fixture',
    errors: {
      closed: () => new AlmanacError('unavailable', 'closed'),
      callerAtCap: (held) => busy(`caller holds ${held}`, 1),
      queueFull: (queued) => busy(`${queued} waiting`, 1),
      failed: (job) => new AlmanacError('internal', `${job.tag} failed`),
      lost: (job) => busy(`${job.tag} lost`, 2),
    },
    ...options,
  })
  pools.push(p)
  return p
}
afterEach(async () => {
  for (const p of pools.splice(0)) await p.close()
  logged.length = 0
})

/** A shared gate, shut: jobs given it wait in their worker until `open`. */
const gated = () => {
  const gate = new Int32Array(new SharedArrayBuffer(4))
  gate[0] = 1
  const open = () => {
    Atomics.store(gate, 0, 0)
    Atomics.notify(gate, 0)
  }
  return { gate, open }
}

/** The error a promise rejects with. */
const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a rejection')
    },
    (e: Error) => e as AlmanacError,
  )

/** Runs the jobs and records the tags in the order they are answered. */
const answered = (p: WorkerPool<FixtureJob, { tag: string }>, jobs: [string, FixtureJob][]) => {
  const tags: string[] = []
  const all = jobs.map(([caller, j]) => p.run(j, caller).then((a) => tags.push(a.tag)))
  return { tags, all: Promise.all(all) }
}

describe('a pool of real workers', () => {
  test('fifo: the queue and the per-caller cap refuse at once, with the counts; a finished job frees its caller a place', async () => {
    const p = pool({ queueSize: 2, perCaller: 2 })
    const { gate, open } = gated()
    const run = answered(p, [
      ['a', { tag: 'a1', gate }],
      ['a', { tag: 'a2', gate }],
      ['b', { tag: 'b1', gate }],
    ])
    const atCap = await failure(p.run({ tag: 'a3' }, 'a'))
    expect([atCap.kind, atCap.detail]).toEqual(['busy', 'caller holds 2'])
    const full = await failure(p.run({ tag: 'c1' }, 'c'))
    expect([full.kind, full.detail, full.options.headers]).toEqual(['busy', '2 waiting', { 'Retry-After': '1' }])
    expect(p.stats()).toMatchObject({ size: 1, workers: 1, running: 1, queued: 2, queueSize: 2, refused: 2 })
    open()
    await run.all
    expect(run.tags).toEqual(['a1', 'a2', 'b1'])
    expect((await p.run({ tag: 'c2' }, 'c')).tag).toBe('c2')
    expect(p.stats()).toMatchObject({ running: 0, queued: 0, completed: 4, refused: 2, died: 0 })
  })

  test('roundRobin: a caller with many jobs waiting is served in turn with the others', async () => {
    const p = pool({ policy: roundRobin() })
    const { gate, open } = gated()
    const run = answered(p, [
      ['a', { tag: 'a1', gate }],
      ['a', { tag: 'a2' }],
      ['a', { tag: 'a3' }],
      ['b', { tag: 'b1' }],
      ['c', { tag: 'c1' }],
    ])
    open()
    await run.all
    expect(run.tags).toEqual(['a1', 'a2', 'b1', 'c1', 'a3'])
  })

  test('memoryBudget: jobs wait for bytes although workers are free, and start as the bytes free', async () => {
    const policy = memoryBudget<FixtureJob>({
      budget: 3,
      weigh: (j) => Number(j.tag.slice(1)),
      tooLarge: (j) => new AlmanacError('invalid', `${j.tag} is too large`),
    })
    const p = pool({ policy, size: 4 })
    const first = gated()
    const run = answered(p, [
      ['a', { tag: 'a2', gate: first.gate }],
      ['b', { tag: 'b2' }],
      ['c', { tag: 'c1' }],
    ])
    expect(p.stats()).toMatchObject({ running: 1, queued: 2, workers: 1 })
    expect(policy.inUse).toBe(2)
    expect((await failure(p.run({ tag: 'd4' }, 'd'))).detail).toBe('d4 is too large')
    first.open()
    await run.all
    expect(run.tags[0]).toBe('a2')
    expect(policy.inUse).toBe(0)
  })

  test('answers: a problem keeps its kind, detail and members; a failure is the user’s error and its text is logged', async () => {
    const p = pool()
    const problem = await failure(p.run({ tag: 'q', ending: 'problem' }))
    expect([problem.kind, problem.detail, problem.options.extra]).toEqual(['invalid', 'q: no', { tag: 'q' }])
    const bug = await failure(p.run({ tag: 'f', ending: 'fail' }))
    expect([bug.kind, bug.detail]).toEqual(['internal', 'f failed'])
    expect(logged.join('\n')).toContain('a bug, not a problem')
    expect(p.stats().completed).toBe(2)
  })

  test('a worker that dies answers its job `lost`, is replaced, and its caller’s place is free again', async () => {
    const p = pool({ perCaller: 1 })
    const before = await p.run({ tag: 'x' }, 'a')
    const lost = await failure(p.run({ tag: 'd', ending: 'die' }, 'a'))
    expect([lost.kind, lost.detail, lost.options.headers]).toEqual(['busy', 'd lost', { 'Retry-After': '2' }])
    const after = await p.run({ tag: 'y' }, 'a')
    expect(after.thread).not.toBe(before.thread)
    expect(p.stats()).toMatchObject({ died: 1, workers: 1 })
  })

  test('close answers the running and waiting jobs, then ends the workers; a job sent meanwhile is refused', async () => {
    const p = pool()
    const { gate, open } = gated()
    const run = answered(p, [
      ['a', { tag: 'a1', gate }],
      ['b', { tag: 'b1' }],
    ])
    const closing = p.close()
    expect((await failure(p.run({ tag: 'late' }))).detail).toBe('closed')
    expect(p.stats().workers).toBe(1)
    open()
    await Promise.all([run.all, closing])
    expect(run.tags).toEqual(['a1', 'b1'])
    expect(p.stats()).toMatchObject({ workers: 0, running: 0, queued: 0 })
  })

  test('stop fails the running and waiting jobs at once and ends the workers; a caller’s places are free', async () => {
    const p = pool({ perCaller: 2 })
    const { gate, open } = gated()
    const jobs = [p.run({ tag: 'a1', gate }, 'a'), p.run({ tag: 'a2' }, 'a')].map(failure)
    p.stop()
    open()
    expect((await Promise.all(jobs)).map((e) => e.detail)).toEqual(['closed', 'closed'])
    expect(p.stats()).toMatchObject({ workers: 0, running: 0, queued: 0 })
    expect((await failure(p.run({ tag: 'late' }, 'a'))).detail).toBe('closed')
  })
})
