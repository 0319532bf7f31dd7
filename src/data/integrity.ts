/**
 * Checks that a dataset's artifacts are the ones its manifest describes. Random bytes written into a table
 * pass every other check and give wrong answers, so an artifact must be hashed before it is trusted:
 * - every artifact's size is compared at start (cheap, catches truncation);
 * - small artifacts (at most ALMANAC_DATA_HASH_BEFORE_SERVE_MAX_BYTES, 32 MiB by default: the tables, the
 *   JSON, countries) are hashed before their domain opens, so a corrupt one never answers a request;
 * - only the large ones (the Bible and postal databases, the city mmdb) are hashed in the background, a
 *   chunk at a time so the event loop keeps serving, and a mismatch disables the domain that reads them.
 */
import { createHash } from 'node:crypto'
import { statSync } from 'node:fs'
import { open } from 'node:fs/promises'
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

/** Bytes read and hashed at a time: about a millisecond of hashing, so requests interleave. */
const CHUNK = 1 << 20

/**
 * sha256 of a file, read a chunk at a time into one reused buffer: each chunk is hashed between other
 * work on the event loop, and hashing a few hundred megabytes leaves no garbage behind (a stream's fresh
 * chunks had the executable at 419 MiB of RSS when ready instead of ~110).
 */
export async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash('sha256')
  const buffer = Buffer.allocUnsafe(CHUNK)
  const file = await open(path, 'r')
  try {
    for (let n: number; (n = (await file.read(buffer, 0, CHUNK, null)).bytesRead) > 0; ) hash.update(buffer.subarray(0, n))
  } finally {
    await file.close()
  }
  return hash.digest('hex')
}

/**
 * Which of a dataset's artifacts to hash: those of at most `small` bytes (hashed before their domain
 * serves), those over `large` bytes (hashed in the background), or all of them. The bound is
 * ALMANAC_DATA_HASH_BEFORE_SERVE_MAX_BYTES.
 */
export type ArtifactSizes = { small: number } | { large: number } | 'all'

const selected = (bytes: number, which: ArtifactSizes) => which === 'all' || ('small' in which ? bytes <= which.small : bytes > which.large)

/**
 * Why a dataset's artifacts (the `which` of them) do not match the manifest by content, or null when they
 * do. Those named in `verified` were hashed as they were written (the executable's extraction) and are
 * not read again.
 */
export async function contentMismatch(
  data: DataDir,
  datasetId: string,
  which: ArtifactSizes = 'all',
  verified?: ReadonlySet<string>,
): Promise<string | null> {
  const entry = data.manifest.datasets[datasetId]
  if (!entry) return null
  for (const a of entry.artifacts) {
    if (!selected(a.bytes, which) || verified?.has(a.name)) continue
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
