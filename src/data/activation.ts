/**
 * What `almanac data activate` and `almanac data rollback` record in the state dir, for the server (at
 * start and on SIGHUP) and the next activation to read. Two one-line files, each written whole and then
 * renamed, so a reader never sees half a path:
 * - `active-data`: the data directory to serve, kept across restarts;
 * - `previous-data`: what was served before the last activation, for `data rollback`: a directory, or an
 *   empty line for "nothing activated" (the configured data: ALMANAC_DATA_DIR, the executable's own
 *   datasets, datasets/out).
 * Bundles are unpacked into `<state dir>/data/<name>`; after an activation every folder there but the
 * active and the previous one is removed (those are the only two a rollback can reach).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { sweepOrphans } from '../lib/orphans.ts'

/** The file naming the data directory to serve. */
export const activeDataFile = (stateDir: string) => join(stateDir, 'active-data')

/** The file naming what was served before the last activation (empty: the configured data). */
export const previousDataFile = (stateDir: string) => join(stateDir, 'previous-data')

/** Where bundles are unpacked, one folder each. */
export const bundlesDir = (stateDir: string) => join(stateDir, 'data')

/** Temporary folders of unpacking bundles, named after their process: `.incoming-<pid>-<random>`. */
export const INCOMING = /^\.incoming-(\d+)-[a-z0-9]+$/

/** Whether `dir` holds a data directory's manifest.json (every data directory's last file written). */
export const hasManifest = (dir: string) => existsSync(join(dir, 'manifest.json'))

/** The recorded line of a pointer file: undefined when there is no file. */
function readPointer(file: string): string | undefined {
  if (!existsSync(file)) return undefined
  return readFileSync(file, 'utf8').trim()
}

function writePointer(file: string, line: string) {
  writeFileSync(`${file}.tmp`, `${line}\n`)
  renameSync(`${file}.tmp`, file)
}

/** The directory `almanac data activate` chose, when it still holds a manifest. */
export function activatedDir(stateDir: string): string | undefined {
  const dir = readPointer(activeDataFile(stateDir))
  return dir && hasManifest(dir) ? dir : undefined
}

/**
 * Records `dir` as the directory to serve. What was served until now (the activated directory, else
 * nothing: the configured data) becomes the previous one, unless `dir` is already the active one.
 */
export function recordActivated(stateDir: string, dir: string): void {
  mkdirSync(stateDir, { recursive: true })
  const next = resolve(dir)
  const current = activatedDir(stateDir)
  if (current === undefined || resolve(current) !== next) writePointer(previousDataFile(stateDir), current ?? '')
  writePointer(activeDataFile(stateDir), next)
}

/**
 * What `data rollback` returns to: `{ dir }` a directory, `{ dir: null }` the configured data (nothing was
 * activated before), undefined when there was no activation to undo.
 */
export function previousData(stateDir: string): { dir: string | null } | undefined {
  const line = readPointer(previousDataFile(stateDir))
  if (line === undefined) return undefined
  return { dir: line === '' ? null : line }
}

/**
 * Makes the previous data the active one and the active the previous (a second rollback undoes the
 * first). Returns what is now to be served (null: the configured data).
 */
export function recordRollback(stateDir: string): string | null {
  const back = previousData(stateDir)
  if (!back) throw new Error(`${previousDataFile(stateDir)} does not exist: nothing was activated, nothing to roll back`)
  const current = activatedDir(stateDir)
  writePointer(previousDataFile(stateDir), current ?? '')
  if (back.dir === null) rmSync(activeDataFile(stateDir), { force: true })
  else writePointer(activeDataFile(stateDir), resolve(back.dir))
  return back.dir
}

/**
 * Removes the folders under `<state dir>/data/` that a rollback can no longer reach (all but the active
 * and the previous), and temporary folders of unpackings whose process died. Returns the removed paths.
 */
export function removeUnreachableBundles(stateDir: string): string[] {
  const root = bundlesDir(stateDir)
  sweepOrphans(root, INCOMING)
  let names: string[]
  try {
    names = readdirSync(root)
  } catch {
    return []
  }
  const keep = new Set([activatedDir(stateDir), previousData(stateDir)?.dir].filter((d): d is string => !!d).map((d) => resolve(d)))
  const removed: string[] = []
  for (const name of names) {
    const path = join(root, name)
    // A live unpacking's folder is its own business.
    if (INCOMING.test(name) || keep.has(path)) continue
    rmSync(path, { recursive: true, force: true })
    removed.push(path)
  }
  return removed
}
