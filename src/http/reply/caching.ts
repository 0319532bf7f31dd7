/**
 * ETag and 304 for the routes that declare a cache rule (route-facts.ts `cache`): their 200 answers carry a
 * strong ETag and the rule's Cache-Control, and a matching If-None-Match gets a 304. Routes without one pay
 * nothing. The ETag carries the owning domain's content tag, so it changes when the datasets do (a refresh
 * builds a new app, a new route table, new tags).
 */
import type { Exchange } from '../edge/exchange.ts'
import { replyHeaders } from './response-headers.ts'

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

/**
 * The Response of a reply's JSON: with an ETag and Cache-Control when its route is cacheable (a 200 only),
 * a 304 when If-None-Match matches. The exchange's quota, definitions date and request id go with it
 * (response-headers.ts).
 */
export function replyResponse(request: Request, json: string, status: number, exchange: Exchange | undefined): Response {
  const cache = status === 200 ? exchange?.route?.cache : undefined
  if (!cache) return new Response(json, { status, headers: replyHeaders(exchange) })
  const etag = etagOf(cache.contentTag, json)
  // The quota was spent in the transform hook, so a 304 counts like a 200 and carries the same headers.
  const headers = replyHeaders(exchange, cache.control, etag)
  if (!noneMatch(request.headers.get('if-none-match'), etag)) return new Response(json, { status, headers })
  headers.delete('content-type')
  return new Response(null, { status: 304, headers })
}
