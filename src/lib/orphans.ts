/** What a crashed process leaves behind: temporary files and folders named after its pid. */
import { readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'

/** Whether a process with this pid exists (one of another user counts: it cannot be signalled, but it is there). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Removes the entries of `dir` whose name `pattern` matches with a pid (group 1) of a process that is gone. */
export function sweepOrphans(dir: string, pattern: RegExp): void {
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return // no folder, nothing left behind
  }
  for (const name of names) {
    const m = pattern.exec(name)
    if (m && !processAlive(Number(m[1]))) rmSync(join(dir, name), { recursive: true, force: true })
  }
}
