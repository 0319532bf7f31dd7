/**
 * Where a worker thread's module is, from source and inside the compiled executable: the hash domain's
 * approach (src/domains/hash/pool.ts) as a helper any domain can use. From source the module sits beside
 * the code that starts it. Inside `bun build --compile` that code is bundled into the main chunk, so
 * `import.meta.url` points at the executable, while each `*worker.ts` entry point keeps its own path
 * (e.g. `/$bunfs/root/src/domains/qr/render-worker.js`) under the same root, found by a depth-first search.
 */
import { existsSync, readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

function find(dir: string, file: RegExp, depth = 8): string | undefined {
  let entries: string[]
  try {
    entries = readdirSync(dir)
  } catch {
    return undefined
  }
  for (const e of entries) if (file.test(e)) return join(dir, e)
  if (depth > 0)
    for (const e of entries) {
      const found = find(join(dir, e), file, depth - 1)
      if (found) return found
    }
  return undefined
}

/** `beside`: `new URL('./x-worker.ts', import.meta.url)` in the module that starts the worker; `stem`: `x-worker`. */
export function locateWorker(beside: URL, stem: string): string {
  if (beside.protocol === 'file:' && existsSync(fileURLToPath(beside))) return beside.href
  const embedded = find(dirname(Bun.main), new RegExp(`^${stem}\\.[jt]s$`))
  if (embedded) return embedded
  throw new Error(`the worker module ${stem}.ts is missing (a compiled build must list it as an entry point)`)
}
