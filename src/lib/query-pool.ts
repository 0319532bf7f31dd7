/**
 * A pool of query worker threads for one domain: each thread opens the domain's read-only database
 * itself (query-thread.ts) and runs the queries too costly for the event loop, so one caller's heavy
 * search never holds everyone else's cheap lookups. A bounded FIFO queue with a per-caller cap: a full
 * queue, or a caller with `perCaller` jobs running or waiting, is a `busy` (503 + Retry-After, whose
 * credit the HTTP layer gives back) at once instead of work piling up. A worker that dies is replaced and
 * its job answered `busy`. `close` takes no new job and ends the workers once their jobs are done (a data
 * swap closes the old generation's domains when its last request has finished).
 * Workers start on first use and are unref'd: an idle pool costs nothing and never holds the process.
 * No domain knowledge here: a job is a method name and its arguments, answered by the worker module.
 */
import { plural } from './plural.ts'
import { availableParallelism } from 'node:os'
import { AlmanacError, busy, unavailable, type ErrorKind } from './errors.ts'
import { logger } from './logger.ts'

/** Worker threads of a pool: `configured`, or one fewer than the cores (at least one), so the event loop keeps a core. */
export const poolSize = (configured: number) => configured || Math.max(1, availableParallelism() - 1)

/** Thrown by a query run inline that is too costly for the event loop: `inlineOr` runs it on the pool. */
export class NotInline extends Error {
  constructor() {
    super('too costly to run on the event loop')
    this.name = 'NotInline'
  }
}

/**
 * The answer of `inline()`, or, when that throws `NotInline`, the promise of `pooled()`. A query answered
 * inline stays synchronous: cheap queries pay no message round trip and no extra turn of the loop.
 */
export function inlineOr<T>(inline: () => T, pooled: () => Promise<T>): T | Promise<T> {
  try {
    return inline()
  } catch (e) {
    if (e instanceof NotInline) return pooled()
    throw e
  }
}

/** What a worker posts back (query-thread.ts). */
export type QueryReply =
  | { id: number; value: unknown }
  | { id: number; error: { kind: ErrorKind; detail: string; options: AlmanacError['options'] } }
  | { id: number; failure: string }

interface Job {
  id: number
  method: string
  args: unknown[]
  caller: string | undefined
  resolve(value: unknown): void
  reject(error: Error): void
}

interface Slot {
  worker: Worker
  current?: Job
  /** The pool ended this worker (close, or after it failed): its close event is not a death. */
  ending?: boolean
}

export interface QueryPoolStats {
  size: number
  /** Worker threads alive now (they start on first use, end at close). */
  workers: number
  running: number
  queued: number
  queueSize: number
  /** Jobs a worker answered (a value or a problem), since the pool was made. */
  completed: number
  /** Jobs refused because the queue was full or the caller at its cap. */
  refused: number
  /** Workers that died with a job (each replaced, its job answered 503). */
  died: number
}

export interface QueryPool {
  /** Runs `method(...args)` on a worker for `caller`, who may hold at most `perCaller` jobs running or waiting. */
  run<T>(method: string, args: unknown[], caller?: string): Promise<T>
  stats(): QueryPoolStats
  /**
   * Holds every worker before its next job until the returned release is called (jobs already running
   * finish): the queue then fills as it would behind slow jobs. For tests of the queue and of close.
   */
  hold(): () => void
  /** Takes no new job; resolves when every queued and running job is answered and every worker has ended. */
  close(): Promise<void>
}

export interface QueryPoolOptions {
  /** The worker module (see lib/threads.ts `workerUrl`). */
  url: string
  /** What the worker opens, sent as its first message (e.g. the database path and the budget). */
  init: unknown
  /** Worker threads. */
  size: number
  /** Jobs that may wait for a worker. */
  queueSize: number
  /** Jobs one caller may have running or waiting. */
  perCaller: number
  /** What the workers run, for problems and logs (`Bible search`). */
  what: string
}

/** The `queries.*` settings (config.ts) every domain's pool is sized by. */
export interface QuerySettings {
  workers: number
  queueSize: number
  jobsPerCaller: number
}

/**
 * A domain's read-only database with its query pool: the pool sized by the `queries.*` settings, and one
 * `close` that ends the workers once their jobs are answered, then releases the main connection.
 */
export function pooledDatabase<D extends { close(): void }>(
  db: D,
  settings: QuerySettings,
  worker: { url: string; init: unknown; what: string },
): { pool: QueryPool; close(): Promise<void> } {
  const pool = createQueryPool({
    ...worker,
    size: poolSize(settings.workers),
    queueSize: settings.queueSize,
    perCaller: settings.jobsPerCaller,
  })
  return {
    pool,
    close: async () => {
      await pool.close()
      db.close()
    },
  }
}

/** Seconds a refused caller is asked to wait: queued jobs are tens of milliseconds each. */
const RETRY_SECONDS = 1

export function createQueryPool({ url, init, size, queueSize, perCaller, what }: QueryPoolOptions): QueryPool {
  const slots: Slot[] = []
  const queue: Job[] = []
  /** Jobs running or waiting by caller; a caller is removed at zero. */
  const held = new Map<string, number>()
  /** 1 while `hold()` is in force: workers wait on it before each job (query-thread.ts). */
  const gate = new Int32Array(new SharedArrayBuffer(4))
  let nextId = 1
  let closed = false
  let drained: (() => void) | undefined
  let closing: Promise<void> | undefined
  const counts = { completed: 0, refused: 0, died: 0 }

  const release = (job: Job) => {
    if (job.caller === undefined) return
    const left = held.get(job.caller)! - 1
    if (left) held.set(job.caller, left)
    else held.delete(job.caller)
  }

  const settle = (job: Job, outcome: { value: unknown } | { error: Error }) => {
    release(job)
    if ('error' in outcome) job.reject(outcome.error)
    else job.resolve(outcome.value)
  }

  const end = (slot: Slot) => {
    slot.ending = true
    slot.worker.terminate()
    const i = slots.indexOf(slot)
    if (i >= 0) slots.splice(i, 1)
  }

  /** The pool is closed and nothing is left: end the idle workers and tell `close`. */
  const finishClose = () => {
    if (!closed || queue.length || slots.some((s) => s.current)) return
    for (const slot of [...slots]) end(slot)
    drained?.()
  }

  const spawn = (): Slot => {
    const slot: Slot = { worker: new Worker(url) }
    slot.worker.unref()
    slot.worker.postMessage({ init, gate })
    slot.worker.onmessage = (event: MessageEvent<QueryReply>) => {
      const job = slot.current
      if (!job || job.id !== event.data.id) return
      slot.current = undefined
      counts.completed++
      const reply = event.data
      if ('value' in reply) settle(job, { value: reply.value })
      else if ('error' in reply) settle(job, { error: new AlmanacError(reply.error.kind, reply.error.detail, reply.error.options) })
      else {
        log(`${what} worker failed`, reply.failure)
        settle(job, { error: new AlmanacError('internal', `${what} failed.`) })
      }
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

  /** A worker died: its job is answered 503 (the caller may retry), and the next job gets a new worker. */
  const died = (slot: Slot, why: string) => {
    if (slot.ending) return
    end(slot)
    const job = slot.current
    slot.current = undefined
    log(`${what} worker died`, why)
    if (job) {
      counts.died++
      settle(job, { error: busy(`The ${what} worker running this request stopped; try again.`, RETRY_SECONDS) })
    }
    pump()
  }

  const pump = () => {
    while (queue.length) {
      const slot = slots.find((s) => !s.current) ?? (slots.length < size ? spawn() : undefined)
      if (!slot) return
      const job = queue.shift()!
      slot.current = job
      slot.worker.postMessage({ id: job.id, method: job.method, args: job.args })
    }
    finishClose()
  }

  return {
    run<T>(method: string, args: unknown[], caller?: string): Promise<T> {
      if (closed) return Promise.reject(unavailable(`The ${what} workers are shutting down; try again.`))
      const mine = caller === undefined ? 0 : (held.get(caller) ?? 0)
      if (mine >= perCaller) {
        counts.refused++
        return Promise.reject(
          busy(
            `You already have ${plural(mine, `${what} request`, `${what} requests`)} running or waiting, the most one caller may ` +
              `(queries.jobsPerCaller); send the next when one finishes.`,
            RETRY_SECONDS,
          ),
        )
      }
      const running = slots.filter((s) => s.current).length
      if (running >= size && queue.length >= queueSize) {
        counts.refused++
        return Promise.reject(
          busy(
            `All ${plural(size, `${what} worker is`, `${what} workers are`)} busy and ${plural(queue.length, 'job is', 'jobs are')} ` +
              `waiting (the queue holds ${queueSize}); try again shortly.`,
            RETRY_SECONDS,
          ),
        )
      }
      if (caller !== undefined) held.set(caller, mine + 1)
      return new Promise<T>((resolve, reject) => {
        queue.push({ id: nextId++, method, args, caller, resolve: resolve as (v: unknown) => void, reject })
        pump()
      })
    },
    stats: () => ({
      size,
      workers: slots.length,
      running: slots.filter((s) => s.current).length,
      queued: queue.length,
      queueSize,
      ...counts,
    }),
    hold() {
      Atomics.store(gate, 0, 1)
      return () => {
        Atomics.store(gate, 0, 0)
        Atomics.notify(gate, 0)
      }
    },
    close() {
      if (closing) return closing
      closed = true
      closing = new Promise<void>((resolve) => (drained = resolve))
      finishClose()
      return closing
    },
  }
}

const log = (msg: string, error: string) => logger.error(msg, { error })

/** A pool's state for /metrics, as `almanac_<domain>_query_jobs…` (one metric family per pool). */
export function queryPoolMetrics(domain: string, s: QueryPoolStats): string {
  const name = `almanac_${domain}_query_jobs`
  return (
    [
      `# HELP ${name} Heavy ${domain} queries running on a query worker or waiting in its queue.`,
      `# TYPE ${name} gauge`,
      `${name}{state="running"} ${s.running}`,
      `${name}{state="queued"} ${s.queued}`,
      `# HELP ${name}_total Heavy ${domain} queries answered by a query worker, refused (503: queue full or caller at its cap), or lost ` +
        `with a worker that died (503).`,
      `# TYPE ${name}_total counter`,
      `${name}_total{outcome="completed"} ${s.completed}`,
      `${name}_total{outcome="refused"} ${s.refused}`,
      `${name}_total{outcome="died"} ${s.died}`,
    ].join('\n') + '\n'
  )
}
