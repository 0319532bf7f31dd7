/**
 * Checks that a dataset's artifacts are the ones its manifest describes. At start only sizes are compared
 * (cheap, catches truncation); the full sha256 of every artifact is then computed in the background, a
 * chunk at a time so the event loop keeps serving, and a mismatch disables the domain that reads it:
 * random bytes written into a table otherwise pass every other check and give wrong answers.
 */
import { createHash } from 'node:crypto'
import { statSync } from 'node:fs'
import type { DataDir } from './types.ts'

/** Why a dataset's artifacts do not match the manifest by size, or null when they do. */
export function sizeMismatch(data: DataDir, datasetId: string): string | null {
  const entry = data.manifest.datasets[datasetId]
  if (!entry) return null
  for (const a of entry.artifacts) {
    let size: number
    try {
      size = statSync(data.path(a.name)).size
    } catch {
      return `artifact ${a.name} of dataset ${datasetId} is missing`
    }
    if (size !== a.bytes) return `artifact ${a.name} of dataset ${datasetId} is ${size} bytes, the manifest says ${a.bytes}`
  }
  return null
}

/** sha256 of a file, read as a stream: each chunk is hashed between other work on the event loop. */
export async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash('sha256')
  for await (const chunk of Bun.file(path).stream()) hash.update(chunk)
  return hash.digest('hex')
}

/** Why a dataset's artifacts do not match the manifest by content, or null when they do. */
export async function contentMismatch(data: DataDir, datasetId: string): Promise<string | null> {
  const entry = data.manifest.datasets[datasetId]
  if (!entry) return null
  for (const a of entry.artifacts) {
    let sha: string
    try {
      sha = await sha256OfFile(data.path(a.name))
    } catch {
      return `artifact ${a.name} of dataset ${datasetId} cannot be read`
    }
    if (sha !== a.sha256)
      return `artifact ${a.name} of dataset ${datasetId} does not match its sha256 in the manifest (corrupted or replaced)`
  }
  return null
}
