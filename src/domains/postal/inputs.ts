/**
 * The postal source as GeoNames publishes it, in any of its shapes: `allCountries.zip`, per-country
 * `XX.zip`, the full-code `XX_full.csv.zip` (GB, CA, NL), the same files unzipped (`.txt`), or the
 * mirror's gzipped `XX.txt.gz`. A source is one such file or a folder of them; when several files
 * cover a country, the most complete wins (XX_full, then XX, then allCountries), so dropping
 * `GB_full.csv.zip` next to `allCountries.zip` replaces GB's outward codes by the full postcodes.
 */
import { createReadStream, readdirSync, realpathSync, statSync } from 'node:fs'
import { basename, join } from 'node:path'
import type { Readable } from 'node:stream'
import { createGunzip } from 'node:zlib'
import { openZipEntry, zipEntries } from '../../lib/zip.ts'

export interface PostalInput {
  path: string
  /** The country the file covers, or null for allCountries. */
  country: string | null
  /** 3 full codes, 2 a country file, 1 allCountries: higher wins per country. */
  rank: number
}

const NAME = /^(allCountries|[A-Z]{2})(_full)?(\.csv|\.txt)?(\.zip|\.gz)?$/

/** Classifies one file name; null when it is not a GeoNames postal file (readme.txt, …). */
export function classify(path: string): PostalInput | null {
  const m = NAME.exec(basename(path))
  if (!m || (!m[3] && !m[4])) return null
  if (m[1] === 'allCountries') return m[2] ? null : { path, country: null, rank: 1 }
  return { path, country: m[1]!, rank: m[2] ? 3 : 2 }
}

const filesOf = (path: string) =>
  statSync(path).isDirectory()
    ? readdirSync(path)
        .sort()
        .map((n) => join(path, n))
        .filter((p) => statSync(p).isFile())
    : [path]

/**
 * The input files of source paths (files or folders), in a fixed order: allCountries first, then by
 * name. A file reached twice (a `_full` file found both in the postal folder and as its own source) counts once.
 */
export function discoverInputs(paths: string | readonly string[]): PostalInput[] {
  const list = typeof paths === 'string' ? [paths] : paths
  const seen = new Set<string>()
  const inputs: PostalInput[] = []
  for (const file of list.flatMap(filesOf)) {
    const input = classify(file)
    const real = realpathSync(file)
    if (!input || seen.has(real)) continue
    seen.add(real)
    inputs.push(input)
  }
  if (!inputs.length)
    throw new Error(`${list.join(', ')} holds no GeoNames postal file (allCountries.zip, XX.zip, XX_full.csv.zip, XX.txt or XX.txt.gz)`)
  return inputs.sort((a, b) => a.rank - b.rank || a.path.localeCompare(b.path))
}

/** For each country, the rank of the best file that covers it (allCountries covers any other). */
export function bestRanks(inputs: PostalInput[]): Map<string, number> {
  const best = new Map<string, number>()
  for (const i of inputs) if (i.country && (best.get(i.country) ?? 0) < i.rank) best.set(i.country, i.rank)
  return best
}

/** The text streams inside one input file (a zip's data entries, skipping its readme). */
export function openInput(input: PostalInput): Readable[] {
  const { path } = input
  if (path.endsWith('.zip')) {
    const entries = zipEntries(path).filter(
      (e) => !e.name.endsWith('/') && /\.(txt|csv)$/i.test(e.name) && !/readme/i.test(basename(e.name)),
    )
    if (!entries.length) throw new Error(`${path} holds no .txt or .csv entry`)
    return entries.sort((a, b) => a.name.localeCompare(b.name)).map((e) => openZipEntry(path, e))
  }
  const raw = createReadStream(path, { highWaterMark: 1 << 20 })
  if (!path.endsWith('.gz')) return [raw]
  const gunzip = createGunzip({ chunkSize: 1 << 20 })
  raw.on('error', (e) => gunzip.destroy(e))
  return [raw.pipe(gunzip)]
}

/**
 * The lines of a UTF-8 byte stream (LF or CRLF) without their line ends, empty lines skipped; yielded
 * a chunk at a time, because one await per line would cost more than parsing it.
 */
export async function* lineBatches(stream: Readable): AsyncGenerator<string[]> {
  const decoder = new TextDecoder('utf-8')
  let rest = ''
  for await (const chunk of stream) {
    const text = rest + decoder.decode(chunk as Uint8Array, { stream: true })
    const batch: string[] = []
    let start = 0
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
      const end = nl > start && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl
      if (end > start) batch.push(text.slice(start, end))
      start = nl + 1
    }
    rest = text.slice(start)
    if (batch.length) yield batch
  }
  rest += decoder.decode()
  if (rest.endsWith('\r')) rest = rest.slice(0, -1)
  if (rest) yield [rest]
}
