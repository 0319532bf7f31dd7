/**
 * A hashing worker thread: receives `{ id, job }`, answers `{ id, hash }` or `{ id, error }`. The slow KDFs
 * run here so the server's event loop keeps answering while they work. `build/compile.ts` adds every
 * `*worker.ts` as an entry point so this file also exists inside the compiled executable.
 */
import { yieldToEventLoop } from '../../lib/threads.ts'
import { runKdf, type KdfJob } from './kdf.ts'

declare var self: Worker

// When every core is busy hashing, the event-loop thread still gets the CPU first.
yieldToEventLoop()

self.onmessage = (event: MessageEvent<{ id: number; job: KdfJob }>) => {
  const { id, job } = event.data
  try {
    postMessage({ id, hash: runKdf(job) })
  } catch (e) {
    postMessage({ id, error: (e as Error)?.message ?? String(e) })
  }
}
