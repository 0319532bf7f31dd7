/**
 * The KDF jobs' worker pool (lib/worker-pool.ts) under the hashing memory budget (budget.ts): a job waits
 * for a free worker and for its memory, one caller holding at most its share (lib/scheduling.ts
 * `memoryBudget` says who may pass whom); when the queue is full, `run` fails at once with `busy`
 * (503 + Retry-After) instead of letting work pile up.
 */
import { plural } from '../../lib/plural.ts'
import { AlmanacError, busy, unavailable } from '../../lib/errors.ts'
import { memoryBudget as memoryBudgetPolicy } from '../../lib/scheduling.ts'
import { workerUrl as libWorkerUrl } from '../../lib/threads.ts'
import { createWorkerPool } from '../../lib/worker-pool.ts'
import { jobMemory } from './budget.ts'
import type { KdfJob } from './kdf.ts'
import { createLogger, type Logger } from '../../lib/logger.ts'

/** Where the KDF worker module is, from source or inside the compiled executable (lib/threads.ts). */
export const workerUrl = () => libWorkerUrl(new URL('./kdf-worker.ts', import.meta.url), 'hash/kdf-worker')

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

export function createKdfPool({
  size,
  queueSize,
  perOwner = Infinity,
  memoryBudget = Infinity,
  memoryPerOwner = memoryBudget,
  url = workerUrl(),
  log = createLogger(),
}: KdfPoolOptions): KdfPool {
  const memory = memoryBudgetPolicy<KdfJob>({
    budget: memoryBudget,
    perCaller: memoryPerOwner,
    weigh: jobMemory,
    // The service refuses these with a 422 naming the parameter; here it guards the queue.
    tooLarge: (job, bytes, largest) =>
      new AlmanacError('invalid', `${job.algorithm} needs ${bytes} bytes; one hashing job may use at most ${largest}.`),
  })
  const pool = createWorkerPool<KdfJob, string>({
    url,
    size,
    queueSize,
    perCaller: perOwner,
    policy: memory,
    log,
    describe: (job) => job?.algorithm ?? 'hashing',
    errors: {
      closed: () => unavailable('The hashing workers are shutting down.'),
      callerAtCap: (held) =>
        busy(
          `You already have ${held} password hash${held === 1 ? '' : 'es'} running or waiting, the most one caller may ` +
            `(hash.jobsPerCaller); send the next when one finishes.`,
          1,
        ),
      queueFull: (queued) =>
        busy(
          `All ${plural(size, 'hashing worker is', 'hashing workers are')} busy or hashing memory is taken (${memory.inUse} ` +
            `of ${memoryBudget} bytes in use), and ${plural(queued, 'job is', 'jobs are')} waiting (the queue ` +
            `holds ${queueSize}); try again shortly.`,
          1,
        ),
      // Library text is not for clients: it is in the log.
      failed: (job) => new AlmanacError('internal', `${job.algorithm} failed.`),
      lost: (job) => new AlmanacError('internal', `${job.algorithm} failed.`),
    },
  })
  return {
    run: (job, owner) => pool.run(job, owner),
    stats: () => {
      const s = pool.stats()
      return { size, busy: s.running, queued: s.queued, queueSize, memoryInUse: memory.inUse, memoryBudget }
    },
    close: async () => pool.stop(),
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
