/**
 * Cacheable answers: a route marks itself with `...cacheable(kind)` in its `detail` (as `costPerItem`
 * does); its 200 answers then carry a strong ETag and a Cache-Control of that kind, and a matching
 * If-None-Match gets a 304. Routes without the mark pay nothing (one Map lookup that finds nothing).
 */
export const CACHE_KEY = 'x-cache'

/**
 * Why each kind gets its Cache-Control (docs/operations.md, "Caching"):
 * - `reference`: reference data (countries, subdivisions, postal systems and lookups, Bible texts) that
 *   changes only when the operator refreshes the datasets. An hour bounds how long a client may keep an
 *   answer after a refresh; after that it revalidates (a 304 when the data did not change).
 * - `current`: answers that hold the current offset or time (timezone records and lists): a client must
 *   revalidate every time; the ETag then saves the body while the answer is unchanged.
 * Both are `private`: every answer is behind authentication and carries the caller's quota headers, which
 * a shared cache would hand to another caller.
 */
export const CACHE_CONTROL = {
  reference: 'private, max-age=3600',
  current: 'private, no-cache',
} as const

export type CacheKind = keyof typeof CACHE_CONTROL

/** Spread into a route's `detail`: `detail: { summary, ...cacheable('reference') }`. */
export const cacheable = (kind: CacheKind) => ({ [CACHE_KEY]: kind })

/**
 * A strong ETag: the datasets' content tag (changes when any artifact of the domain does) and a hash of
 * the exact body bytes (so each form, `fields` selection and page differs). 64-bit wyhash: collisions
 * between two bodies of the same route are negligible at these volumes.
 */
export const etagOf = (tag: string, body: string): string => `"${tag}-${Bun.hash(body).toString(36)}"`

/** The longest If-None-Match read; a longer one is ignored (the answer is sent in full). */
const MAX_IF_NONE_MATCH = 4096

/**
 * RFC 9110 section 13.1.2: If-None-Match uses the weak comparison (a `W/` prefix is ignored); `*`
 * matches any current representation. A list is split on commas (our ETags hold none).
 */
export function noneMatch(header: string | null, etag: string): boolean {
  if (!header || header.length > MAX_IF_NONE_MATCH) return false
  for (const raw of header.split(',')) {
    const candidate = raw.trim()
    if (candidate === '*' || candidate === etag || (candidate.startsWith('W/') && candidate.slice(2) === etag)) return true
  }
  return false
}

/** A domain's content tag: a short hash over the sha256 of every artifact of its datasets. */
export function contentTag(hashes: string[]): string {
  return Bun.hash(hashes.join(',')).toString(36)
}
