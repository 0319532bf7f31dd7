/**
 * ETag and 304 for the routes marked cacheable (cache.ts): which routes they are, found once by a scan of
 * the mounted app's route metadata, and the Response of a Reply on one of them. The ETag carries the
 * owning domain's content tag, so it changes when the datasets do (a refresh builds a new app, new tags).
 */
import type { DataDir } from '../data/types.ts'
import type { MountedDomain } from '../domains/types.ts'
import { CACHE_CONTROL, CACHE_KEY, type CacheKind, contentTag, etagOf, noneMatch } from './cache.ts'
import type { Exchange } from './exchange.ts'
import { API_PREFIX } from './paths.ts'
import { replyHeaders } from './response-headers.ts'

export interface CacheRule {
  control: string
  /** The domain whose content tag its ETags carry. */
  domain: string
}

/** Cacheable routes by route pattern, then method. */
export type CacheRules = Map<string, Map<string, CacheRule>>

/** What a route as Elysia lists it carries that this reads: the `detail` its declaration gave. */
interface RouteLike {
  method: string
  path: string
  hooks?: unknown
}

/** Scans the app's routes for the cacheable mark; a route outside every domain's prefixes is never cached. */
export function cacheRules(routes: readonly RouteLike[], mounted: MountedDomain[]): CacheRules {
  const rules: CacheRules = new Map()
  for (const route of routes) {
    const kind = (route.hooks as { detail?: Record<string, unknown> } | undefined)?.detail?.[CACHE_KEY] as CacheKind | undefined
    const owner =
      kind &&
      mounted.find((m) => m.domain.prefixes.some((p) => route.path === API_PREFIX + p || route.path.startsWith(`${API_PREFIX + p}/`)))
    if (kind && owner) {
      if (!rules.has(route.path)) rules.set(route.path, new Map())
      rules.get(route.path)!.set(route.method, { control: CACHE_CONTROL[kind], domain: owner.domain.name })
    }
  }
  return rules
}

/** Each domain's content tag: a hash over the sha256 of its datasets' artifacts (cache.ts). */
export function contentTags(data: DataDir, mounted: MountedDomain[]): Map<string, string> {
  const out = new Map<string, string>()
  for (const { domain } of mounted) {
    const hashes = domain.datasets.flatMap((id) => data.manifest.datasets[id]?.artifacts.map((a) => a.sha256) ?? [])
    if (hashes.length) out.set(domain.name, contentTag(hashes))
  }
  return out
}

/**
 * The Response of a reply's JSON: with an ETag and Cache-Control when its route is cacheable and its domain
 * has a content tag, a 304 when If-None-Match matches. The exchange's quota, definitions date and request id
 * go with it (response-headers.ts).
 */
export function replyResponse(
  request: Request,
  json: string,
  status: number,
  exchange: Exchange | undefined,
  rule: CacheRule | undefined,
  tags: Map<string, string>,
): Response {
  const tag = rule && tags.get(rule.domain)
  if (!tag) return new Response(json, { status, headers: replyHeaders(exchange) })
  const etag = etagOf(tag, json)
  // The quota was spent in the transform hook, so a 304 counts like a 200 and carries the same headers.
  const headers = replyHeaders(exchange, rule.control, etag)
  if (!noneMatch(request.headers.get('if-none-match'), etag)) return new Response(json, { status, headers })
  headers.delete('content-type')
  return new Response(null, { status: 304, headers })
}
