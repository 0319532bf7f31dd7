/**
 * A small program compiled the way build/compile.ts compiles the executable (root = the repository, a
 * worker module as an extra entry point) and run from another folder: proof that a pool finds its worker
 * inside a compiled executable. Returns what the program printed; a build or run failure fails the test.
 */
import { expect } from 'bun:test'
import { join, resolve } from 'node:path'

const ROOT = resolve(import.meta.dir, '../..')

export async function runCompiledProbe(entry: string, worker: string, dir: string): Promise<string> {
  const outfile = join(dir, 'probe')
  const built = await Bun.build({ entrypoints: [entry, join(ROOT, worker)], root: ROOT, target: 'bun', compile: { outfile }, throw: false })
  expect(built.logs.map(String)).toEqual([])
  expect(built.success).toBe(true)
  const run = Bun.spawnSync([outfile], { cwd: dir })
  expect(run.stderr.toString()).toBe('')
  return run.stdout.toString()
}
