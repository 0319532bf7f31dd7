/**
 * The render workers for large QR images (`image.ts` decides which), so a version-40 symbol or a 2000 px
 * PNG never holds the event loop: a worker pool (lib/worker-pool.ts) served round robin across callers, so
 * one caller's stream of large images delays another caller's by at most one job per worker. A caller may
 * have PER_CALLER jobs waiting or running and all callers QUEUE waiting; past either, `make` fails at once
 * with `busy` (503 + Retry-After, the credit given back).
 */
import { availableParallelism } from 'node:os'
import { AlmanacError, busy } from '../../lib/errors.ts'
import { roundRobin } from '../../lib/scheduling.ts'
import { workerUrl } from '../../lib/threads.ts'
import { createWorkerPool } from '../../lib/worker-pool.ts'
import type { ImageOptions, MadeImage } from './image.ts'
import type { RenderJob } from './render-worker.ts'
import { createLogger, type Logger } from '../../lib/logger.ts'

const PER_CALLER = 4
const QUEUE = 64

export interface RenderPoolStats {
  workers: number
  busy: number
  queued: number
  /** Images the workers have made since start. */
  made: number
}

export interface RenderPool {
  make(payload: string, field: string, options: ImageOptions, caller: string): Promise<MadeImage>
  stats(): RenderPoolStats
  close(): void
}

/** One worker per core but one (the loop's), at least one, at most two: rendering is a small share of the server's work. */
export const defaultWorkers = () => Math.max(1, Math.min(2, availableParallelism() - 1))

/** `log` is the domain's logger (`open`'s context); a pool made on its own (tests, benches) logs to stderr. */
export function createRenderPool(
  size = defaultWorkers(),
  url = workerUrl(new URL('./render-worker.ts', import.meta.url), 'qr/render-worker'),
  log: Logger = createLogger(),
): RenderPool {
  let made = 0
  const failed = () => new AlmanacError('internal', 'Making the QR image failed.')
  const pool = createWorkerPool<RenderJob, MadeImage>({
    url,
    size,
    queueSize: QUEUE,
    perCaller: PER_CALLER,
    policy: roundRobin(),
    log,
    describe: () => 'render',
    logFields: { domain: 'qr' },
    errors: {
      closed: () => new AlmanacError('unavailable', 'The server is stopping.'),
      callerAtCap: () => busy(`Your key already has ${PER_CALLER} large QR images being made; wait for them before asking for more.`, 1),
      queueFull: () => busy('Too many large QR images are waiting to be made; try again shortly.', 1),
      failed,
      lost: failed,
    },
  })
  return {
    async make(payload, field, options, caller) {
      const image = await pool.run({ payload, field, options }, caller)
      made++
      return image
    },
    stats: () => {
      const s = pool.stats()
      return { workers: s.workers, busy: s.running, queued: s.queued, made }
    },
    close: pool.stop,
  }
}
