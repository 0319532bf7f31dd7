/**
 * The worker side of a worker pool (worker-pool.ts): every pool posts `{ id, job }` and gets one reply per
 * job, its value, its problem or a failure. A problem (an AlmanacError) goes back as its parts, since an
 * Error's own members do not survive postMessage; any other error goes back as its stack, for the log
 * only (the caller gets a 500 without its text).
 */
import { AlmanacError } from './errors.ts'
import { yieldToEventLoop } from './threads.ts'

declare var self: Worker

export type JobReply =
  | { id: number; value: unknown }
  | { id: number; problem: { kind: AlmanacError['kind']; detail: string; options: AlmanacError['options'] } }
  | { id: number; failure: string }

/** Objects a value's reply hands over to the pool's thread instead of copying (an image's bytes). */
export type Transfer = (value: any) => Bun.Transferable[]

/** Runs one job and posts its reply. */
export function answerJob(id: number, run: () => unknown, transfer?: Transfer): void {
  let reply: JobReply
  try {
    reply = { id, value: run() }
  } catch (e) {
    reply =
      e instanceof AlmanacError
        ? { id, problem: { kind: e.kind, detail: e.detail, options: e.options } }
        : { id, failure: String((e as Error)?.stack ?? e) }
  }
  self.postMessage(reply, 'value' in reply && transfer ? transfer(reply.value) : [])
}

/** Serves a pool that sends no init: each message is a job for `run`. Call it at the top of a worker module. */
export function serveJobs<J>(run: (job: J) => unknown, transfer?: Transfer): void {
  // When every core is busy with jobs, the event-loop thread still gets the CPU first.
  yieldToEventLoop()
  self.onmessage = (event: MessageEvent<{ id: number; job: J }>) => answerJob(event.data.id, () => run(event.data.job), transfer)
}
