/**
 * What every worker-thread pool shares: finding a worker module from source and inside the compiled
 * executable, and lowering a worker thread's CPU priority so the event loop is served first.
 */
import { existsSync, readdirSync, readlinkSync } from 'node:fs'
import { setPriority } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** Depth-first search under `dir` for a file whose path ends with `tail` + `.js` or `.ts`. */
function findModule(dir: string, tail: string, depth = 8): string | undefined {
  let entries: string[]
  try {
    entries = readdirSync(dir)
  } catch {
    return undefined
  }
  for (const e of entries) {
    const path = join(dir, e)
    if (path.endsWith(`${tail}.js`) || path.endsWith(`${tail}.ts`)) return path
  }
  if (depth > 0)
    for (const e of entries) {
      const found = findModule(join(dir, e), tail, depth - 1)
      if (found) return found
    }
  return undefined
}

/**
 * Where a worker module is. From source it sits at `beside` (a URL made from the pool module's
 * `import.meta.url`). Inside `bun build --compile` the pool is bundled into the main chunk, so
 * `import.meta.url` points at the executable, while each `*worker.ts` (an extra entry point, see
 * build/compile.ts) keeps its own path, e.g. `/$bunfs/root/src/domains/hash/kdf-worker.js`, under the
 * same root; `tail` is that path without its extension, from a folder up (`hash/kdf-worker`).
 */
export function workerUrl(beside: URL, tail: string): string {
  if (beside.protocol === 'file:' && existsSync(fileURLToPath(beside))) return beside.href
  // By its folder and name, else by name alone (worker file names are unique in the tree).
  const embedded = findModule(dirname(Bun.main), `/${tail}`) ?? findModule(dirname(Bun.main), `/${tail.split('/').pop()}`)
  if (embedded) return embedded
  throw new Error(`the worker module ${tail}.ts is missing (a compiled build must list it as an entry point)`)
}

/**
 * Lowers the calling thread's CPU priority (Linux: setpriority on a thread id renices that thread only), so
 * when every core is busy with worker jobs, the event-loop thread still gets the CPU first and cheap
 * requests stay fast. Call it at the top of a worker module.
 */
export function yieldToEventLoop(nice = 10): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop())
    if (Number.isInteger(tid) && tid !== process.pid) setPriority(tid, nice)
  } catch {
    // not Linux, or not permitted: run at normal priority
  }
}
