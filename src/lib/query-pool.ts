/**
 * A pool of query worker threads for one domain: each thread opens the domain's read-only database
 * itself (query-thread.ts) and runs the queries too costly for the event loop, so one caller's heavy
 * search never holds everyone else's cheap lookups. A worker pool (worker-pool.ts) served first come,
 * first served, with a per-caller cap: a full queue, or a caller with `perCaller` jobs running or
 * waiting, is a `busy` (503 + Retry-After, whose credit the HTTP layer gives back) at once. A worker that
 * dies is replaced and its job answered `busy` too, as the caller may simply retry. `close` ends the
 * workers once their jobs are answered (a data swap closes the old generation's domains when its last
 * request has finished). No domain knowledge here: a job is a method name and its arguments, answered by
 * the worker module.
 */
import { plural } from './plural.ts'
import { availableParallelism } from 'node:os'
import { AlmanacError, busy, unavailable } from './errors.ts'
import { logger } from './logger.ts'
import type { QueryJob } from './query-thread.ts'
import { fifo } from './scheduling.ts'
import { createWorkerPool, type WorkerPoolStats } from './worker-pool.ts'

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

/** A query pool's state: the worker pool's (worker-pool.ts). */
export type QueryPoolStats = WorkerPoolStats

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
  /** 1 while `hold()` is in force: workers wait on it before each job (query-thread.ts). */
  const gate = new Int32Array(new SharedArrayBuffer(4))
  const pool = createWorkerPool<QueryJob>({
    url,
    init: { init, gate },
    size,
    queueSize,
    perCaller,
    policy: fifo(),
    log: logger,
    describe: () => what,
    errors: {
      closed: () => unavailable(`The ${what} workers are shutting down; try again.`),
      callerAtCap: (held) =>
        busy(
          `You already have ${plural(held, `${what} request`, `${what} requests`)} running or waiting, the most one caller may ` +
            `(queries.jobsPerCaller); send the next when one finishes.`,
          RETRY_SECONDS,
        ),
      queueFull: (queued) =>
        busy(
          `All ${plural(size, `${what} worker is`, `${what} workers are`)} busy and ${plural(queued, 'job is', 'jobs are')} ` +
            `waiting (the queue holds ${queueSize}); try again shortly.`,
          RETRY_SECONDS,
        ),
      failed: () => new AlmanacError('internal', `${what} failed.`),
      lost: () => busy(`The ${what} worker running this request stopped; try again.`, RETRY_SECONDS),
    },
  })
  return {
    run: <T>(method: string, args: unknown[], caller?: string) => pool.run({ method, args }, caller) as Promise<T>,
    stats: pool.stats,
    hold() {
      Atomics.store(gate, 0, 1)
      return () => {
        Atomics.store(gate, 0, 0)
        Atomics.notify(gate, 0)
      }
    },
    close: pool.close,
  }
}

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
