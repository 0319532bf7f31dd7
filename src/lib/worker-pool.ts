/**
 * A pool of worker threads for work too costly for the event loop, shared by callers so that no one
 * caller holds it: a caller may have `perCaller` jobs running or waiting (caller-slots.ts), and `queueSize`
 * jobs may wait in all; past either, `run` fails at once (the user's words, usually `busy`: 503 +
 * Retry-After) instead of work piling up. Which waiting job starts next is the policy's to say
 * (scheduling.ts). A worker runs one job at a time, answered as worker-thread.ts posts it; a worker that
 * dies is replaced and its job answered with the user's `lost` error.
 * `close` takes no new job and ends the workers once their jobs are answered (a data swap closes the old
 * generation's domains when its last request has finished); `stop` fails every job and ends them now.
 * Workers start on first use and are unref'd: an idle pool costs nothing and never holds the process.
 */
import { callerSlots } from './caller-slots.ts'
import { AlmanacError } from './errors.ts'
import type { Logger } from './logger.ts'
import type { Scheduled, SchedulingPolicy } from './scheduling.ts'
import type { JobReply } from './worker-thread.ts'

export interface WorkerPoolStats {
  size: number
  /** Worker threads alive now (they start on first use, end at close). */
  workers: number
  running: number
  queued: number
  queueSize: number
  /** Jobs a worker answered (a value, a problem or a failure), since the pool was made. */
  completed: number
  /** Jobs refused because the queue was full or the caller at its cap. */
  refused: number
  /** Workers that died with a job (each replaced, its job answered `lost`). */
  died: number
}

/** The errors a pool answers with, in its user's words (what the work is, which setting bounds it). */
export interface PoolErrors<J> {
  /** For a job sent after `close` or `stop`, and for every job `stop` cuts short. */
  closed(): Error
  /** The caller has `held` jobs running or waiting, its cap. */
  callerAtCap(held: number): Error
  /** Every worker is busy and `queued` jobs wait (the refused one aside), the queue's size. */
  queueFull(queued: number): Error
  /** The worker threw something other than a problem (its text is logged, not sent). */
  failed(job: J): Error
  /** The worker running the job died. */
  lost(job: J): Error
}

export interface WorkerPoolOptions<J> {
  /** The worker module (see threads.ts `workerUrl`). */
  url: string
  /** Sent to each new worker before its first job (e.g. the database it opens). */
  init?: unknown
  /** Worker threads. */
  size: number
  /** Jobs that may wait for a worker. */
  queueSize: number
  /** Jobs one caller may have running or waiting; jobs without a caller are not counted. */
  perCaller?: number
  policy: SchedulingPolicy<J>
  errors: PoolErrors<J>
  log: Logger
  /** The work a job is, for log lines (`Bible search worker failed`); undefined for a worker that died idle. */
  describe(job: J | undefined): string
  /** Fields every log line of the pool carries (e.g. its domain). */
  logFields?: Record<string, unknown>
}

export interface WorkerPool<J, R> {
  run(job: J, caller?: string): Promise<R>
  stats(): WorkerPoolStats
  /** Takes no new job; resolves when every waiting and running job is answered and every worker has ended. */
  close(): Promise<void>
  /** Takes no new job, fails every waiting and running one with `closed`, and ends the workers now. */
  stop(): void
}

interface Pending<J> extends Scheduled<J> {
  resolve(value: unknown): void
  reject(error: Error): void
}

interface Slot<J> {
  worker: Worker
  current?: Pending<J>
  /** The pool ended this worker (close, stop, or after it failed): its close event is not a death. */
  ending?: boolean
}

type Outcome = { value: unknown } | { error: Error }

export function createWorkerPool<J, R = unknown>(options: WorkerPoolOptions<J>): WorkerPool<J, R> {
  const { url, init, size, queueSize, policy, errors, log, describe, logFields } = options
  const slots: Slot<J>[] = []
  const jobs = callerSlots(Infinity, options.perCaller ?? Infinity)
  const counts = { completed: 0, refused: 0, died: 0 }
  let nextId = 1
  let closed = false
  let closing: Promise<void> | undefined
  let drained: (() => void) | undefined

  const logError = (job: Pending<J> | undefined, what: string, error: string) =>
    log.error(`${describe(job?.job)} worker ${what}`, { ...logFields, error })

  const settle = (job: Pending<J>, outcome: Outcome) => {
    if (job.caller !== undefined) jobs.release(job.caller)
    if ('error' in outcome) job.reject(outcome.error)
    else job.resolve(outcome.value)
  }

  /** Takes the slot's job off it: what the job held is free. */
  const vacate = (slot: Slot<J>) => {
    const job = slot.current
    slot.current = undefined
    if (job) policy.done?.(job)
    return job
  }

  const end = (slot: Slot<J>) => {
    slot.ending = true
    slot.worker.terminate()
    const i = slots.indexOf(slot)
    if (i >= 0) slots.splice(i, 1)
  }

  const running = () => slots.filter((s) => s.current).length

  /** Closing and nothing is left: end the idle workers and tell `close`. */
  const finishClose = () => {
    if (!closing || policy.waiting || running()) return
    for (const slot of [...slots]) end(slot)
    drained?.()
  }

  const outcomeOf = (job: Pending<J>, reply: JobReply): Outcome => {
    if ('value' in reply) return { value: reply.value }
    if ('problem' in reply) return { error: new AlmanacError(reply.problem.kind, reply.problem.detail, reply.problem.options) }
    logError(job, 'failed', reply.failure)
    return { error: errors.failed(job.job) }
  }

  const died = (slot: Slot<J>, why: string) => {
    if (slot.ending) return
    end(slot)
    const job = vacate(slot)
    logError(job, 'died', why)
    if (job) {
      counts.died++
      settle(job, { error: errors.lost(job.job) })
    }
    pump()
  }

  const spawn = () => {
    const slot: Slot<J> = { worker: new Worker(url) }
    slot.worker.unref()
    if (init !== undefined) slot.worker.postMessage(init)
    slot.worker.onmessage = (event: MessageEvent<JobReply>) => {
      const job = slot.current
      if (!job || job.id !== event.data.id) return
      vacate(slot)
      counts.completed++
      settle(job, outcomeOf(job, event.data))
      pump()
    }
    slot.worker.onerror = (event: ErrorEvent) => {
      event.preventDefault?.()
      died(slot, event.message)
    }
    // A worker that exits (process.exit, out of memory) without an error event.
    slot.worker.addEventListener('close', () => died(slot, 'the worker exited'))
    slots.push(slot)
    return slot
  }

  /** Starts what the policy lets start while a worker is free or may be started. */
  const pump = () => {
    while (policy.waiting && (slots.length < size || slots.some((s) => !s.current))) {
      const job = policy.next() as Pending<J> | undefined
      if (!job) break
      const slot = slots.find((s) => !s.current) ?? spawn()
      slot.current = job
      slot.worker.postMessage({ id: job.id, job: job.job })
    }
    finishClose()
  }

  return {
    run(job, caller) {
      if (closed) return Promise.reject(errors.closed())
      const pending = { id: nextId++, job, caller } as Pending<J>
      const unfit = policy.admit?.(pending)
      if (unfit) return Promise.reject(unfit)
      if (caller !== undefined && !jobs.take(caller)) {
        counts.refused++
        return Promise.reject(errors.callerAtCap(jobs.held(caller)))
      }
      return new Promise<R>((resolve, reject) => {
        Object.assign(pending, { resolve, reject })
        policy.add(pending)
        pump()
        // Asked after the pump, so the policy decides whether the job would wait at all.
        if (slots.some((s) => s.current === pending) || policy.waiting <= queueSize) return
        policy.remove(pending)
        counts.refused++
        settle(pending, { error: errors.queueFull(policy.waiting) })
      })
    },
    stats: () => ({ size, workers: slots.length, running: running(), queued: policy.waiting, queueSize, ...counts }),
    close() {
      closed = true
      closing ??= new Promise<void>((resolve) => (drained = resolve))
      finishClose()
      return closing
    },
    stop() {
      closed = true
      for (const job of policy.clear()) settle(job as Pending<J>, { error: errors.closed() })
      for (const slot of [...slots]) {
        end(slot)
        const job = vacate(slot)
        if (job) settle(job, { error: errors.closed() })
      }
    },
  }
}
