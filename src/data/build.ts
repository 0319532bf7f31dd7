/**
 * `almanac data build [--only <domain>] [--force]`: runs each domain's dataset builders, writes their
 * artifacts into `datasets/out/` and records them in `manifest.json`.
 *
 * - Incremental: a builder runs only when its inputs changed (the sources' content hashes and versions,
 *   the builder's revision and artifact names) or an artifact is missing or altered.
 * - Atomic: a builder writes into its own staging folder; artifacts are renamed into place only when
 *   the whole builder succeeded, so a failed or interrupted build never leaves half an artifact, and a
 *   server that has the old file open keeps reading the old inode.
 * - Safe to run twice at once (several engineers, CI): the manifest is re-read and merged under a lock.
 * - One missing source fails its builder only; the others still build and the run ends with a summary.
 */
import { createHash } from 'node:crypto'
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { byHand, download, type DownloadOptions, PinMismatchError } from './download.ts'
import type { Domain } from '../domains/types.ts'
import { progress } from '../lib/progress.ts'
import { HashCache } from './hashes.ts'
import { readManifest, SOURCE_OUT_DIR } from './open.ts'
import type { BuildContext, DatasetBuilder, Manifest, ManifestEntry, ResolvedSource, Source } from './types.ts'
import { provenance } from './provenance.ts'
import { processAlive, sweepOrphans } from '../lib/orphans.ts'
import { fileNameOfUrl, mirrorPathOfUrl, sourceLookup, upstreamFiles, urlPin, urlServesMirrorFile } from './upstream.ts'

export interface BuildOptions {
  outDir?: string
  /** Domain names to build; all when empty. */
  only?: string[]
  /** Rebuild even when inputs are unchanged. */
  force?: boolean
  /** Mirror root (default `ALMANAC_MIRROR`). */
  mirror?: string
  /** Never download (default: `ALMANAC_OFFLINE` is set). */
  offline?: boolean
  /** Where downloads go instead of the upstream hosts (default `ALMANAC_UPSTREAM_BASE`; see upstream.ts). */
  upstreamBase?: string
  /** Download deadlines, tries and progress (defaults: download.ts, from ALMANAC_DOWNLOAD_*). */
  downloads?: Omit<DownloadOptions, 'base'>
  log?: (line: string) => void
  /** Looks up a source by id (default: among the sources the given domains declare). Tests pass their own. */
  sources?: (id: string) => Source
}

const ROOT = resolve(import.meta.dir, '../..')

export class SourceMissingError extends Error {
  override name = 'SourceMissingError'
}

/** One or more builders failed; the message lists each with its reason. */
export class DatasetBuildError extends Error {
  override name = 'DatasetBuildError'
}

interface ResolveOptions {
  mirror?: string
  offline?: boolean
  downloadDir: string
  hashes: HashCache
  log: (line: string) => void
  downloads: DownloadOptions
}

/** The installed npm package folder, whether or not its `exports` expose package.json. */
function npmPackageDir(name: string): string | undefined {
  try {
    return dirname(Bun.resolveSync(`${name}/package.json`, ROOT))
  } catch {
    for (let dir = ROOT; ; dir = dirname(dir)) {
      const candidate = join(dir, 'node_modules', name)
      if (existsSync(join(candidate, 'package.json'))) return candidate
      if (dirname(dir) === dir) return undefined
    }
  }
}

/** Checks a found file against its pin (the source's sha256, or its URL form's; folders are not pinned). */
function verified(source: Source, path: string, via: ResolvedSource['via'], hashes: HashCache, pin: string | undefined): ResolvedSource {
  if (pin && statSync(path).isFile()) {
    const sha = hashes.of(path)
    if (sha !== pin.toLowerCase()) {
      throw new SourceMissingError(
        `Source ${source.id} (${source.version}) at ${path} (${via}) has sha256 ${sha}, but its domain's sources.ts pins ${pin}: the ` +
          `file is not the pinned release. Replace it with the pinned file, or update the source's version, date and sha256 together.`,
      )
    }
  }
  return { ...source, path, via }
}

/** A source made of several upstream files (`files`): each file in `folder` checked against its own pin. */
function verifiedFiles(source: Source, folder: string, via: ResolvedSource['via'], hashes: HashCache): ResolvedSource {
  for (const f of upstreamFiles(source)) {
    const path = join(folder, basename(f.rel))
    if (!existsSync(path))
      throw new SourceMissingError(
        `Source ${source.id} (${source.version}): ${folder} lacks ${basename(f.rel)} (from ${f.url}); fetch it again.`,
      )
    verified(source, path, via, hashes, f.pin)
  }
  return { ...source, path: folder, via }
}

/** One of a source's `files` as a source of its own, for download(). */
export const fileSource = (source: Source, f: { url: string; pin: string | undefined }): Source => ({
  ...source,
  url: f.url,
  sha256: f.pin,
  urlSha256: undefined,
  files: undefined,
})

/** Finds a source on this machine: mirror, npm package, system path, then URL (sha256 checked). */
export async function resolveSource(source: Source, options: ResolveOptions): Promise<ResolvedSource> {
  const { mirror, hashes } = options
  const tried: string[] = []
  if (source.mirror) {
    if (mirror) {
      const path = join(mirror, source.mirror)
      if (existsSync(path)) return verified(source, path, 'mirror', hashes, source.sha256)
      tried.push(`ALMANAC_MIRROR=${mirror} holds no ${source.mirror}`)
    } else tried.push('ALMANAC_MIRROR is not set')
  }
  // A folder made by `almanac data fetch` holds the upstream form of what the mirror keeps derived.
  if (source.files?.length) {
    const folder = mirror && join(mirror, mirrorPathOfUrl(source)!)
    if (folder && existsSync(folder)) return verifiedFiles(source, folder, 'mirror', hashes)
  }
  const fetched = source.url && !urlServesMirrorFile(source) ? mirrorPathOfUrl(source) : undefined
  if (mirror && fetched && existsSync(join(mirror, fetched)))
    return verified(source, join(mirror, fetched), 'mirror', hashes, urlPin(source))
  if (source.npm) {
    const dir = npmPackageDir(source.npm.package)
    if (dir && existsSync(join(dir, source.npm.path))) return verified(source, join(dir, source.npm.path), 'npm', hashes, source.sha256)
    tried.push(dir ? `npm package ${source.npm.package} has no ${source.npm.path}` : `npm package ${source.npm.package} is not installed`)
  }
  if (source.system) {
    if (existsSync(source.system)) return verified(source, source.system, 'system', hashes, source.sha256)
    tried.push(`${source.system} does not exist`)
  }
  if (source.files?.length) {
    const folder = join(options.downloadDir, source.id)
    const absent = upstreamFiles(source).filter((f) => !existsSync(join(options.downloadDir, f.rel.replace(/^upstream\//, ''))))
    if (!absent.length) return verifiedFiles(source, folder, 'url', hashes)
    if (options.offline) tried.push(`ALMANAC_OFFLINE is set, so its ${absent.length} files (${absent[0]!.url} …) were not downloaded`)
    else {
      try {
        for (const f of absent) await download(fileSource(source, f), join(folder, basename(f.rel)), options.log, options.downloads)
        return verifiedFiles(source, folder, 'url', hashes)
      } catch (e) {
        if (e instanceof SourceMissingError) throw e
        tried.push(`downloading its files failed (${(e as Error).message})`)
      }
    }
  }
  if (source.url) {
    const path = join(options.downloadDir, source.id, fileNameOfUrl(source.url))
    if (existsSync(path)) return verified(source, path, 'url', hashes, urlPin(source))
    if (options.offline) tried.push(`ALMANAC_OFFLINE is set, so ${source.url} was not downloaded`)
    else {
      try {
        await download(source, path, options.log, options.downloads)
        return verified(source, path, 'url', hashes, urlPin(source))
      } catch (e) {
        if (e instanceof PinMismatchError) throw new SourceMissingError(e.message)
        tried.push(`downloading ${source.url} failed (${(e as Error).message.replace(/\. To supply .*$/, '')})`)
      }
    }
  }
  throw missing(source, tried)
}

function missing(source: Source, tried: string[]) {
  const ways = [
    source.mirror && `point ALMANAC_MIRROR at a mirror folder holding ${source.mirror}`,
    source.npm && `install the npm package ${source.npm.package} (bun install)`,
    source.system && `install the system file ${source.system}`,
    source.files?.length &&
      `let this machine download its ${source.files.length} files (${source.files[0]!.url} …), or fetch them elsewhere with \`almanac ` +
        `data fetch --to DIR\` and set ALMANAC_MIRROR=DIR`,
    source.url && `let this machine download ${source.url}${urlPin(source) ? ` (sha256 ${urlPin(source)})` : ''}; or ${byHand(source)}`,
  ].filter(Boolean)
  return new SourceMissingError(
    `Source ${source.id} (${source.version}, ${source.date}) is missing: ${tried.join('; ') || 'it declares no way to get it'}. To ` +
      `supply it: ${
        ways.join('; or ') || 'declare a mirror path, npm package, system path or URL for it in ' + 'src/domains/<name>/sources.ts'
      }.`,
  )
}

/** Runs `fn` holding `<outDir>/.manifest.lock`; a lock left by a dead process is taken over. */
function withManifestLock<T>(outDir: string, fn: () => T): T {
  const lock = join(outDir, '.manifest.lock')
  const until = Date.now() + 60_000
  for (;;) {
    try {
      const fd = openSync(lock, 'wx')
      writeSync(fd, String(process.pid))
      closeSync(fd)
      break
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e
      const holder = Number(readFileSync(lock, 'utf8').trim() || 0)
      if (!holder || !processAlive(holder) || Date.now() > until) rmSync(lock, { force: true })
      else Bun.sleepSync(25)
    }
  }
  try {
    return fn()
  } finally {
    rmSync(lock, { force: true })
  }
}

/** Re-reads the manifest, applies this build's entries, and replaces the file atomically. */
function saveEntry(outDir: string, entry: ManifestEntry) {
  withManifestLock(outDir, () => {
    const manifest = readManifest(outDir)
    manifest.datasets[entry.id] = entry
    const sorted: Manifest = {
      generated: new Date().toISOString(),
      datasets: Object.fromEntries(Object.entries(manifest.datasets).sort(([a], [b]) => a.localeCompare(b))),
    }
    const tmp = join(outDir, `.manifest.${process.pid}.json`)
    writeFileSync(tmp, JSON.stringify(sorted, null, 2) + '\n')
    renameSync(tmp, join(outDir, 'manifest.json'))
  })
}

/** Removes staging folders of builds whose process is gone. */
const sweepStaging = (outDir: string) => sweepOrphans(outDir, /^\.staging-.+-(\d+)$/)

const countsText = (counts: Record<string, number>) =>
  Object.entries(counts)
    .map(([k, v]) => `${v.toLocaleString('en')} ${k}`)
    .join(', ')

export async function buildDatasets(domains: Domain[], options: BuildOptions = {}): Promise<Manifest> {
  const outDir = resolve(options.outDir ?? SOURCE_OUT_DIR)
  const log = options.log ?? ((l: string) => console.error(l))
  const lookup = options.sources ?? sourceLookup(domains.flatMap((d) => d.sources ?? []))
  mkdirSync(outDir, { recursive: true })
  sweepStaging(outDir)
  const hashes = new HashCache(join(outDir, '.cache', 'hashes.json'))
  const resolveOptions: ResolveOptions = {
    mirror: options.mirror ?? (process.env.ALMANAC_MIRROR || undefined),
    offline: options.offline ?? !!process.env.ALMANAC_OFFLINE,
    downloadDir: join(outDir, '.downloads'),
    hashes,
    log,
    downloads: { ...options.downloads, ...(options.upstreamBase === undefined ? {} : { base: options.upstreamBase }) },
  }

  const unknown = (options.only ?? []).filter((name) => !domains.some((d) => d.name === name))
  if (unknown.length)
    throw new DatasetBuildError(`--only: unknown domain ${unknown.join(', ')} (domains: ${domains.map((d) => d.name).join(', ')})`)
  const chosen = domains.filter((d) => !options.only?.length || options.only.includes(d.name))

  const failures: string[] = []
  let built = 0
  try {
    for (const domain of chosen) {
      if (!domain.builders?.length) {
        if (options.only?.length) log(`${domain.name}: no datasets to build`)
        continue
      }
      for (const builder of domain.builders) {
        try {
          if (await buildOne(builder, { outDir, log, lookup, force: !!options.force, hashes, resolveOptions })) built++
        } catch (e) {
          // A missing source is explained in the summary; an unexpected failure gets its stack here.
          log(
            `${builder.id}: FAILED: ${
              e instanceof SourceMissingError
                ? 'a source is missing or wrong (see the summary ' + 'below)'
                : ((e as Error).stack ?? String(e))
            }`,
          )
          failures.push(`${builder.id}: ${(e as Error).message}`)
        }
      }
    }
  } finally {
    hashes.save()
  }
  if (failures.length)
    throw new DatasetBuildError(`${failures.length} dataset${failures.length > 1 ? 's' : ''} failed to build:\n  ${failures.join('\n  ')}`)
  if (!built) log('datasets: everything is up to date')
  return readManifest(outDir)
}

interface BuildOneOptions {
  outDir: string
  log: (line: string) => void
  lookup: (id: string) => Source
  force: boolean
  hashes: HashCache
  resolveOptions: ResolveOptions
}

/** Builds one dataset when its inputs changed; returns whether it ran. */
async function buildOne(builder: DatasetBuilder, o: BuildOneOptions): Promise<boolean> {
  const resolved = new Map<string, ResolvedSource & { sha256: string }>()
  const unavailable: { id: string; reason: string }[] = []
  for (const id of builder.sources) {
    let source: ResolvedSource
    try {
      source = await resolveSource(o.lookup(id), o.resolveOptions)
    } catch (e) {
      if (!(e instanceof SourceMissingError) || !builder.optional?.includes(id)) throw e
      o.log(`${builder.id}: warning: optional source ${id} is unavailable; building without it (${e.message})`)
      unavailable.push({ id, reason: e.message })
      continue
    }
    resolved.set(id, { ...source, sha256: o.hashes.of(source.path) })
  }
  // The route a source took is not an input: the same bytes from the mirror or from npm build the same
  // artifact. A missing optional source is: once it can be found, the dataset is rebuilt with it.
  const inputs = createHash('sha256')
    .update(
      JSON.stringify({
        id: builder.id,
        revision: builder.revision,
        artifacts: builder.artifacts,
        sources: [...resolved.values()].map((s) => [s.id, s.version, s.sha256]),
        ...(unavailable.length ? { unavailable: unavailable.map((u) => u.id) } : {}),
      }),
    )
    .digest('hex')
  const previous = readManifest(o.outDir).datasets[builder.id]
  const intact = (a: { name: string; bytes: number; sha256: string }) => {
    const path = join(o.outDir, a.name)
    return existsSync(path) && statSync(path).size === a.bytes && o.hashes.of(path) === a.sha256
  }
  if (!o.force && previous?.inputs === inputs && previous.artifacts.every(intact)) {
    o.log(`${builder.id}: up to date (${countsText(previous.counts)})`)
    return false
  }
  const entry = await runBuilder(builder, resolved, inputs, o, unavailable)
  if (previous?.inputs === inputs) {
    for (const a of entry.artifacts) {
      const before = previous.artifacts.find((p) => p.name === a.name)
      if (before && before.sha256 !== a.sha256)
        o.log(`${builder.id}: warning: ${a.name} differs from the previous build of the same inputs; the builder is not deterministic`)
    }
  }
  saveEntry(o.outDir, entry)
  return true
}

async function runBuilder(
  builder: DatasetBuilder,
  resolved: Map<string, ResolvedSource & { sha256: string }>,
  inputs: string,
  o: BuildOneOptions,
  unavailable: { id: string; reason: string }[],
): Promise<ManifestEntry> {
  const { outDir, log } = o
  const staging = join(outDir, `.staging-${builder.id}-${process.pid}`)
  rmSync(staging, { recursive: true, force: true })
  mkdirSync(staging, { recursive: true })
  const started = performance.now()
  log(`${builder.id}: building from ${[...resolved.values()].map((s) => `${s.id} ${s.version} (${s.via} ${s.path})`).join(', ')}`)
  const ctx: BuildContext = {
    source: async (id) => {
      const s = resolved.get(id)
      if (s) return s
      const missing = unavailable.find((u) => u.id === id)
      if (missing) throw new SourceMissingError(missing.reason)
      throw new Error(`builder ${builder.id} asked for source ${id}, which it does not declare in its sources`)
    },
    has: (id) => resolved.has(id),
    out: (name) => {
      if (!builder.artifacts.includes(name))
        throw new Error(`builder ${builder.id} asked to write ${name}, which is not among its artifacts (${builder.artifacts.join(', ')})`)
      return join(staging, name)
    },
    progress: (label, total) => progress(`${builder.id}: ${label}`, total, log),
    log: (message) => log(`${builder.id}: ${message}`),
  }
  try {
    const result = await builder.build(ctx)
    const artifacts = builder.artifacts.map((name) => {
      const path = join(staging, name)
      if (!existsSync(path)) throw new Error(`builder ${builder.id} did not write its artifact ${name}`)
      for (const suffix of ['-wal', '-shm', '-journal'])
        if (existsSync(path + suffix))
          throw new Error(
            `builder ${builder.id} left ${name}${suffix} behind: close the database (and use journal_mode=DELETE) before returning`,
          )
      return { name, bytes: statSync(path).size, sha256: o.hashes.of(path) }
    })
    for (const { name } of artifacts) {
      mkdirSync(dirname(join(outDir, name)), { recursive: true })
      renameSync(join(staging, name), join(outDir, name))
      o.hashes.moved(join(staging, name), join(outDir, name))
    }
    const sources = [...resolved.values()].map((s) => ({
      id: s.id,
      version: s.version,
      date: s.date,
      via: s.via,
      license: s.license,
      attribution: s.attribution,
      ...(s.duties ? { duties: s.duties } : {}),
      ...(s.url ? { url: s.url } : {}),
      ...(s.homepage ? { homepage: s.homepage } : {}),
      sha256: s.sha256,
    }))
    const version = result.version ?? [...new Set(sources.map((s) => s.version))].join('+')
    const { date, license, attribution } = provenance(sources)
    log(`${builder.id}: built in ${((performance.now() - started) / 1000).toFixed(1)} s: ${countsText(result.counts)}`)
    return {
      id: builder.id,
      version,
      ...(date ? { date } : {}),
      built: new Date().toISOString(),
      revision: builder.revision,
      inputs,
      sources,
      license: license ?? '',
      attribution,
      counts: result.counts,
      artifacts,
      ...(result.notes?.length ? { notes: result.notes } : {}),
      ...(unavailable.length ? { unavailable } : {}),
    }
  } finally {
    rmSync(staging, { recursive: true, force: true })
  }
}
