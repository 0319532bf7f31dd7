/**
 * The executable `bun run compile` makes, compiled once per `bun test` process however many test files
 * need it (the executable and container tests): a cold compile takes 30-60 s of the 2 cores. Written to
 * dist/test/almanac (gitignored, replaced whole by each compile), not a temporary folder: bun test gives
 * no hook after the last file, and 300 MiB left behind per run adds up.
 */
import { join } from 'node:path'
import { compile, ROOT, type CompileResult } from '../../build/compile.ts'

/** Long enough for a compile on a loaded machine. */
export const COMPILE_SECONDS = 600

let compiled: Promise<CompileResult> | undefined
/** What the compile logged, for the test of its timings. */
export const compileLog: string[] = []

export function compiledExecutable(): Promise<CompileResult> {
  compiled ??= compile({ outfile: join(ROOT, 'dist/test/almanac'), log: (line) => compileLog.push(line) })
  return compiled
}
