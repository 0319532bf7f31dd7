/**
 * A small pool of render workers for large QR images (`image.ts` decides which), so a version-40 symbol
 * or a 2000 px PNG never holds the event loop. Local to the qr domain on purpose: a generic worker pool is
 * being built for the whole server; this one should fold into it.
 *
 * Jobs wait in one queue per caller and are started round robin across callers, so one caller's stream of
 * large images delays another caller's by at most one job per worker. A caller may have PER_CALLER jobs
 * waiting or running and all callers QUEUE in all; past either, `make` fails at once with `busy` (503 +
 * Retry-After, the credit given back). Workers start on first use and are unref'd.
 */
import { availableParallelism } from 'node:os'
import { AlmanacError, busy } from '../../lib/errors.ts'
import { workerUrl } from '../../lib/threads.ts'
import type { ImageOptions, MadeImage } from './image.ts'
import type { RenderJob, RenderReply } from './render-worker.ts'
import { createLogger, type Logger } from '../../lib/logger.ts'

const PER_CALLER = 4
const QUEUE = 64

interface Pending {
  job: RenderJob
  caller: string
  resolve(image: MadeImage): void
  reject(error: Error): void
}

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
  const slots: { worker: Worker; current?: Pending }[] = []
  /** Waiting jobs by caller; `turns` is the callers with waiting jobs, next first. */
  const waiting = new Map<string, Pending[]>()
  const turns: string[] = []
  /** Jobs waiting or running, by caller (removed at zero). */
  const held = new Map<string, number>()
  let queued = 0
  let made = 0
  let nextId = 1

  const release = (caller: string) => {
    const n = (held.get(caller) ?? 1) - 1
    if (n > 0) held.set(caller, n)
    else held.delete(caller)
  }

  const spawn = () => {
    const slot: { worker: Worker; current?: Pending } = { worker: new Worker(url) }
    slot.worker.unref()
    slot.worker.onmessage = (event: MessageEvent<RenderReply>) => {
      const job = slot.current
      if (!job || job.job.id !== event.data.id) return
      slot.current = undefined
      release(job.caller)
      const reply = event.data
      if ('image' in reply) {
        made++
        job.resolve(reply.image)
      } else if ('problem' in reply) job.reject(new AlmanacError(reply.problem.kind, reply.problem.detail, reply.problem.options))
      else {
        log.error('render worker failed', { domain: 'qr', error: reply.error })
        job.reject(new AlmanacError('internal', 'Making the QR image failed.'))
      }
      pump()
    }
    // A worker that dies fails its job and is replaced; the pool keeps serving.
    slot.worker.onerror = (event: ErrorEvent) => {
      event.preventDefault?.()
      const job = slot.current
      slot.worker.terminate()
      slots.splice(slots.indexOf(slot), 1)
      if (job) {
        release(job.caller)
        log.error('render worker died', { domain: 'qr', error: event.message })
        job.reject(new AlmanacError('internal', 'Making the QR image failed.'))
      }
      pump()
    }
    slots.push(slot)
    return slot
  }

  /** Starts waiting jobs on free workers, one caller's turn at a time. */
  const pump = () => {
    while (turns.length) {
      const slot = slots.find((s) => !s.current) ?? (slots.length < size ? spawn() : undefined)
      if (!slot) return
      const caller = turns.shift()!
      const mine = waiting.get(caller)!
      const job = mine.shift()!
      queued--
      if (mine.length) turns.push(caller)
      else waiting.delete(caller)
      slot.current = job
      slot.worker.postMessage(job.job)
    }
  }

  return {
    make(payload, field, options, caller) {
      if ((held.get(caller) ?? 0) >= PER_CALLER)
        return Promise.reject(
          busy(`Your key already has ${PER_CALLER} large QR images being made; wait for them before asking for more.`, 1),
        )
      if (queued >= QUEUE) return Promise.reject(busy('Too many large QR images are waiting to be made; try again shortly.', 1))
      return new Promise<MadeImage>((resolve, reject) => {
        const job: Pending = { job: { id: nextId++, payload, field, options }, caller, resolve, reject }
        held.set(caller, (held.get(caller) ?? 0) + 1)
        const mine = waiting.get(caller)
        if (mine) mine.push(job)
        else {
          waiting.set(caller, [job])
          turns.push(caller)
        }
        queued++
        pump()
      })
    },
    stats: () => ({ workers: slots.length, busy: slots.filter((s) => s.current).length, queued, made }),
    close() {
      const stopping = () => new AlmanacError('unavailable', 'The server is stopping.')
      for (const s of slots) {
        s.worker.terminate()
        s.current?.reject(stopping())
      }
      slots.length = 0
      for (const mine of waiting.values()) for (const job of mine) job.reject(stopping())
      waiting.clear()
      turns.length = 0
      queued = 0
    },
  }
}
