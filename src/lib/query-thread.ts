/**
 * The worker side of a query pool (query-pool.ts): a domain's `*-worker.ts` calls `serveQueries` with a
 * function that opens its read-only database from the pool's `init` and returns the methods jobs may
 * call. Each job waits while the pool holds its workers (`hold`), runs, and posts back its value, its
 * problem (an AlmanacError, rebuilt on the main thread with the same kind, detail and members) or a
 * failure (any other error, logged there and answered 500 without its text).
 */
import { AlmanacError } from './errors.ts'
import type { QueryReply } from './query-pool.ts'
import { yieldToEventLoop } from './threads.ts'

declare var self: Worker

type Methods = Record<string, (...args: any[]) => unknown>

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
    const { id, method, args } = event.data as { id: number; method: string; args: unknown[] }
    while (gate && Atomics.load(gate, 0) === 1) Atomics.wait(gate, 0, 1)
    let reply: QueryReply
    try {
      const run = Object.hasOwn(methods, method) ? methods[method] : undefined
      if (unopened) throw new Error(`the worker could not open its data: ${unopened}`)
      if (!run) throw new Error(`no query method ${method}`)
      reply = { id, value: run(...args) }
    } catch (e) {
      reply =
        e instanceof AlmanacError
          ? { id, error: { kind: e.kind, detail: e.detail, options: e.options } }
          : { id, failure: (e as Error)?.stack ?? String(e) }
    }
    postMessage(reply)
  }
}
