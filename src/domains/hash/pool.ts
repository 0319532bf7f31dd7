/**
 * A fixed set of worker threads for the KDFs under a memory budget, with a bounded wait queue: a job waits
 * for a free worker and for its memory; when the queue is full, `run` fails at once with `busy`
 * (503 + Retry-After) instead of letting work pile up.
 * Workers start on first use and are unref'd, so an idle pool costs nothing and never holds the process.
 */
import { plural } from '../../lib/plural.ts'
import { AlmanacError, busy, unavailable } from '../../lib/errors.ts'
import { workerUrl as libWorkerUrl } from '../../lib/threads.ts'
import { jobMemory } from './budget.ts'
import type { KdfJob } from './kdf.ts'
import { createLogger, type Logger } from '../../lib/logger.ts'

/** Where the KDF worker module is, from source or inside the compiled executable (lib/threads.ts). */
export const workerUrl = () => libWorkerUrl(new URL('./kdf-worker.ts', import.meta.url), 'hash/kdf-worker')

interface Pending {
  id: number
  job: KdfJob
  /** The caller the job counts against ('' when none was given). */
  owner: string
  /** Bytes the job allocates while it runs (`jobMemory`). */
  memory: number
  resolve(hash: string): void
  reject(error: Error): void
}

interface Slot {
  worker: Worker
  current?: Pending
}

export interface PoolStats {
  size: number
  busy: number
  queued: number
  queueSize: number
  /** Bytes the running jobs allocate, never more than `memoryBudget`. */
  memoryInUse: number
  memoryBudget: number
}

export interface KdfPool {
  /** Runs a job for `owner` (a caller), who may hold at most `perOwner` jobs running or waiting at once. */
  run(job: KdfJob, owner?: string): Promise<string>
  stats(): PoolStats
  close(): Promise<void>
}

export interface KdfPoolOptions {
  size: number
  queueSize: number
  perOwner?: number
  /** Bytes all running jobs together may allocate (see budget.ts). */
  memoryBudget?: number
  /** Bytes one owner's running jobs may allocate; also the largest job the pool accepts. */
  memoryPerOwner?: number
  url?: string
  /** The domain's logger (`open`'s context); a pool made on its own (tests, benches) logs to stderr. */
  log?: Logger
}

/**
 * A job starts when a worker is free and its memory fits both the pool's budget and its owner's share of it.
 * The queue is served first come, first served, with one exception: a job held back by its own owner's share
 * is passed by other owners' jobs behind it (that owner's running jobs will make room), never by its owner's;
 * a job held back by the budget is passed by nobody, so a large job is never starved by a stream of small ones.
 */
export function createKdfPool({
  size,
  queueSize,
  perOwner = Infinity,
  memoryBudget = Infinity,
  memoryPerOwner = memoryBudget,
  url = workerUrl(),
  log = createLogger(),
}: KdfPoolOptions): KdfPool {
  const slots: Slot[] = []
  const queue: Pending[] = []
  /** Jobs running or waiting, by owner; an owner is removed at zero, so the map holds only active callers. */
  const held = new Map<string, number>()
  /** Bytes of running jobs, in all and by owner (removed at zero). */
  let memoryInUse = 0
  const ownerMemory = new Map<string, number>()
  const largestJob = Math.min(memoryBudget, memoryPerOwner)
  let nextId = 1
  let closed = false
  /** Logs what a worker reported; the caller gets a problem that says nothing of it (library text is not for clients). */
  const logFailure = (algorithm: string, message: string) => log.error(`${algorithm} worker failed`, { error: message })

  const account = (job: Pending, sign: 1 | -1) => {
    memoryInUse += sign * job.memory
    const mine = (ownerMemory.get(job.owner) ?? 0) + sign * job.memory
    if (mine > 0) ownerMemory.set(job.owner, mine)
    else ownerMemory.delete(job.owner)
  }

  /** The job the slot was running is over: its memory is free again. */
  const finish = (slot: Slot): Pending | undefined => {
    const job = slot.current
    slot.current = undefined
    if (job) account(job, -1)
    return job
  }

  const spawn = (): Slot => {
    const slot: Slot = { worker: new Worker(url) }
    slot.worker.unref()
    slot.worker.onmessage = (event: MessageEvent<{ id: number; hash?: string; error?: string }>) => {
      if (!slot.current || slot.current.id !== event.data.id) return
      const job = finish(slot)!
      if (event.data.error !== undefined) {
        logFailure(job.job.algorithm, event.data.error)
        job.reject(new AlmanacError('internal', `${job.job.algorithm} failed.`))
      } else job.resolve(event.data.hash!)
      pump()
    }
    // A worker that dies (out of memory, a crash) fails its job and is replaced; the pool keeps serving.
    slot.worker.onerror = (event: ErrorEvent) => {
      event.preventDefault?.()
      const job = finish(slot)
      slot.worker.terminate()
      const i = slots.indexOf(slot)
      if (i >= 0) slots.splice(i, 1)
      if (job) {
        logFailure(job.job.algorithm, event.message)
        job.reject(new AlmanacError('internal', `${job.job.algorithm} failed.`))
      }
      pump()
    }
    slots.push(slot)
    return slot
  }

  const idleSlot = () => slots.find((s) => !s.current) ?? (slots.length < size ? spawn() : undefined)

  /** Starts every waiting job that may start now, in queue order (see above for who may pass whom). */
  const pump = () => {
    /** Owners with a job held back by their share in this pass: their later jobs keep behind it. */
    const heldBack = new Set<string>()
    for (let i = 0; !closed && i < queue.length; ) {
      const job = queue[i]!
      if (heldBack.has(job.owner) || (ownerMemory.get(job.owner) ?? 0) + job.memory > memoryPerOwner) {
        heldBack.add(job.owner)
        i++
        continue
      }
      if (memoryInUse + job.memory > memoryBudget) return
      const slot = idleSlot()
      if (!slot) return
      queue.splice(i, 1)
      account(job, 1)
      slot.current = job
      slot.worker.postMessage({ id: job.id, job: job.job })
    }
  }

  return {
    run(job, owner) {
      if (closed) return Promise.reject(unavailable('The hashing workers are shutting down.'))
      const memory = jobMemory(job)
      // The service refuses these with a 422 naming the parameter; here it guards the queue, which a job that
      // could never start would block forever.
      if (memory > largestJob)
        return Promise.reject(
          new AlmanacError('invalid', `${job.algorithm} needs ${memory} bytes; one hashing job may use at most ${largestJob}.`),
        )
      const mine = owner === undefined ? 0 : (held.get(owner) ?? 0)
      if (mine >= perOwner)
        return Promise.reject(
          busy(
            `You already have ${mine} password hash${mine === 1 ? '' : 'es'} running or waiting, the most one caller may ` +
              `(hash.jobsPerCaller); send the next when one finishes.`,
            1,
          ),
        )
      const running = new Promise<string>((resolve, reject) => {
        const pending: Pending = { id: nextId++, job, owner: owner ?? '', memory, resolve, reject }
        queue.push(pending)
        pump()
        if (queue.at(-1) !== pending || queue.length <= queueSize) return
        queue.pop()
        reject(
          busy(
            `All ${plural(size, 'hashing worker is', 'hashing workers are')} busy or hashing memory is taken (${memoryInUse} ` +
              `of ${memoryBudget} bytes in use), and ${plural(queue.length, 'job is', 'jobs are')} waiting (the queue ` +
              `holds ${queueSize}); try again shortly.`,
            1,
          ),
        )
      })
      if (owner === undefined) return running
      held.set(owner, mine + 1)
      const release = () => {
        const left = held.get(owner)! - 1
        if (left) held.set(owner, left)
        else held.delete(owner)
      }
      running.then(release, release)
      return running
    },
    stats: () => ({ size, busy: slots.filter((s) => s.current).length, queued: queue.length, queueSize, memoryInUse, memoryBudget }),
    async close() {
      closed = true
      for (const job of queue.splice(0)) job.reject(unavailable('The hashing workers are shutting down.'))
      for (const slot of slots.splice(0)) {
        finish(slot)?.reject(unavailable('The hashing workers are shutting down.'))
        slot.worker.terminate()
      }
    },
  }
}

/** The pool's state for /metrics: jobs by state, and hashing memory in use against the budget. */
export const poolMetrics = (s: PoolStats) =>
  [
    '# HELP almanac_hash_jobs Password hash jobs running on a worker or waiting in the queue.',
    '# TYPE almanac_hash_jobs gauge',
    `almanac_hash_jobs{state="running"} ${s.busy}`,
    `almanac_hash_jobs{state="queued"} ${s.queued}`,
    '# HELP almanac_hash_memory_bytes Bytes the running password hashes allocate (scrypt 128·r·(n+2+p), argon2id memory_cost KiB).',
    '# TYPE almanac_hash_memory_bytes gauge',
    `almanac_hash_memory_bytes ${s.memoryInUse}`,
    '# HELP almanac_hash_memory_budget_bytes What running password hashes may allocate together (hash.memoryBudgetBytes).',
    '# TYPE almanac_hash_memory_budget_bytes gauge',
    `almanac_hash_memory_budget_bytes ${s.memoryBudget}`,
  ].join('\n') + '\n'
