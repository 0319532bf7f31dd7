/**
 * First start of the executable: its embedded artifacts are written once into a cache folder named by
 * their content hash, so every later start (and every other process of the same build) only checks
 * that the folder is there. Extraction goes to a temporary folder beside it that is renamed into place
 * when complete: a crash or a full disk never leaves a folder that looks finished but is not.
 */
import { createHash } from 'node:crypto'
import { createWriteStream, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { Readable, Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { createZstdDecompress } from 'node:zlib'
import type { EmbeddedData } from './embedded.ts'
import { sweepOrphans } from '../lib/orphans.ts'

/** The data directory cannot be made or used; the message says what to do. */
export class DataDirError extends Error {
  override name = 'DataDirError'
}

/** Where extracted datasets live: `ALMANAC_DATA_DIR`, else `$XDG_CACHE_HOME/almanac`, else `~/.cache/almanac`. */
export function cacheRoot(env: Record<string, string | undefined> = process.env, dataDir?: string): string {
  if (dataDir) return resolve(dataDir)
  if (env.XDG_CACHE_HOME) return join(resolve(env.XDG_CACHE_HOME), 'almanac')
  const home = env.HOME || safeHomedir()
  if (!home)
    throw new DataDirError(
      'No place to extract the datasets: HOME and XDG_CACHE_HOME are unset. Set ALMANAC_DATA_DIR to a writable directory.',
    )
  return join(home, '.cache', 'almanac')
}

const safeHomedir = () => {
  try {
    return homedir()
  } catch {
    return ''
  }
}

/** A finished extraction: the manifest plus every artifact at its recorded size. */
export function isExtracted(dir: string, data: EmbeddedData): boolean {
  if (!existsSync(join(dir, 'manifest.json'))) return false
  for (const f of data.files) {
    try {
      if (statSync(join(dir, f.name)).size !== f.bytes) return false
    } catch {
      return false
    }
  }
  return true
}

const explain = (e: unknown, what: string, root: string) => {
  const code = (e as NodeJS.ErrnoException).code
  if (!code?.startsWith('E')) return new DataDirError(`Cannot ${what}: ${(e as Error).message}`)
  const why =
    code === 'EACCES' || code === 'EPERM'
      ? 'permission denied'
      : code === 'EROFS'
        ? 'the file system is read-only'
        : code === 'ENOSPC'
          ? 'the disk is full'
          : code === 'ENOTDIR'
            ? 'a path component is a file, not a directory'
            : (e as Error).message
  return new DataDirError(
    `Cannot ${what} (${why}). Set ALMANAC_DATA_DIR to a writable directory (now ${root}), or extract once on a writable machine with \`almanac data extract --to DIR\` and point ALMANAC_DATA_DIR at DIR.`,
  )
}

/** Extracts (if needed) and returns the folder holding the embedded datasets. */
export async function extractEmbedded(data: EmbeddedData, root: string, log: (line: string) => void = () => {}): Promise<string> {
  const target = join(root, data.key)
  if (isExtracted(target, data)) return target
  try {
    mkdirSync(root, { recursive: true })
  } catch (e) {
    throw explain(e, `create the dataset directory ${root}`, root)
  }
  sweep(root)
  const unique = `${process.pid}-${Math.random().toString(36).slice(2, 8)}`
  const tmp = join(root, `.extract-${data.key}-${unique}`)
  const started = performance.now()
  const total = data.files.reduce((n, f) => n + f.bytes, 0)
  log(`datasets: extracting ${data.files.length} artifacts (${(total / 2 ** 20).toFixed(0)} MiB) into ${target}`)
  try {
    rmSync(tmp, { recursive: true, force: true })
    mkdirSync(tmp, { recursive: true })
    for (const f of data.files) await extractFile(f, join(tmp, f.name))
    writeFileSync(join(tmp, 'manifest.json'), readFileSync(data.manifest))
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true })
    if (e instanceof DataDirError) throw e
    throw explain(e, `extract the datasets into ${root}`, root)
  }
  try {
    renameSync(tmp, target)
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') {
      rmSync(tmp, { recursive: true, force: true })
      throw explain(e, `move the extracted datasets into ${target}`, root)
    }
    if (isExtracted(target, data)) {
      // Another process of the same build finished first; its copy is identical.
      rmSync(tmp, { recursive: true, force: true })
      return target
    }
    // A damaged folder of the same key (files removed or truncated by hand): replace it whole.
    const stale = join(root, `.stale-${data.key}-${unique}`)
    renameSync(target, stale)
    renameSync(tmp, target)
    rmSync(stale, { recursive: true, force: true })
  }
  log(`datasets: extracted in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  return target
}

/** Streams one artifact out of the executable, decompressing and checking its sha256 on the way. */
async function extractFile(f: EmbeddedData['files'][number], dest: string) {
  mkdirSync(dirname(dest), { recursive: true })
  const hash = createHash('sha256')
  let bytes = 0
  const tap = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk)
      bytes += chunk.length
      done(null, chunk)
    },
  })
  // Bun.file, not fs.createReadStream: only the former reads the executable's embedded files as a stream.
  const blob = Bun.file(f.path)
  if (!(await blob.exists()))
    throw new DataDirError(`The executable has no embedded ${f.name} (${f.path}); it was not built by build/compile.ts. Rebuild it.`)
  const input = Readable.fromWeb(blob.stream() as import('node:stream/web').ReadableStream)
  const stages =
    f.encoding === 'zstd' ? [input, createZstdDecompress(), tap, createWriteStream(dest)] : [input, tap, createWriteStream(dest)]
  await (pipeline as (...s: unknown[]) => Promise<void>)(...stages)
  const sha256 = hash.digest('hex')
  if (bytes !== f.bytes || sha256 !== f.sha256)
    throw new DataDirError(
      `The embedded artifact ${f.name} is damaged (got ${bytes} bytes, sha256 ${sha256}; expected ${f.bytes}, ${f.sha256}). Rebuild the executable.`,
    )
}

/** Removes temporary folders left by extractions whose process died. */
const sweep = (root: string) => sweepOrphans(root, /^\.(?:extract|stale)-.+-(\d+)-[a-z0-9]+$/)
