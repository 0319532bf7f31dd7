/**
 * `bun run compile` -> `dist/almanac`: one executable holding the server, every built dataset in
 * `datasets/out` (zstd-compressed where that pays, tiny files raw), the docs UI assets its modules import
 * with `{ type: 'file' }`, and every worker module as an extra entry point. It needs no node_modules, no
 * source tree and no network at run time.
 *
 * Generated at compile time (gitignored, imported by nothing in the source tree, so a source run never
 * depends on them): `build/embedded.generated.ts` lists the artifacts, `build/entry.generated.ts`
 * registers them and starts the CLI.
 *
 *   bun build/compile.ts [--out dist/almanac] [--data datasets/out] [--bytecode]
 */
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { createHash } from 'node:crypto'
import { parseFlags } from '../src/config.ts'
import { HashCache } from '../src/data/hashes.ts'
import type { EmbeddedFile } from '../src/data/embedded.ts'
import type { Manifest } from '../src/data/types.ts'

export const ROOT = resolve(import.meta.dir, '..')

/** Smaller files are embedded as they are: decompressing them would cost more than it saves. */
const COMPRESS_FROM_BYTES = 64 * 1024
/** Keep the compressed copy only when it is at most this share of the original. */
const COMPRESS_WORTH = 0.9
const ZSTD_LEVEL = 12

/**
 * How the executable's code is minified: identifiers are kept. Elysia tells errors apart by class name
 * (`error.constructor.name === 'TransformDecodeError'`) and reads hook source text; Bun 1.4's keepNames
 * does not keep class names, and with renamed identifiers the range checks on query integers were lost
 * (`limit=100000` answered 200). test/build/minified.test.ts guards this in seconds.
 */
export const MINIFY = { whitespace: true, syntax: true, identifiers: false } as const

export interface CompileOptions {
  outfile?: string
  dataDir?: string
  bytecode?: boolean
  log?: (line: string) => void
}

/** Seconds each phase took, and the whole compile (what the last log line reports). */
export interface CompileTimings {
  check: number
  compress: number
  bundle: number
  total: number
}

export interface CompileResult {
  timings: CompileTimings
  outfile: string
  bytes: number
  key: string
  /** Artifacts whose blob was located in the executable file (read through a descriptor on first start). */
  located: number
  files: { name: string; bytes: number; embeddedBytes: number; encoding: EmbeddedFile['encoding'] }[]
  workers: string[]
}

/** Worker modules (`*worker.ts` under src/) that must be entry points for `new Worker` to find them. */
export function workerEntryPoints(): string[] {
  return [...new Bun.Glob('src/**/*worker.ts').scanSync({ cwd: ROOT })].filter((p) => !p.endsWith('.test.ts')).sort()
}

const ts = (s: string) => JSON.stringify(s)

const since = (t: number) => (performance.now() - t) / 1000
const sec = (s: number) => `${s.toFixed(1)} s`

export async function compile(options: CompileOptions = {}): Promise<CompileResult> {
  const compileStarted = performance.now()
  const timings: CompileTimings = { check: 0, compress: 0, bundle: 0, total: 0 }
  const log = options.log ?? ((l: string) => console.error(l))
  const outfile = resolve(options.outfile ?? join(ROOT, 'dist/almanac'))
  const dataDir = resolve(options.dataDir ?? join(ROOT, 'datasets/out'))
  const embedDir = join(ROOT, 'dist/.embed')
  mkdirSync(embedDir, { recursive: true })

  const manifestPath = join(dataDir, 'manifest.json')
  const manifest: Manifest = existsSync(manifestPath) ? JSON.parse(readFileSync(manifestPath, 'utf8')) : { generated: '', datasets: {} }
  if (!existsSync(manifestPath))
    log(`compile: warning: ${manifestPath} does not exist; the executable carries no datasets (run \`bun run data\` first)`)

  // Every artifact, checked against the manifest so a half-updated datasets/out is never shipped.
  const hashes = new HashCache(join(dataDir, '.cache', 'hashes.json'))
  const files: (EmbeddedFile & { source: string; embeddedBytes: number })[] = []
  for (const entry of Object.values(manifest.datasets).sort((a, b) => a.id.localeCompare(b.id))) {
    for (const a of entry.artifacts) {
      const path = join(dataDir, a.name)
      if (!existsSync(path))
        throw new Error(
          `compile: ${a.name} of dataset ${entry.id} is in manifest.json but not in ${dataDir}; rebuild with \`bun run data\``,
        )
      const checking = performance.now()
      if (hashes.of(path) !== a.sha256)
        throw new Error(
          `compile: ${a.name} of dataset ${entry.id} does not match its sha256 in manifest.json; rebuild with \`bun run data --force\``,
        )
      timings.check += since(checking)
      const packing = performance.now()
      files.push({ name: a.name, bytes: a.bytes, sha256: a.sha256, ...embeddable(path, a.bytes, a.sha256, embedDir, log), path: '' })
      timings.compress += since(packing)
    }
  }
  hashes.save()
  log(
    `compile: ${files.length} artifacts checked against manifest.json in ${sec(timings.check)}, prepared for embedding (zstd where it ` +
      `pays, cached in dist/.embed) in ${sec(timings.compress)}`,
  )

  const manifestBytes = readFileSync(existsSync(manifestPath) ? manifestPath : writeEmpty(join(embedDir, 'manifest.json')))
  const key = createHash('sha256')
    .update(manifestBytes)
    .update(files.map((f) => `${f.name}\0${f.sha256}\n`).join(''))
    .digest('hex')
    .slice(0, 16)

  // The generated modules: one `with { type: 'file' }` import per artifact (that is what embeds it).
  const genDir = join(ROOT, 'build')
  const manifestCopy = join(embedDir, `manifest-${key}.json`)
  writeFileSync(manifestCopy, manifestBytes)
  const imports = files.map((f, i) => `import f${i} from ${ts(relPath(genDir, f.source))} with { type: 'file' }`)
  // Where each large blob sits in the executable file, patched in after the build (see locateBlobs).
  const marker = `ALMANAC-BLOB-INDEX-${key}-${process.pid}-${Date.now()}`
  const indexCopy = join(embedDir, `blob-index-${key}.txt`)
  writeFileSync(indexCopy, marker.padEnd(BLOB_INDEX_BYTES, ' '))
  writeFileSync(
    join(genDir, 'embedded.generated.ts'),
    [
      '// Generated by build/compile.ts; do not edit, do not commit.',
      '// @ts-nocheck: data-file imports have no TypeScript types',
      "import type { EmbeddedData } from '../src/data/embedded.ts'",
      `import manifest from ${ts(relPath(genDir, manifestCopy))} with { type: 'file' }`,
      `import blobIndex from ${ts(relPath(genDir, indexCopy))} with { type: 'file' }`,
      ...imports,
      '',
      'export const embedded: EmbeddedData = {',
      `  key: ${ts(key)},`,
      '  manifest,',
      '  blobIndex,',
      '  files: [',
      ...files.map(
        (f, i) => `    { name: ${ts(f.name)}, path: f${i}, bytes: ${f.bytes}, sha256: ${ts(f.sha256)}, encoding: ${ts(f.encoding)} },`,
      ),
      '  ],',
      '}',
      '',
    ].join('\n'),
  )
  const entry = join(genDir, 'entry.generated.ts')
  writeFileSync(
    entry,
    [
      '// Generated by build/compile.ts; do not edit, do not commit.',
      "import { registerEmbeddedData } from '../src/data/embedded.ts'",
      "import { embedded } from './embedded.generated.ts'",
      '',
      'registerEmbeddedData(embedded)',
      "await import('../src/main.ts')",
      '',
    ].join('\n'),
  )

  pruneEmbedCache(embedDir, new Set([manifestCopy, indexCopy, ...files.map((f) => f.source)]))

  const workers = workerEntryPoints()
  mkdirSync(dirname(outfile), { recursive: true })
  const tmpOut = `${outfile}.${process.pid}.tmp`
  const started = performance.now()
  log(
    `compile: bundling the code, ${workers.length} worker${workers.length === 1 ? '' : 's'} and ${files.length} artifacts into one ` +
      `executable (bun build)…`,
  )
  const result = await Bun.build({
    entrypoints: [entry, ...workers.map((w) => join(ROOT, w))],
    root: ROOT,
    target: 'bun',
    format: 'esm',
    minify: MINIFY,
    sourcemap: 'linked',
    // No bytecode by default: with it the executable took 850-950 ms to /readyz and held 380-390 MiB of
    // anonymous memory when ready (92 two seconds later); without, 240-290 ms and 104-107 MiB (bench/startup.ts).
    bytecode: options.bytecode ?? false,
    compile: { outfile: tmpOut, autoloadBunfig: false },
    throw: false,
  })
  if (!result.success) {
    rmSync(tmpOut, { force: true })
    throw new Error(`compile: bun build failed:\n${result.logs.map((l) => String(l)).join('\n')}`)
  }
  const located = locateBlobs(tmpOut, marker, files)
  renameSync(tmpOut, outfile)
  rmSync(`${tmpOut}.map`, { force: true }) // the executable carries its own copy of the source map
  const bytes = statSync(outfile).size
  timings.bundle = since(started)
  timings.total = since(compileStarted)
  log(
    `compile: ${relative(ROOT, outfile)} ${(bytes / 2 ** 20).toFixed(1)} MiB in ${sec(timings.total)} (checking ${sec(timings.check)}, ` +
      `compressing ${sec(timings.compress)}, bundling ${sec(timings.bundle)}, the ` +
      `rest ${sec(Math.max(0, timings.total - timings.check - timings.compress - timings.bundle))}); ${files.length} artifacts ` +
      `(key ${key}, ${located} read from the file at start); workers: ${workers.join(', ') || 'none'}`,
  )
  return {
    timings,
    outfile,
    bytes,
    key,
    located,
    files: files.map((f) => ({ name: f.name, bytes: f.bytes, embeddedBytes: f.embeddedBytes, encoding: f.encoding })),
    workers,
  }
}

/** Room for the blob index: about 80 bytes per artifact. */
const BLOB_INDEX_BYTES = 8192

/**
 * Writes, into the embedded blob-index file's own bytes (same length, so nothing in the executable moves),
 * the file offset of every artifact blob of at least COMPRESS_FROM_BYTES. Extraction then reads those
 * blobs from the executable through a file descriptor: reading them through Bun's embedded-file path
 * touches the executable's mapped pages, which stay in the process's RSS (about 200 MiB of it on the
 * first start). A blob not found is left out and read the slow way. Returns how many were located.
 */
function locateBlobs(exe: string, marker: string, files: { name: string; source: string; embeddedBytes: number }[]): number {
  const image = readFileSync(exe)
  const at = image.indexOf(marker)
  if (at < 0 || image.indexOf(marker, at + 1) >= 0) throw new Error(`compile: the blob index marker is not in ${exe} exactly once`)
  const index: Record<string, [number, number]> = {}
  for (const f of files) {
    if (f.embeddedBytes < COMPRESS_FROM_BYTES) continue
    const blob = readFileSync(f.source)
    // The first 4 KiB find a candidate, the whole blob confirms it.
    let offset = image.indexOf(blob.subarray(0, 4096))
    while (offset >= 0 && !image.subarray(offset, offset + blob.length).equals(blob))
      offset = image.indexOf(blob.subarray(0, 4096), offset + 1)
    if (offset >= 0) index[f.name] = [offset, blob.length]
  }
  const text = JSON.stringify(index)
  if (text.length > BLOB_INDEX_BYTES) throw new Error(`compile: the blob index needs ${text.length} bytes, more than ${BLOB_INDEX_BYTES}`)
  const fd = openSync(exe, 'r+')
  try {
    writeSync(fd, Buffer.from(text.padEnd(BLOB_INDEX_BYTES, ' '), 'latin1'), 0, BLOB_INDEX_BYTES, at)
  } finally {
    closeSync(fd)
  }
  return Object.keys(index).length
}

const relPath = (from: string, to: string) => {
  const r = relative(from, to)
  return r.startsWith('.') ? r : `./${r}`
}

const writeEmpty = (path: string) => {
  writeFileSync(path, JSON.stringify({ generated: '', datasets: {} }) + '\n')
  return path
}

/** Drops compressed copies of artifacts no longer built (older than an hour: a parallel compile may still use them). */
function pruneEmbedCache(embedDir: string, keep: Set<string>) {
  const cutoff = Date.now() - 3600_000
  for (const name of readdirSync(embedDir)) {
    const path = join(embedDir, name)
    if (!keep.has(path) && !name.endsWith('.raw') && statSync(path).mtimeMs < cutoff) rmSync(path, { force: true })
  }
}

/** The file to embed for an artifact: a cached zstd copy (named by content hash) when it pays, else the artifact. */
function embeddable(
  path: string,
  bytes: number,
  sha256: string,
  embedDir: string,
  log: (line: string) => void,
): { source: string; encoding: EmbeddedFile['encoding']; embeddedBytes: number } {
  if (bytes < COMPRESS_FROM_BYTES) return { source: path, encoding: 'raw', embeddedBytes: bytes }
  const zst = join(embedDir, `${sha256}.zst`)
  const raw = join(embedDir, `${sha256}.raw`)
  if (existsSync(raw)) return { source: path, encoding: 'raw', embeddedBytes: bytes }
  if (!existsSync(zst)) {
    // Seconds to a minute for the large artifacts, once per content: said before and after, so a quiet terminal is explained.
    const name = relative(ROOT, path)
    log(`compile: compressing ${name} (${(bytes / 2 ** 20).toFixed(1)} MiB, zstd level ${ZSTD_LEVEL})…`)
    const t = performance.now()
    const packed = Bun.zstdCompressSync(readFileSync(path), { level: ZSTD_LEVEL })
    log(`compile: compressed ${name} to ${(packed.length / 2 ** 20).toFixed(1)} MiB in ${sec(since(t))}`)
    if (packed.length > bytes * COMPRESS_WORTH) {
      writeFileSync(raw, '') // remembered: this one does not compress
      return { source: path, encoding: 'raw', embeddedBytes: bytes }
    }
    writeFileSync(`${zst}.tmp`, packed)
    renameSync(`${zst}.tmp`, zst)
  }
  return { source: zst, encoding: 'zstd', embeddedBytes: statSync(zst).size }
}

if (import.meta.main) {
  const flags = parseFlags(process.argv.slice(2))
  try {
    const r = await compile({ outfile: flags.get('--out'), dataDir: flags.get('--data'), bytecode: flags.has('--bytecode') })
    for (const f of r.files)
      console.error(
        `  ${f.name.padEnd(32)} ${(f.bytes / 2 ** 20).toFixed(1).padStart(7)} MiB ` +
          `-> ${(f.embeddedBytes / 2 ** 20).toFixed(1).padStart(7)} MiB ${f.encoding}`,
      )
  } catch (e) {
    console.error((e as Error).message)
    process.exit(1)
  }
}
