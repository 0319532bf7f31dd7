/**
 * `almanac data build [--only <domain>]`: runs each domain's dataset builders, writes their artifacts
 * into `datasets/out/` and records them in `manifest.json`. A builder runs only when its inputs (source
 * files, versions, builder revision) changed or an artifact is missing; it writes into a staging folder
 * that is moved into place only on success, so a failed build never leaves half an artifact behind.
 */
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { sourceById } from '../../datasets/sources.ts'
import type { Domain } from '../domains/types.ts'
import { progress } from '../lib/progress.ts'
import { readManifest, SOURCE_OUT_DIR } from './open.ts'
import type { BuildContext, DatasetBuilder, Manifest, ManifestEntry, ResolvedSource, Source } from './types.ts'

export interface BuildOptions {
  outDir?: string
  /** Domain names to build; all when empty. */
  only?: string[]
  /** Rebuild even when inputs are unchanged. */
  force?: boolean
  mirror?: string
  log?: (line: string) => void
}

const ROOT = resolve(import.meta.dir, '../..')

export class SourceMissingError extends Error {}

/** Finds a source on this machine: mirror, npm package, system path, then URL (sha256 checked). */
export async function resolveSource(source: Source, mirror: string | undefined, cacheDir: string): Promise<ResolvedSource> {
  if (mirror && source.mirror) {
    const path = join(mirror, source.mirror)
    if (existsSync(path)) return { ...source, path, via: 'mirror' }
  }
  if (source.npm) {
    try {
      const pkg = Bun.resolveSync(`${source.npm.package}/package.json`, ROOT)
      const path = join(pkg, '..', source.npm.path)
      if (existsSync(path)) return { ...source, path, via: 'npm' }
    } catch {
      // not installed: fall through
    }
  }
  if (source.system && existsSync(source.system)) return { ...source, path: source.system, via: 'system' }
  if (source.url) {
    const path = join(cacheDir, `${source.id}${source.url.replace(/^.*?(\.[a-z0-9.]+)?$/i, '$1')}`)
    if (!existsSync(path)) {
      try {
        const res = await fetch(source.url)
        if (!res.ok) throw new Error(`HTTP ${res.status}`)
        const bytes = new Uint8Array(await res.arrayBuffer())
        const sha = createHash('sha256').update(bytes).digest('hex')
        if (source.sha256 && sha !== source.sha256) throw new Error(`sha256 ${sha} does not match the pinned ${source.sha256}`)
        mkdirSync(cacheDir, { recursive: true })
        writeFileSync(path, bytes)
      } catch (e) {
        throw missing(source, `fetching ${source.url} failed (${(e as Error).message})`)
      }
    }
    return { ...source, path, via: 'url' }
  }
  throw missing(source, 'no way to fetch it was found')
}

const missing = (source: Source, why: string) => {
  const ways = [
    source.mirror && `set ALMANAC_MIRROR to a mirror folder holding ${source.mirror}`,
    source.npm && `install the npm package ${source.npm.package} (bun install)`,
    source.system && `install the system file ${source.system}`,
    source.url && `connect this machine to the internet to download ${source.url}`,
  ].filter(Boolean)
  return new SourceMissingError(`Source ${source.id} (${source.version}) is missing: ${why}. To supply it: ${ways.join('; or ')}.`)
}

/** Cheap, stable fingerprint of a file or folder: names, sizes and modification times. */
function fingerprint(path: string): string {
  const hash = createHash('sha256')
  const walk = (p: string, rel: string) => {
    const st = statSync(p)
    if (st.isDirectory()) for (const name of readdirSync(p).sort()) walk(join(p, name), `${rel}/${name}`)
    else hash.update(`${rel}\0${st.size}\0${Math.floor(st.mtimeMs)}\n`)
  }
  walk(path, '')
  return hash.digest('hex')
}

export const sha256File = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex')

function writeManifest(outDir: string, manifest: Manifest) {
  const sorted: Manifest = { generated: manifest.generated, datasets: Object.fromEntries(Object.entries(manifest.datasets).sort(([a], [b]) => a.localeCompare(b))) }
  const tmp = join(outDir, `.manifest.${process.pid}.json`)
  writeFileSync(tmp, JSON.stringify(sorted, null, 2) + '\n')
  renameSync(tmp, join(outDir, 'manifest.json'))
}

export async function buildDatasets(domains: Domain[], options: BuildOptions = {}): Promise<Manifest> {
  const outDir = options.outDir ?? SOURCE_OUT_DIR
  const log = options.log ?? ((l: string) => console.error(l))
  const mirror = options.mirror ?? process.env.ALMANAC_MIRROR
  const cacheDir = join(outDir, '.downloads')
  mkdirSync(outDir, { recursive: true })

  const unknown = (options.only ?? []).filter((name) => !domains.some((d) => d.name === name))
  if (unknown.length) throw new Error(`--only: unknown domain ${unknown.join(', ')} (domains: ${domains.map((d) => d.name).join(', ')})`)
  const chosen = domains.filter((d) => !options.only?.length || options.only.includes(d.name))

  const manifest = readManifest(outDir)
  for (const domain of chosen) {
    for (const builder of domain.builders ?? []) {
      const resolved = new Map<string, ResolvedSource>()
      for (const id of builder.sources) resolved.set(id, await resolveSource(sourceById(id), mirror, cacheDir))
      const inputs = createHash('sha256')
        .update(JSON.stringify({ id: builder.id, revision: builder.revision, sources: [...resolved.values()].map((s) => [s.id, s.version, s.via, fingerprint(s.path)]) }))
        .digest('hex')
      const previous = manifest.datasets[builder.id]
      const current =
        previous?.inputs === inputs && previous.artifacts.every((a) => existsSync(join(outDir, a.name)) && statSync(join(outDir, a.name)).size === a.bytes)
      if (current && !options.force) {
        log(`${builder.id}: up to date (${Object.entries(previous!.counts).map(([k, v]) => `${v} ${k}`).join(', ')})`)
        continue
      }
      manifest.datasets[builder.id] = await runBuilder(builder, resolved, inputs, outDir, log)
      manifest.generated = new Date().toISOString()
      writeManifest(outDir, manifest)
    }
  }
  return manifest
}

async function runBuilder(builder: DatasetBuilder, resolved: Map<string, ResolvedSource>, inputs: string, outDir: string, log: (l: string) => void): Promise<ManifestEntry> {
  const staging = join(outDir, `.staging-${builder.id}`)
  rmSync(staging, { recursive: true, force: true })
  mkdirSync(staging, { recursive: true })
  const started = performance.now()
  log(`${builder.id}: building from ${[...resolved.values()].map((s) => `${s.id} ${s.version} (${s.via})`).join(', ')}`)
  const ctx: BuildContext = {
    source: async (id) => {
      const s = resolved.get(id)
      if (!s) throw new Error(`builder ${builder.id} asked for source ${id}, which it does not declare`)
      return s
    },
    out: (name) => join(staging, name),
    progress: (label, total) => progress(`${builder.id}: ${label}`, total, log),
    log: (message) => log(`${builder.id}: ${message}`),
  }
  try {
    const result = await builder.build(ctx)
    const artifacts = builder.artifacts.map((name) => {
      const path = join(staging, name)
      if (!existsSync(path)) throw new Error(`builder ${builder.id} did not write its artifact ${name}`)
      return { name, bytes: statSync(path).size, sha256: sha256File(path) }
    })
    for (const { name } of artifacts) renameSync(join(staging, name), join(outDir, name))
    const sources = [...resolved.values()].map((s) => ({ id: s.id, version: s.version, date: s.date, via: s.via, license: s.license, attribution: s.attribution, ...(s.duties ? { duties: s.duties } : {}) }))
    const version = result.version ?? sources.map((s) => s.version).join('+')
    log(`${builder.id}: built in ${((performance.now() - started) / 1000).toFixed(1)} s: ${Object.entries(result.counts).map(([k, v]) => `${v} ${k}`).join(', ')}`)
    return { id: builder.id, version, built: new Date().toISOString(), revision: builder.revision, inputs, sources, counts: result.counts, artifacts, ...(result.notes?.length ? { notes: result.notes } : {}) }
  } finally {
    rmSync(staging, { recursive: true, force: true })
  }
}
