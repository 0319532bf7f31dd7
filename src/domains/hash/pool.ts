/**
 * A fixed set of worker threads for the KDFs, with a bounded wait queue: when every worker is busy and the
 * queue is full, `run` fails at once with `busy` (503 + Retry-After) instead of letting work pile up.
 * Workers start on first use and are unref'd, so an idle pool costs nothing and never holds the process.
 */
import { existsSync, readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { AlmanacError, busy, unavailable } from '../../lib/errors.ts'
import type { KdfJob } from './kdf.ts'

const WORKER_FILE = /^kdf-worker\.[jt]s$/

/** Depth-first search for the worker module under `dir` (the compiled executable's embedded tree). */
function findWorker(dir: string, depth = 8): string | undefined {
  let entries: string[]
  try {
    entries = readdirSync(dir)
  } catch {
    return undefined
  }
  for (const e of entries) if (WORKER_FILE.test(e)) return join(dir, e)
  if (depth > 0)
    for (const e of entries) {
      const found = findWorker(join(dir, e), depth - 1)
      if (found) return found
    }
  return undefined
}

/**
 * Where the worker module is. From source it sits next to this file. Inside `bun build --compile` this
 * module is bundled into the main chunk, so `import.meta.url` points at the executable, while the worker
 * entry point keeps its own path (e.g. `/$bunfs/root/src/domains/hash/kdf-worker.js`) under the same root.
 */
export function workerUrl(): string {
  const beside = new URL('./kdf-worker.ts', import.meta.url)
  if (beside.protocol === 'file:' && existsSync(fileURLToPath(beside))) return beside.href
  const embedded = findWorker(dirname(Bun.main))
  if (embedded) return embedded
  throw new Error('the hashing worker module kdf-worker.ts is missing (a compiled build must list it as an entry point)')
}

interface Pending {
  id: number
  job: KdfJob
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
}

export interface KdfPool {
  /** Runs a job for `owner` (a caller), who may hold at most `perOwner` jobs running or waiting at once. */
  run(job: KdfJob, owner?: string): Promise<string>
  stats(): PoolStats
  close(): Promise<void>
}

/** Logs what a worker reported; the caller gets a problem that says nothing of it (library text is not for clients). */
const logFailure = (algorithm: string, message: string) =>
  console.error(JSON.stringify({ level: 'error', msg: `${algorithm} worker failed`, error: message }))

export function createKdfPool({
  size,
  queueSize,
  perOwner = Infinity,
  url = workerUrl(),
}: {
  size: number
  queueSize: number
  perOwner?: number
  url?: string
}): KdfPool {
  const slots: Slot[] = []
  const queue: Pending[] = []
  /** Jobs running or waiting, by owner; an owner is removed at zero, so the map holds only active callers. */
  const held = new Map<string, number>()
  let nextId = 1
  let closed = false

  const spawn = (): Slot => {
    const slot: Slot = { worker: new Worker(url) }
    slot.worker.unref()
    slot.worker.onmessage = (event: MessageEvent<{ id: number; hash?: string; error?: string }>) => {
      const job = slot.current
      if (!job || job.id !== event.data.id) return
      slot.current = undefined
      if (event.data.error !== undefined) {
        logFailure(job.job.algorithm, event.data.error)
        job.reject(new AlmanacError('internal', `${job.job.algorithm} failed.`))
      } else job.resolve(event.data.hash!)
      next(slot)
    }
    // A worker that dies (out of memory, a crash) fails its job and is replaced; the pool keeps serving.
    slot.worker.onerror = (event: ErrorEvent) => {
      event.preventDefault?.()
      const job = slot.current
      slot.current = undefined
      slot.worker.terminate()
      const i = slots.indexOf(slot)
      if (i >= 0) slots.splice(i, 1)
      if (job) {
        logFailure(job.job.algorithm, event.message)
        job.reject(new AlmanacError('internal', `${job.job.algorithm} failed.`))
      }
      if (!closed && queue.length) dispatch(queue.shift()!)
    }
    slots.push(slot)
    return slot
  }

  const start = (slot: Slot, job: Pending) => {
    slot.current = job
    slot.worker.postMessage({ id: job.id, job: job.job })
  }

  const next = (slot: Slot) => {
    const job = queue.shift()
    if (job && !closed) start(slot, job)
  }

  /** Gives the job to an idle worker (starting one if the pool is not full yet); false when all are busy. */
  const dispatch = (job: Pending): boolean => {
    const idle = slots.find((s) => !s.current) ?? (slots.length < size ? spawn() : undefined)
    if (!idle) return false
    start(idle, job)
    return true
  }

  return {
    run(job, owner) {
      if (closed) return Promise.reject(unavailable('The hashing workers are shutting down.'))
      const mine = owner === undefined ? 0 : (held.get(owner) ?? 0)
      if (mine >= perOwner)
        return Promise.reject(
          busy(
            `You already have ${mine} password hash${mine === 1 ? '' : 'es'} running or waiting, the most one caller may (hash.jobsPerCaller); send the next when one finishes.`,
            1,
          ),
        )
      const running = new Promise<string>((resolve, reject) => {
        const pending: Pending = { id: nextId++, job, resolve, reject }
        if (dispatch(pending)) return
        if (queue.length >= queueSize) {
          reject(
            busy(
              `All ${size} hashing worker${size > 1 ? 's are' : ' is'} busy and ${queue.length} job${queue.length === 1 ? ' is' : 's are'} waiting (the queue holds ${queueSize}); try again shortly.`,
              1,
            ),
          )
          return
        }
        queue.push(pending)
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
    stats: () => ({ size, busy: slots.filter((s) => s.current).length, queued: queue.length, queueSize }),
    async close() {
      closed = true
      for (const job of queue.splice(0)) job.reject(unavailable('The hashing workers are shutting down.'))
      for (const slot of slots.splice(0)) {
        slot.current?.reject(unavailable('The hashing workers are shutting down.'))
        slot.worker.terminate()
      }
    },
  }
}
