/**
 * Finds the built datasets at run time. One rule, `dataSource`, says which directory a server with given
 * settings serves; `almanac serve` (at start and on SIGHUP), `data verify`, `data pack` and the completion
 * of a partial bundle all ask it:
 * 1. the directory recorded by `almanac data activate` (`<state dir>/active-data`), when it holds a manifest;
 * 2. source run: `ALMANAC_DATA_DIR` (config.dataDir), else `datasets/out` of the source tree;
 * 3. compiled executable: `ALMANAC_DATA_DIR` when it holds a `manifest.json` (datasets built elsewhere
 *    with `almanac data build`, served as they are), else the embedded artifacts, extracted once into
 *    `<root>/<content hash>` where root is `ALMANAC_DATA_DIR`, else `$XDG_CACHE_HOME/almanac`, else
 *    `~/.cache/almanac`.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { activatedDir, hasManifest } from './activation.ts'
import { type EmbeddedData, embeddedData } from './embedded.ts'
import { cacheRoot, DataDirError, type Extraction, extractEmbedded, isExtracted, startExtraction } from './extract.ts'
import type { DataDir, Manifest } from './types.ts'
import { logger, asLogger, type Logger, type LogSink } from '../lib/logger.ts'

export const SOURCE_OUT_DIR = resolve(import.meta.dir, '../../datasets/out')

export function readManifest(dir: string): Manifest {
  const path = join(dir, 'manifest.json')
  if (!existsSync(path)) return { generated: '', datasets: {} }
  try {
    return JSON.parse(readFileSync(path, 'utf8'))
  } catch (e) {
    throw new DataDirError(`${path} is not valid JSON (${(e as Error).message}); rebuild the datasets with \`almanac data build\`.`)
  }
}

/** The settings that choose the data directory (a server's config has them all). */
export interface DataOptions {
  /** ALMANAC_DATA_DIR. */
  dataDir?: string
  /** ALMANAC_STATE_DIR, where `almanac data activate` records its choice; unset: no activation is looked at. */
  stateDir?: string
  env?: Record<string, string | undefined>
}

/** Which directory a server with these settings serves, and why. */
export type DataSource =
  | { from: 'activated'; dir: string }
  | { from: 'data-dir'; dir: string }
  | { from: 'embedded'; dir: string; root: string; embedded: EmbeddedData }
  | { from: 'checkout'; dir: string }

/** The one rule (this file's header) choosing the directory a server serves. Nothing is read but small files. */
export function dataSource(options: DataOptions = {}): DataSource {
  const activated = options.stateDir ? activatedDir(options.stateDir) : undefined
  if (activated) return { from: 'activated', dir: resolve(activated) }
  const embedded = embeddedData()
  const dataDir = options.dataDir ? resolve(options.dataDir) : undefined
  if (!embedded) return dataDir ? { from: 'data-dir', dir: dataDir } : { from: 'checkout', dir: SOURCE_OUT_DIR }
  if (dataDir && hasManifest(dataDir)) return { from: 'data-dir', dir: dataDir }
  const root = cacheRoot(options.env ?? process.env, dataDir)
  return { from: 'embedded', dir: join(root, embedded.key), root, embedded }
}

/** Why that directory, in words for an operator. */
export function describeSource(source: DataSource): string {
  switch (source.from) {
    case 'activated':
      return 'the directory `almanac data activate` recorded in ALMANAC_STATE_DIR/active-data'
    case 'data-dir':
      return 'ALMANAC_DATA_DIR'
    case 'embedded':
      return "the executable's own datasets, extracted"
    case 'checkout':
      return 'datasets/out of this checkout'
  }
}

/** Whether the source's directory is there to be read (an executable's datasets may not be extracted yet). */
export const sourceReady = (source: DataSource): boolean =>
  source.from === 'embedded' ? isExtracted(source.dir, source.embedded) : hasManifest(source.dir)

/**
 * The source's directory, ready to open: the executable's datasets are extracted first when they are not
 * yet (each artifact checked against its sha256 as it is written).
 */
export async function sourceDir(source: DataSource, log: (line: string) => void = () => {}): Promise<string> {
  if (source.from !== 'embedded') return source.dir
  return extractEmbedded(source.embedded, source.root, log)
}

export function openDataDir(dir: string = SOURCE_OUT_DIR): DataDir {
  return {
    dir,
    manifest: readManifest(dir),
    path: (name) => join(dir, name),
    has: (name) => existsSync(join(dir, name)),
  }
}

/** The data directory this process serves from (extracting the embedded datasets when needed). */
export async function resolveDataDir(options: DataOptions = {}, sink: LogSink = logger): Promise<DataDir> {
  const log = asLogger(sink)
  const source = dataSource(options)
  announce(source, log)
  if (source.from !== 'embedded') return openDataDir(source.dir)
  const dir = await sourceDir(source, log)
  log(`datasets: serving the embedded datasets from ${dir}`)
  return openDataDir(dir)
}

/** The log line saying where the datasets come from, and a warning when there are none. */
function announce(source: DataSource, log: Logger) {
  if (source.from === 'activated') log(`datasets: ${source.dir} was activated with \`almanac data activate\``)
  else if (source.from === 'data-dir' && embeddedData())
    log(`datasets: using ${source.dir} (it holds a manifest.json); the embedded datasets are not used`)
  if (source.from !== 'embedded' && !hasManifest(source.dir))
    log({
      level: 'warn',
      msg: `datasets: ${source.dir} holds no manifest.json; build the datasets with \`almanac data build\` (or set ALMANAC_DATA_DIR)`,
    })
}

/** The data a server starts on: the directory, and the extraction still writing it (first start of the executable). */
export interface ServedData {
  data: DataDir
  /** Present while the embedded datasets are being extracted: each domain waits for its own artifacts. */
  extraction?: Extraction
}

/**
 * Like resolveDataDir, but an extraction is started and not waited for: the server listens at once and
 * each domain opens as soon as its artifacts are in place (`artifactsOf` names them).
 */
export async function openServedData(options: DataOptions = {}, sink: LogSink = (l) => console.error(l)): Promise<ServedData> {
  const log = asLogger(sink)
  const source = dataSource(options)
  if (source.from !== 'embedded') {
    announce(source, log)
    return { data: openDataDir(source.dir) }
  }
  const embedded = source.embedded
  const extraction = startExtraction(embedded, source.root, log)
  log(`datasets: serving the embedded datasets from ${extraction.dir}`)
  if (!extraction.writing) return { data: openDataDir(extraction.dir) }
  // The folder's manifest.json is written last: until then the embedded one describes it.
  const dir = extraction.dir
  const data: DataDir = {
    dir,
    manifest: JSON.parse(readFileSync(embedded.manifest, 'utf8')),
    path: (name) => join(dir, name),
    has: (name) => existsSync(join(dir, name)),
  }
  extraction.done.catch((e) => log({ level: 'error', msg: 'extracting the datasets failed', error: String(e) }))
  return { data, extraction }
}

/**
 * The directory a SIGHUP swaps in: the one `dataSource` chooses now (extracted first when it is the
 * executable's own), or undefined when it holds no manifest (the server then reads its current one again).
 */
export async function reloadDir(options: DataOptions, sink: LogSink = logger): Promise<string | undefined> {
  const source = dataSource(options)
  if (source.from !== 'embedded') return hasManifest(source.dir) ? source.dir : undefined
  return sourceDir(source, asLogger(sink))
}

/** The artifact names of `datasets` in `data`'s manifest. */
export const artifactsOf = (data: DataDir, datasets: string[]): string[] =>
  datasets.flatMap((id) => data.manifest.datasets[id]?.artifacts.map((a) => a.name) ?? [])

/** The manifest without extracting anything (for `almanac version`); `stateDir`: an activated directory first. */
export function currentManifest(options: { dataDir?: string; stateDir?: string } = {}): { manifest: Manifest; from: string } {
  const embedded = embeddedData()
  // What `almanac data activate` recorded is what the server serves, before ALMANAC_DATA_DIR (as `dataSource`).
  const activated = options.stateDir ? activatedDir(options.stateDir) : undefined
  if (activated && hasManifest(activated)) return { manifest: readManifest(resolve(activated)), from: resolve(activated) }
  if (options.dataDir && hasManifest(resolve(options.dataDir)))
    return { manifest: readManifest(resolve(options.dataDir)), from: resolve(options.dataDir) }
  if (embedded) return { manifest: JSON.parse(readFileSync(embedded.manifest, 'utf8')), from: 'embedded' }
  const dir = options.dataDir ? resolve(options.dataDir) : SOURCE_OUT_DIR
  return { manifest: readManifest(dir), from: dir }
}
