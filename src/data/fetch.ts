/**
 * `almanac data fetch --to DIR`: downloads every source that has an upstream URL into DIR, laid out like
 * the mirror (a file the mirror holds as is goes to its mirror path; another form of it, such as the CSV
 * a mirror list was derived from or the archive a mirror folder was unpacked from, to
 * `upstream/<source id>/<file name>`, as do the several files of a source published in parts), with a MANIFEST.json recording each
 * file's sha256, size, URL and upstream date. Carry DIR to a machine without internet and build there with `ALMANAC_MIRROR=DIR`.
 *
 * Pinned files are checked; a file already in DIR with the right hash is not downloaded again. One
 * failed download does not stop the others: the summary lists them and the exit code says so.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileSource } from './build.ts'
import { type DownloadOptions, download } from './download.ts'
import { HashCache } from './hashes.ts'
import type { Source } from './types.ts'
import { upstreamFiles, upstreamUrl } from './upstream.ts'

export interface FetchedFile {
  path: string
  sha256: string
  size_bytes: number
  source: string
  version: string
  upstream: { url: string }
  upstream_date: string
  fetched: string
  license: string
}

export interface FetchReport {
  dir: string
  fetched: FetchedFile[]
  /** Already present with the pinned hash. */
  kept: string[]
  failed: { source: string; url: string; error: string }[]
  /** Sources without a URL and how they are had instead. */
  skipped: { source: string; why: string }[]
}

const otherWay = (s: Source) =>
  s.npm
    ? `npm package ${s.npm.package} (installed by bun install)`
    : s.system
      ? `system file ${s.system}`
      : s.mirror
        ? `mirror only (${s.mirror})`
        : 'no way declared'

export async function fetchSources(
  sources: readonly Source[],
  to: string,
  options: { log?: (line: string) => void } & DownloadOptions = {},
): Promise<FetchReport> {
  const log = options.log ?? ((l: string) => console.error(l))
  const dir = resolve(to)
  mkdirSync(dir, { recursive: true })
  const manifestPath = join(dir, 'MANIFEST.json')
  const previous: FetchedFile[] = existsSync(manifestPath)
    ? ((JSON.parse(readFileSync(manifestPath, 'utf8')) as { files?: FetchedFile[] }).files ?? [])
    : []
  const files = new Map(previous.map((f) => [f.path, f]))
  const hashes = new HashCache()
  const report: FetchReport = { dir, fetched: [], kept: [], failed: [], skipped: [] }
  for (const source of sources) {
    const wanted = upstreamFiles(source)
    if (!wanted.length) {
      report.skipped.push({ source: source.id, why: otherWay(source) })
      continue
    }
    for (const { url: declared, pin, rel } of wanted) {
      const path = join(dir, rel)
      if (existsSync(path) && ((pin && hashes.of(path) === pin) || (!pin && files.get(rel)?.sha256 === hashes.of(path)))) {
        report.kept.push(rel)
        continue
      }
      const url = 'base' in options ? upstreamUrl(declared, options.base) : upstreamUrl(declared)
      try {
        const sha256 = await download(source.files ? fileSource(source, { url: declared, pin }) : source, path, log, options)
        const entry: FetchedFile = {
          path: rel,
          sha256,
          size_bytes: statSync(path).size,
          source: source.id,
          version: source.version,
          upstream: { url: declared },
          upstream_date: source.date,
          fetched: new Date().toISOString(),
          license: source.license,
        }
        files.set(rel, entry)
        report.fetched.push(entry)
      } catch (e) {
        report.failed.push({ source: source.id, url, error: (e as Error).message })
        log(`${source.id}: FAILED: ${(e as Error).message}`)
      }
    }
  }
  const tmp = `${manifestPath}.${process.pid}.part`
  writeFileSync(
    tmp,
    JSON.stringify(
      { generated: new Date().toISOString(), files: [...files.values()].sort((a, b) => a.path.localeCompare(b.path)) },
      null,
      1,
    ) + '\n',
  )
  renameSync(tmp, manifestPath)
  return report
}
