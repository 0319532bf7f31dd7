/**
 * Finds the built datasets at run time.
 * - Source run: `ALMANAC_DATA_DIR` (config.dataDir), else `datasets/out` of the source tree.
 * - Compiled executable: the embedded artifacts, extracted once into `<root>/<content hash>` where root is
 *   `ALMANAC_DATA_DIR`, else `$XDG_CACHE_HOME/almanac`, else `~/.cache/almanac`. If `ALMANAC_DATA_DIR`
 *   itself holds a `manifest.json` (datasets built elsewhere with `almanac data build`), those are used
 *   as they are: the way to run newer datasets without a new executable.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { embeddedData } from './embedded.ts'
import { cacheRoot, DataDirError, type Extraction, extractEmbedded, startExtraction } from './extract.ts'
import type { DataDir, Manifest } from './types.ts'
import { logger, asLogger, type LogSink } from '../lib/logger.ts'

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

export function openDataDir(dir: string = SOURCE_OUT_DIR): DataDir {
  return {
    dir,
    manifest: readManifest(dir),
    path: (name) => join(dir, name),
    has: (name) => existsSync(join(dir, name)),
  }
}

/** The data directory this process serves from (extracting the embedded datasets when needed). */
export async function resolveDataDir(
  options: { dataDir?: string; env?: Record<string, string | undefined> } = {},
  sink: LogSink = logger,
): Promise<DataDir> {
  const log = asLogger(sink)
  const env = options.env ?? process.env
  const embedded = embeddedData()
  if (!embedded) {
    const dir = options.dataDir ? resolve(options.dataDir) : SOURCE_OUT_DIR
    if (!existsSync(join(dir, 'manifest.json')))
      log({
        level: 'warn',
        msg: `datasets: ${dir} holds no manifest.json; build the datasets with \`almanac data build\` (or set ALMANAC_DATA_DIR)`,
      })
    return openDataDir(dir)
  }
  if (options.dataDir && existsSync(join(resolve(options.dataDir), 'manifest.json'))) {
    const dir = resolve(options.dataDir)
    log(`datasets: using ${dir} (it holds a manifest.json); the embedded datasets are not used`)
    return openDataDir(dir)
  }
  const dir = await extractEmbedded(embedded, cacheRoot(env, options.dataDir), log)
  log(`datasets: serving the embedded datasets from ${dir}`)
  return openDataDir(dir)
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
export async function openServedData(
  options: { dataDir?: string; env?: Record<string, string | undefined> } = {},
  sink: LogSink = (l) => console.error(l),
): Promise<ServedData> {
  const log = asLogger(sink)
  const embedded = embeddedData()
  const env = options.env ?? process.env
  if (!embedded || (options.dataDir && existsSync(join(resolve(options.dataDir), 'manifest.json'))))
    return { data: await resolveDataDir(options, log) }
  const extraction = startExtraction(embedded, cacheRoot(env, options.dataDir), log)
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

/** The artifact names of `datasets` in `data`'s manifest. */
export const artifactsOf = (data: DataDir, datasets: string[]): string[] =>
  datasets.flatMap((id) => data.manifest.datasets[id]?.artifacts.map((a) => a.name) ?? [])

/** The manifest without extracting anything (for `almanac version`). */
export function currentManifest(options: { dataDir?: string } = {}): { manifest: Manifest; from: string } {
  const embedded = embeddedData()
  if (options.dataDir && existsSync(join(resolve(options.dataDir), 'manifest.json')))
    return { manifest: readManifest(resolve(options.dataDir)), from: resolve(options.dataDir) }
  if (embedded) return { manifest: JSON.parse(readFileSync(embedded.manifest, 'utf8')), from: 'embedded' }
  const dir = options.dataDir ? resolve(options.dataDir) : SOURCE_OUT_DIR
  return { manifest: readManifest(dir), from: dir }
}
