/**
 * The orders a worker pool (worker-pool.ts) may start its waiting jobs in. The pool asks its policy for
 * the next job whenever a worker is free; a policy may answer none (what the job needs is not free yet),
 * and the job then waits for the next finished one. Every policy here is fair in its own way:
 * - `fifo`: first come, first served; every waiting job starts as soon as a worker is free.
 * - `roundRobin`: one line per caller, served a job at a time in turn, so one caller's stream of jobs
 *   delays another caller's by at most one job per worker.
 * - `memoryBudget`: jobs that weigh bytes, which running jobs hold together under a budget and one caller
 *   under its share of it (caller-slots.ts); see `memoryBudget` for who may pass whom.
 */
import { callerSlots } from './caller-slots.ts'

/** A job as the pool schedules it: what its worker gets, and the caller it counts against (none: nobody). */
export interface Scheduled<J> {
  readonly id: number
  readonly job: J
  readonly caller: string | undefined
}

export interface SchedulingPolicy<J> {
  /** The error for a job that could never start (more than any caller may hold); checked before the job counts or waits. */
  admit?(job: Scheduled<J>): Error | undefined
  add(job: Scheduled<J>): void
  /** Takes out the job to start now on a free worker, and what it holds while it runs; undefined when none may start yet. */
  next(): Scheduled<J> | undefined
  /** Takes out a waiting job the pool refuses after all. */
  remove(job: Scheduled<J>): void
  /** A job `next` gave is over: what it held is free. */
  done?(job: Scheduled<J>): void
  /** Takes out every waiting job (a pool that stops fails them). */
  clear(): Scheduled<J>[]
  readonly waiting: number
}

const takeOut = <T>(list: T[], item: T) => {
  const at = list.indexOf(item)
  if (at >= 0) list.splice(at, 1)
}

export function fifo<J>(): SchedulingPolicy<J> {
  const queue: Scheduled<J>[] = []
  return {
    add: (job) => queue.push(job),
    next: () => queue.shift(),
    remove: (job) => takeOut(queue, job),
    clear: () => queue.splice(0),
    get waiting() {
      return queue.length
    },
  }
}

export function roundRobin<J>(): SchedulingPolicy<J> {
  /** Waiting jobs by caller; `turns` is the callers with waiting jobs, next first. Jobs without a caller share one line. */
  const lines = new Map<string, Scheduled<J>[]>()
  const turns: string[] = []
  let waiting = 0
  const lineOf = (job: Scheduled<J>) => job.caller ?? ''
  return {
    add(job) {
      const line = lines.get(lineOf(job))
      if (line) line.push(job)
      else {
        lines.set(lineOf(job), [job])
        turns.push(lineOf(job))
      }
      waiting++
    },
    next() {
      const caller = turns.shift()
      if (caller === undefined) return undefined
      const line = lines.get(caller)!
      const job = line.shift()!
      if (line.length) turns.push(caller)
      else lines.delete(caller)
      waiting--
      return job
    },
    remove(job) {
      const line = lines.get(lineOf(job))
      const at = line?.indexOf(job) ?? -1
      if (!line || at < 0) return
      line.splice(at, 1)
      waiting--
      if (line.length) return
      lines.delete(lineOf(job))
      turns.splice(turns.indexOf(lineOf(job)), 1)
    },
    clear() {
      const all = [...lines.values()].flat()
      lines.clear()
      turns.length = 0
      waiting = 0
      return all
    },
    get waiting() {
      return waiting
    },
  }
}

export interface MemoryBudgetOptions<J> {
  /** Bytes all running jobs together may hold. */
  budget: number
  /** Bytes one caller's running jobs may hold (jobs without a caller share one); also the largest job admitted. */
  perCaller?: number
  /** Bytes a job holds while it runs. */
  weigh(job: J): number
  /** The error for a job heavier than `largest`, which could never start and would block the queue for good. */
  tooLarge(job: J, bytes: number, largest: number): Error
}

export interface MemoryBudgetPolicy<J> extends SchedulingPolicy<J> {
  admit(job: Scheduled<J>): Error | undefined
  done(job: Scheduled<J>): void
  /** Bytes the running jobs hold, never more than `budget`. */
  readonly inUse: number
  readonly budget: number
}

/**
 * A job starts when its bytes fit both the budget and its caller's share of it. The queue is served first
 * come, first served, with one exception: a job held back by its own caller's share is passed by other
 * callers' jobs behind it (that caller's running jobs will make room), never by its caller's; a job held
 * back by the budget is passed by nobody, so a large job is never starved by a stream of small ones.
 */
export function memoryBudget<J>({ budget, perCaller = budget, weigh, tooLarge }: MemoryBudgetOptions<J>): MemoryBudgetPolicy<J> {
  const memory = callerSlots(budget, perCaller)
  const largest = Math.min(budget, perCaller)
  const queue: Scheduled<J>[] = []
  const bytes = new WeakMap<Scheduled<J>, number>()
  const ownerOf = (job: Scheduled<J>) => job.caller ?? ''
  return {
    budget,
    admit(job) {
      const weight = weigh(job.job)
      bytes.set(job, weight)
      return weight > largest ? tooLarge(job.job, weight, largest) : undefined
    },
    add: (job) => queue.push(job),
    next() {
      /** Callers with a job held back by their share: their later jobs keep behind it. */
      const heldBack = new Set<string>()
      for (const [i, job] of queue.entries()) {
        if (heldBack.has(ownerOf(job))) continue
        const why = memory.refusal(ownerOf(job), bytes.get(job))
        if (why === 'full') return undefined
        if (why === 'share') heldBack.add(ownerOf(job))
        else {
          queue.splice(i, 1)
          memory.take(ownerOf(job), bytes.get(job))
          return job
        }
      }
      return undefined
    },
    remove: (job) => takeOut(queue, job),
    done: (job) => memory.release(ownerOf(job), bytes.get(job)),
    clear: () => queue.splice(0),
    get waiting() {
      return queue.length
    },
    get inUse() {
      return memory.held()
    },
  }
}
