/**
 * Where a source's upstream file is downloaded from, and where it sits in a mirror folder. Shared by
 * `almanac data build` (downloads into `datasets/out/.downloads`) and `almanac data fetch --to DIR`
 * (downloads into a folder laid out like the mirror, for building on a machine without internet).
 *
 * `ALMANAC_UPSTREAM_BASE` redirects every download: `https://host/path` is fetched from
 * `<base>/host/path` instead (an internal proxy or a static copy of the upstreams; the tests serve
 * fixture files on loopback this way). Nothing else about the source changes: pins are still checked.
 */
import { basename } from 'node:path'
import type { Source } from './types.ts'

export const UPSTREAM_BASE_ENV = 'ALMANAC_UPSTREAM_BASE'

/** The URL actually fetched for a declared upstream URL. */
export function upstreamUrl(url: string, base: string | undefined = process.env[UPSTREAM_BASE_ENV] || undefined): string {
  if (!base) return url
  const u = new URL(url)
  return `${base.replace(/\/+$/, '')}/${u.host}${u.pathname}${u.search}`
}

/** Whether the URL serves the very file the mirror holds (same pinned sha256). */
export const urlServesMirrorFile = (source: Source): boolean => !!source.mirror && source.urlSha256 === undefined && !!source.sha256

/**
 * Path of the downloaded file inside a mirror folder: the mirror path itself when the URL serves that
 * file; otherwise `upstream/<id>/<file name>` (the raw upstream form a mirror file was derived from, or
 * the archive a mirror folder was unpacked from), which the build also looks for.
 */
export function mirrorPathOfUrl(source: Source): string | undefined {
  if (source.files?.length) return `upstream/${source.id}`
  if (!source.url) return undefined
  if (urlServesMirrorFile(source)) return source.mirror
  return `upstream/${source.id}/${fileNameOfUrl(source.url)}`
}

/** The file name an upstream URL is saved under (decoded: STEPBible's file names have spaces). */
export const fileNameOfUrl = (url: string): string => decodeURIComponent(basename(new URL(url).pathname)) || 'download'

/**
 * Every file a source downloads, each with its pin and its path relative to a mirror folder: the one
 * URL, or each of its `files` into `upstream/<id>/`. Empty when the source has no URL.
 */
export function upstreamFiles(source: Source): { url: string; pin: string | undefined; rel: string }[] {
  if (source.files?.length)
    return source.files.map((f) => ({ url: f.url, pin: f.sha256, rel: `upstream/${source.id}/${fileNameOfUrl(f.url)}` }))
  return source.url ? [{ url: source.url, pin: urlPin(source), rel: mirrorPathOfUrl(source)! }] : []
}

/** The sha256 the file at `url` must have, or undefined when none is pinned. */
export const urlPin = (source: Source): string | undefined =>
  source.urlSha256 === undefined ? source.sha256 : (source.urlSha256 ?? undefined)

/** A lookup of sources by id that names the fix when an id is declared nowhere. */
export const sourceLookup =
  (sources: readonly Source[]) =>
  (id: string): Source => {
    const source = sources.find((s) => s.id === id)
    if (!source) throw new Error(`no domain declares a source ${JSON.stringify(id)} (each domain's sources.ts)`)
    return source
  }
