/**
 * The executable `bun run compile` makes, compiled once per `bun test` process however many test files
 * need it (the executable and container tests): a compile takes 30-60 s of the 2 cores. Written to a
 * temporary folder that is removed when the process exits.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { compile, type CompileResult } from '../../build/compile.ts'

/** Long enough for a compile on a loaded machine. */
export const COMPILE_SECONDS = 600

let compiled: Promise<CompileResult> | undefined

export function compiledExecutable(): Promise<CompileResult> {
  if (!compiled) {
    const outDir = mkdtempSync(join(tmpdir(), 'almanac-compile-'))
    process.once('exit', () => rmSync(outDir, { recursive: true, force: true }))
    compiled = compile({ outfile: join(outDir, 'almanac'), log: () => {} })
  }
  return compiled
}
