/**
 * The worker side of a query pool (query-pool.ts): a domain's `*-worker.ts` calls `serveQueries` with a
 * function that opens its read-only database from the pool's `init` and returns the methods jobs may
 * call. Each job waits while the pool holds its workers (`hold`), runs, and is answered as every pool
 * job is (worker-thread.ts): its value, its problem, or a failure (a database that would not open, too).
 */
import { yieldToEventLoop } from './threads.ts'
import { answerJob } from './worker-thread.ts'

declare var self: Worker

type Methods = Record<string, (...args: any[]) => unknown>

export interface QueryJob {
  method: string
  args: unknown[]
}

export function serveQueries<I>(open: (init: I) => Methods): void {
  // When every core is busy with queries, the event-loop thread still gets the CPU first.
  yieldToEventLoop()
  let methods: Methods | undefined
  let gate: Int32Array | undefined
  /** Why the database could not be opened: every job is answered with it as a failure. */
  let unopened: string | undefined
  self.onmessage = (event: MessageEvent) => {
    if (!methods) {
      gate = event.data.gate
      try {
        methods = open(event.data.init as I)
      } catch (e) {
        methods = {}
        unopened = (e as Error)?.stack ?? String(e)
      }
      return
    }
    const { id, job } = event.data as { id: number; job: QueryJob }
    while (gate && Atomics.load(gate, 0) === 1) Atomics.wait(gate, 0, 1)
    const known = methods
    answerJob(id, () => {
      const run = Object.hasOwn(known, job.method) ? known[job.method] : undefined
      if (unopened) throw new Error(`the worker could not open its data: ${unopened}`)
      if (!run) throw new Error(`no query method ${job.method}`)
      return run(...job.args)
    })
  }
}
