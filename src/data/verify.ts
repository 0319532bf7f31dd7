/**
 * `almanac data verify`, and the check `data activate` and `data rollback` run before they record a
 * directory: every artifact of every dataset in `manifest.json` is there, at its size and with its sha256.
 * A directory with nothing to check (missing, no manifest, a manifest listing no datasets) is a failure
 * too: a check that cannot fail says nothing.
 */
import { existsSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { sha256OfFile } from './integrity.ts'
import { hasManifest } from './activation.ts'
import { readManifest } from './open.ts'

export interface Verification {
  dir: string
  /** Datasets and artifacts checked, and their bytes. */
  datasets: number
  artifacts: number
  bytes: number
  /** What does not match, one line each, naming the dataset and the artifact's path. */
  problems: string[]
  /** Set when there was nothing to check: why (the directory, or its manifest, is missing or empty). */
  nothing?: string
}

/** Checks every artifact of `dir` against its manifest: presence and size first (cheap), then sha256. */
export async function verifyDataDir(dir: string): Promise<Verification> {
  dir = resolve(dir)
  const empty = { dir, datasets: 0, artifacts: 0, bytes: 0, problems: [] }
  if (!existsSync(dir)) return { ...empty, nothing: `${dir} does not exist` }
  if (!hasManifest(dir)) return { ...empty, nothing: `${dir} holds no manifest.json` }
  let manifest: ReturnType<typeof readManifest>
  try {
    manifest = readManifest(dir)
  } catch (e) {
    return { ...empty, nothing: (e as Error).message }
  }
  const entries = Object.values(manifest.datasets ?? {})
  if (!entries.length) return { ...empty, nothing: `${join(dir, 'manifest.json')} lists no datasets` }
  const result: Verification = { ...empty, datasets: entries.length }
  const present: { id: string; path: string; sha256: string }[] = []
  for (const entry of entries) {
    if (!entry.artifacts?.length) result.problems.push(`${entry.id}: the manifest lists no artifacts for it`)
    for (const a of entry.artifacts ?? []) {
      const path = join(dir, a.name)
      result.artifacts++
      result.bytes += a.bytes
      let size: number
      try {
        size = statSync(path).size
      } catch {
        result.problems.push(`${entry.id}: ${path} is missing`)
        continue
      }
      if (size !== a.bytes) result.problems.push(`${entry.id}: ${path} is ${size} bytes, manifest.json says ${a.bytes}`)
      else present.push({ id: entry.id, path, sha256: a.sha256 })
    }
  }
  for (const a of present) {
    const sha256 = await sha256OfFile(a.path).catch((e: Error) => e)
    if (sha256 instanceof Error) result.problems.push(`${a.id}: ${a.path} cannot be read (${sha256.message})`)
    else if (sha256 !== a.sha256) result.problems.push(`${a.id}: ${a.path} does not match its sha256 in manifest.json`)
  }
  return result
}

/** `9 datasets, 10 artifacts, 678 MiB` */
export const verifiedSummary = (v: Verification) =>
  `${v.datasets} dataset${v.datasets === 1 ? '' : 's'}, ${v.artifacts} artifact${v.artifacts === 1 ? '' : 's'}, ${mebibytes(v.bytes)}`

export const mebibytes = (bytes: number) => (bytes < 2 ** 20 ? `${(bytes / 1024).toFixed(0)} KiB` : `${(bytes / 2 ** 20).toFixed(0)} MiB`)
