import { createWriteStream, mkdirSync, readdirSync, readFileSync, renameSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { createZstdDecompress } from 'node:zlib'
import type { EmbeddedData } from './embedded.ts'
import { sweepOrphans } from '../lib/orphans.ts'
import { hasManifest } from './activation.ts'
import { hashingTap } from './hashes.ts'

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
  if (!hasManifest(dir)) return false
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
    `Cannot ${what} (${why}). Set ALMANAC_DATA_DIR to a writable directory (now ${root}), or extract once on a writable machine with ` +
      `\`almanac data extract --to DIR\` and point ALMANAC_DATA_DIR at DIR.`,
  )
}

/**
 * An extraction under way: each artifact can be waited for on its own, so a domain opens as soon as its
 * own artifacts are in place while the others are still being written.
 */
export interface Extraction {
  /** The folder the artifacts land in (`<root>/<key>`). */
  dir: string
  /** Resolves once the artifact `name` is in place (at once when it already was); rejects with why not. */
  artifact(name: string): Promise<void>
  /** Every artifact in place and the manifest written (the folder is finished); rejects with the first failure. */
  done: Promise<string>
  /** Whether anything is being written (false: the folder was already finished). */
  writing: boolean
  /** Artifacts written by this extraction, whose sha256 was checked as they were written (filled as they land). */
  verified: Set<string>
}

/** Extracts (if needed) and returns the folder holding the embedded datasets. */
export async function extractEmbedded(data: EmbeddedData, root: string, log: (line: string) => void = () => {}): Promise<string> {
  return startExtraction(data, root, log).done
}

/**
 * Starts extracting every artifact not already in place, all at once (decompression runs off the main
 * thread, so the large ones overlap with hashing and writing the others). Each artifact is written to a
 * temporary file beside its place and renamed into place when complete and checked; the manifest is
 * written last, so a folder without it is never taken for finished. On a failure, what this process put
 * there is removed again (no partial file, no half folder). An unusable root throws here, at once.
 */
export function startExtraction(data: EmbeddedData, root: string, log: (line: string) => void = () => {}): Extraction {
  const target = join(root, data.key)
  if (isExtracted(target, data)) {
    const done = Promise.resolve(target)
    return { dir: target, artifact: () => done.then(() => undefined), done, writing: false, verified: new Set() }
  }
  try {
    mkdirSync(root, { recursive: true })
  } catch (e) {
    throw explain(e, `create the dataset directory ${root}`, root)
  }
  sweep(root)
  try {
    mkdirSync(target, { recursive: true })
  } catch (e) {
    throw explain(e, `create the dataset directory ${target}`, root)
  }
  sweepTemporary(target)
  const unique = `${process.pid}-${Math.random().toString(36).slice(2, 8)}`
  const started = performance.now()
  const missing = data.files.filter((f) => !sizeIs(join(target, f.name), f.bytes))
  const total = missing.reduce((n, f) => n + f.bytes, 0)
  log(`datasets: extracting ${missing.length} artifacts (${(total / 2 ** 20).toFixed(0)} MiB) into ${target}`)
  const index = blobIndexOf(data)
  const placed: string[] = []
  const verified = new Set<string>()
  const pending = new Map<string, Promise<void>>()
  const slot = slots(EXTRACTING_AT_ONCE)
  // Smallest first: most domains need only small artifacts and open at once; the large ones end together.
  const bySize = [...data.files].sort((a, b) => a.bytes - b.bytes)
  for (const f of bySize) {
    const dest = join(target, f.name)
    const work = missing.includes(f)
      ? slot(() => extractFile(f, dest, `${dest}.${unique}.tmp`, index[f.name])).then(
          () => {
            placed.push(dest)
            verified.add(f.name)
          },
          (e) => {
            throw e instanceof DataDirError ? e : explain(e, `extract ${f.name} into ${target}`, root)
          },
        )
      : Promise.resolve()
    work.catch(() => {}) // awaited through artifact() and done; never an unhandled rejection
    pending.set(f.name, work)
  }
  const done = Promise.allSettled(pending.values()).then((results) => {
    const failed = results.find((r) => r.status === 'rejected')
    if (failed) {
      try {
        for (const path of placed) rmSync(path, { force: true })
        removeEmptyFolders(target)
      } catch {
        // Another process of the same build is writing there too: its files stay, the failure below is what counts.
      }
      throw failed.reason
    }
    try {
      const tmp = join(target, `.manifest.json.${unique}.tmp`)
      writeFileSync(tmp, readFileSync(data.manifest))
      renameSync(tmp, join(target, 'manifest.json'))
    } catch (e) {
      throw explain(e, `write the manifest into ${target}`, root)
    }
    log(`datasets: extracted in ${((performance.now() - started) / 1000).toFixed(1)} s`)
    return target
  })
  done.catch(() => {})
  return {
    dir: target,
    artifact: (name) => pending.get(name) ?? Promise.reject(new DataDirError(`The executable has no embedded ${name}.`)),
    done,
    writing: true,
    verified,
  }
}

/**
 * Artifacts written at once. Two keep both cores busy (decompression runs on Bun's thread pool, hashing
 * and writing on the main thread); each stream in flight holds a zstd window (up to 8 MiB) and its
 * buffers, and with all nine at once the first start peaked at 400+ MiB.
 */
const EXTRACTING_AT_ONCE = 2

/** Runs at most `n` of the tasks given to it at a time, in the order given. */
function slots(n: number) {
  let running = 0
  const waiting: (() => void)[] = []
  return async <T>(task: () => Promise<T>): Promise<T> => {
    if (running >= n) await new Promise<void>((resolve) => waiting.push(resolve))
    running++
    try {
      return await task()
    } finally {
      running--
      waiting.shift()?.()
    }
  }
}

/**
 * Keeps the first start's memory near a warm start's. Every chunk of the 600 MiB written is a fresh
 * buffer, and with the domains' data already on the heap the collector let them pile up: 250-285 MiB of
 * RSS at the peak, against 170-200 MiB once started. A full collection every 32 MiB held the peak at
 * 210-216 MiB but added 0.5-1 s; so the RSS is looked at every 16 MiB written (a read of
 * /proc/self/statm) and a collection runs only when it is over RSS_BUDGET_BYTES, less often when one did
 * not bring it back under (the live data is that large: collecting again would only cost time).
 */
const RSS_BUDGET_BYTES = 200 * 2 ** 20
const CHECK_EVERY_BYTES = 16 * 2 ** 20
let sinceCheck = 0
let checkEvery = CHECK_EVERY_BYTES

function collectWhenOverBudget(bytes: number) {
  sinceCheck += bytes
  if (sinceCheck < checkEvery) return
  sinceCheck = 0
  if (process.memoryUsage.rss() <= RSS_BUDGET_BYTES) return
  Bun.gc(true)
  checkEvery = process.memoryUsage.rss() <= RSS_BUDGET_BYTES ? CHECK_EVERY_BYTES : Math.min(checkEvery * 2, 512 * 2 ** 20)
}

const sizeIs = (path: string, bytes: number) => {
  try {
    return statSync(path).size === bytes
  } catch {
    return false
  }
}

/** Removes `dir` and its subfolders when they hold nothing (after a failed extraction took its files back). */
function removeEmptyFolders(dir: string): boolean {
  let empty = true
  for (const entry of readdirSync(dir, { withFileTypes: true }))
    if (!entry.isDirectory() || !removeEmptyFolders(join(dir, entry.name))) empty = false
  if (empty) rmdirSync(dir)
  return empty
}

/** Where the large blobs sit in the executable file (build/compile.ts writes it after the build); {} when unknown. */
function blobIndexOf(data: EmbeddedData): Record<string, [number, number]> {
  if (!data.blobIndex) return {}
  try {
    const text = readFileSync(data.blobIndex, 'latin1').trim()
    return text.startsWith('{') ? JSON.parse(text) : {}
  } catch {
    return {}
  }
}

/**
 * The bytes of one embedded blob. Located ones are read from the executable file through a descriptor,
 * which leaves the process's mapping of the executable untouched; through the embedded path Bun serves
 * them from that mapping, and every page read stays in the RSS (+200 MiB on a first start).
 */
function blobStream(f: EmbeddedData['files'][number], at: [number, number] | undefined): ReadableStream<Uint8Array> {
  if (at)
    return Bun.file(process.execPath)
      .slice(at[0], at[0] + at[1])
      .stream()
  return Bun.file(f.path).stream()
}

/**
 * One embedded artifact's bytes as extraction writes them (decompressed), for `data pack` to stream into a
 * bundle without extracting; not checked here: the reader hashes them.
 */
export function embeddedArtifact(data: EmbeddedData, name: string): Readable {
  const f = data.files.find((file) => file.name === name)
  if (!f) throw new DataDirError(`The executable has no embedded ${name}.`)
  const input = Readable.fromWeb(blobStream(f, blobIndexOf(data)[name]) as import('node:stream/web').ReadableStream)
  if (f.encoding !== 'zstd') return input
  const output = input.pipe(createZstdDecompress({ chunkSize: 256 * 1024 }))
  input.on('error', (e) => output.destroy(e))
  return output
}

/** Streams one artifact out of the executable into `tmp`, decompressing and checking its sha256 on the way, then renames it to `dest`. */
async function extractFile(f: EmbeddedData['files'][number], dest: string, tmp: string, at: [number, number] | undefined) {
  mkdirSync(dirname(dest), { recursive: true })
  const tap = hashingTap(collectWhenOverBudget)
  // Bun.file, not fs.createReadStream: only the former reads the executable's embedded files as a stream.
  if (!at && !(await Bun.file(f.path).exists()))
    throw new DataDirError(`The executable has no embedded ${f.name} (${f.path}); it was not built by build/compile.ts. Rebuild it.`)
  try {
    const input = Readable.fromWeb(blobStream(f, at) as import('node:stream/web').ReadableStream)
    const stages =
      f.encoding === 'zstd'
        ? [input, createZstdDecompress({ chunkSize: 256 * 1024 }), tap.stream, createWriteStream(tmp)]
        : [input, tap.stream, createWriteStream(tmp)]
    await (pipeline as (...s: unknown[]) => Promise<void>)(...stages)
    const [bytes, sha256] = [tap.bytes, tap.sha256()]
    if (bytes !== f.bytes || sha256 !== f.sha256)
      throw new DataDirError(
        `The embedded artifact ${f.name} is damaged (got ${bytes} bytes, sha256 ${sha256}; expected ${f.bytes}, ${f.sha256}). Rebuild ` +
          `the executable.`,
      )
    renameSync(tmp, dest)
  } catch (e) {
    rmSync(tmp, { force: true })
    throw e
  }
}

/** Removes temporary folders left by extractions (of older versions) whose process died. */
const sweep = (root: string) => sweepOrphans(root, /^\.(?:extract|stale)-.+-(\d+)-[a-z0-9]+$/)

/** Removes temporary files of artifacts left in `dir` (and its subfolders) by extractions whose process died. */
function sweepTemporary(dir: string) {
  sweepOrphans(dir, /^.+\.(\d+)-[a-z0-9]+\.tmp$/)
  for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) sweepTemporary(join(dir, entry.name))
}
