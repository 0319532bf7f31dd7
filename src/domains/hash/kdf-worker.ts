/**
 * A hashing worker thread: receives `{ id, job }`, answers `{ id, hash }` or `{ id, error }`. The slow KDFs
 * run here so the server's event loop keeps answering while they work. `build/compile.ts` adds every
 * `*worker.ts` as an entry point so this file also exists inside the compiled executable.
 */
import { readlinkSync } from 'node:fs'
import { setPriority } from 'node:os'
import { runKdf, type KdfJob } from './kdf.ts'

declare var self: Worker

/**
 * Lower this thread's CPU priority (Linux: setpriority on a thread id renices that thread only), so when
 * every core is busy hashing, the event-loop thread still gets the CPU first and cheap requests stay fast.
 */
function yieldToEventLoop(nice = 10) {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop())
    if (Number.isInteger(tid) && tid !== process.pid) setPriority(tid, nice)
  } catch {
    // not Linux, or not permitted: run at normal priority
  }
}
yieldToEventLoop()

self.onmessage = (event: MessageEvent<{ id: number; job: KdfJob }>) => {
  const { id, job } = event.data
  try {
    postMessage({ id, hash: runKdf(job) })
  } catch (e) {
    postMessage({ id, error: (e as Error)?.message ?? String(e) })
  }
}
