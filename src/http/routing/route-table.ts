/**
 * The route table: every route of one app with every fact a layer needs about it, compiled once after the
 * domains mount (a data swap builds a new app and a new table). Each request is resolved against it once, at
 * the start of the app's request hook, and the resolution is kept on its exchange (exchange.ts
 * `resolveOnce`): admission, credits, scopes, reply, caching, problems, metrics and the OpenAPI document read
 * the route's facts from there and never match the path again. Which domain owns a path is answered here
 * alone, from the descriptors' prefixes.
 */
import type { TSchema } from '@sinclair/typebox'
import type { ResponseForm } from '../../config.ts'
import type { DataDir } from '../../data/types.ts'
import type { MountedDomain } from '../../domains/types.ts'
import type { DeclaredRoute } from './elysia-routes.ts'
import { distance } from '../../lib/did-you-mean.ts'
import { API_PREFIX } from '../edge/paths.ts'
import { CACHE_CONTROL, fieldNamesOf, type RouteFacts } from './route-facts.ts'
import { routeMatcher, type RouteMatch } from './route-match.ts'

/**
 * The body limit of a route that declares none: the largest valid body of an ordinary route (an email
 * address, an IP, a point and radius, one user agent without hints) is under 4 KB even with every
 * character a three-byte UTF-8 sequence.
 */
export const DEFAULT_BODY_LIMIT = 16 * 1024

/** One route and everything the layers need to know about it, worked out once. */
export interface RouteEntry {
  readonly method: string
  /** The path as Elysia's router reports it (trailing slash and all). */
  readonly declared: string
  /** The pattern without a trailing slash (`/api/v1/countries/:code`): the metrics label. */
  readonly pattern: string
  /** The domain whose prefixes hold it (its `problem` may be set later: a domain disabled after start). */
  readonly owner?: MountedDomain
  /** Its OpenAPI tag: its domain's. */
  readonly tag?: string
  /** What its declaration says of it (route-facts.ts), as declared: the OpenAPI document shows these. */
  readonly facts: RouteFacts
  /** Its body limit in bytes, ALMANAC_BODY_LIMIT included. */
  readonly bodyLimit: number
  /** It takes a JSON body (it has a body schema): any other content type is a 415. */
  readonly json: boolean
  readonly bodySchema?: TSchema
  /** Cache-Control of its 200 answers and the content tag their ETags carry, when it is cacheable. */
  readonly cache?: { control: string; contentTag: string }
  /** X-Definitions-Updated of its domain (SPEC shared behaviour 4), when it has one. */
  readonly definitionsUpdated?: string
  /** What `fields` may select in each form: the members of its response schemas. */
  readonly fields?: Readonly<Record<ResponseForm, readonly string[]>>
}

/** What a request's method and path resolve to. */
export interface Resolution {
  /** The route that answers it; null when none does (a 404 or 405 later, which costs nothing). */
  readonly route: RouteEntry | null
  /** Methods that answer its path (the Allow of a 405). */
  readonly allow: readonly string[]
  /** The series its metrics count under: its route's pattern, a pattern of its path, or `(unmatched)`. */
  readonly label: string
  /** The domain whose prefixes hold the path, matched by a route or not (key scopes, definitions date). */
  readonly owner?: MountedDomain
  readonly definitionsUpdated?: string
  /** The route patterns nearest a path no route answers (`nearestRoutes`), for its 404; worked out only then. */
  readonly nearestRoutes?: (path: string) => readonly string[]
}

export interface RouteTable {
  readonly entries: readonly RouteEntry[]
  resolve(method: string, path: string): Resolution
  /** The entry of a method and a path as Elysia's router reports it. */
  entry(method: string, declared: string): RouteEntry | undefined
}

export interface RouteTableOptions {
  mounted: readonly MountedDomain[]
  data: DataDir
  /** ALMANAC_BODY_LIMIT: no route's limit is above it. */
  bodyLimit: number
}

export const UNMATCHED = '(unmatched)'

/** The methods whose resolutions are kept (a path's others are resolved each time: none is routed). */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

const trim = (path: string) => (path.length > 1 ? path.replace(/\/+$/, '') : path)

/** Literal segments rank before parameters before wildcards, position by position from the left (Elysia's router). */
function moreSpecific(a: string, b: string): boolean {
  const x = a.split('/')
  const y = b.split('/')
  const rank = (s: string | undefined) => (s === undefined ? -1 : s === '*' ? 0 : s.startsWith(':') ? 1 : 2)
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = rank(x[i]) - rank(y[i])
    if (d) return d > 0
  }
  return false
}

/**
 * The owner of a path from its first segment after /api/v1 (every prefix is one segment; a longer one is
 * matched in full). Paths of no domain (meta, openapi) have none.
 */
export function ownerResolver(mounted: readonly MountedDomain[]): (path: string) => MountedDomain | undefined {
  const bySegment = new Map<string, { base: string; mounted: MountedDomain }[]>()
  for (const m of mounted)
    for (const prefix of m.domain.prefixes) {
      const segment = prefix.slice(1).split('/')[0]!
      const list = bySegment.get(segment) ?? []
      list.push({ base: API_PREFIX + prefix, mounted: m })
      bySegment.set(segment, list)
    }
  const start = API_PREFIX.length + 1
  return (path) => {
    if (!path.startsWith(API_PREFIX + '/')) return undefined
    const end = path.indexOf('/', start)
    const found = bySegment.get(end < 0 ? path.slice(start) : path.slice(start, end))
    if (!found) return undefined
    if (found.length === 1 && found[0]!.base.indexOf('/', start) < 0) return found[0]!.mounted
    return found.find((f) => path === f.base || path.startsWith(f.base + '/'))?.mounted
  }
}

/** The names of a pattern's path parameters (`/api/v1/ip/:ip`: `ip`), for a problem that places its errors. */
export const pathParameters = (pattern: string): string[] =>
  pattern
    .split('/')
    .filter((s) => s.startsWith(':'))
    .map((s) => s.slice(1))

/**
 * The route patterns a path no route answers was most likely meant for (`/api/v1/hash/sha-256`:
 * `/api/v1/hash/sha256`): of the patterns with as many segments (or a trailing `*` it reaches), those whose
 * literal segments are each within a few edits of the path's (did-you-mean.ts's rule; a `:param` takes
 * anything), the fewest edits in all, at most three. A path no pattern is near gets none. Made for a 404
 * only; a segment's distance is worked out once per literal, and only where the lengths allow a match.
 */
export function nearestRoutes(patterns: readonly string[], path: string): string[] {
  const segments = path.split('/').filter(Boolean)
  const distances = new Map<string, number>()
  const within = (segment: string, literal: string): number => {
    const limit = Math.max(2, Math.floor(segment.length / 3))
    if (Math.abs(segment.length - literal.length) > limit) return Infinity
    const key = `${segment}/${literal}`
    let d = distances.get(key)
    if (d === undefined) distances.set(key, (d = distance(segment.toLowerCase(), literal.toLowerCase())))
    return d <= limit ? d : Infinity
  }
  let best = Infinity
  let found: string[] = []
  for (const pattern of new Set(patterns)) {
    const parts = pattern.split('/').filter(Boolean)
    const wildcard = parts.at(-1) === '*'
    if (wildcard ? segments.length < parts.length - 1 : segments.length !== parts.length) continue
    let cost = 0
    for (let i = 0; i < parts.length && cost <= best; i++) {
      const part = parts[i]!
      if (part === '*') break
      if (!part.startsWith(':')) cost += within(segments[i]!, part)
    }
    // Zero edits: the path is the pattern's, refused for another reason (a 405, a parameter's own 404).
    if (cost === 0 || cost > best || cost === Infinity) continue
    if (cost < best) [best, found] = [cost, []]
    found.push(pattern)
  }
  return found.slice(0, 3)
}

export function compileRouteTable(routes: readonly DeclaredRoute[], { mounted, data, bodyLimit }: RouteTableOptions): RouteTable {
  const ownerOf = ownerResolver(mounted)
  const dates = new Map<MountedDomain, string | undefined>(
    mounted.map((m) => [m, m.state === 'open' ? m.domain.definitionsUpdated?.({ data, service: m.service }) : undefined]),
  )
  /**
   * Each domain's content tag, which its ETags carry (caching.ts): a short hash over the sha256 of its
   * datasets' artifacts, so it changes when any of them does.
   */
  const tags = new Map<MountedDomain, string>()
  for (const m of mounted) {
    const hashes = m.domain.datasets.flatMap((id) => data.manifest.datasets[id]?.artifacts.map((a) => a.sha256) ?? [])
    if (hashes.length) tags.set(m, Bun.hash(hashes.join(',')).toString(36))
  }

  const entries = routes.map((r): RouteEntry => {
    const pattern = trim(r.path)
    const owner = ownerOf(pattern)
    const facts: RouteFacts = r.facts ?? {}
    const tag = owner && tags.get(owner)
    const response = facts.response
    return {
      method: r.method,
      declared: r.path,
      pattern,
      owner,
      tag: owner?.domain.tag?.name,
      facts,
      bodyLimit: Math.min(facts.bodyLimit ?? DEFAULT_BODY_LIMIT, bodyLimit),
      json: r.body !== undefined,
      bodySchema: r.body,
      cache: facts.cache && tag ? { control: CACHE_CONTROL[facts.cache], contentTag: tag } : undefined,
      definitionsUpdated: owner && dates.get(owner),
      fields: response && {
        enveloped: fieldNamesOf(response.enveloped),
        bare: fieldNamesOf(response.bare ?? response.enveloped),
      },
    }
  })

  const byDeclared = new Map<string, RouteEntry>()
  for (const e of entries) byDeclared.set(`${e.method} ${e.declared}`, e)
  const byPattern = new Map<string, RouteEntry>()
  for (const e of entries) if (!byPattern.has(`${e.method} ${e.pattern}`)) byPattern.set(`${e.method} ${e.pattern}`, e)

  const prefixSegments = mounted.flatMap((m) => m.domain.prefixes.flatMap((p) => p.split('/').filter(Boolean)))
  const matching = routeMatcher(
    entries.map((e) => ({ method: e.method, path: e.declared })),
    ['api', 'v1', ...prefixSegments],
  )
  const patterns = entries.map((e) => e.pattern)
  const nearestOf = (path: string) => nearestRoutes(patterns, path)
  /** Per cached match list (one per path shape), the resolution of each method asked. */
  const resolved = new WeakMap<RouteMatch[], Map<string, Resolution>>()

  const resolveMatches = (method: string, path: string, matches: RouteMatch[]): Resolution => {
    let best: RouteMatch | undefined
    for (const m of matches)
      if (
        (m.method === method || m.method === 'ALL') &&
        (!best || moreSpecific(m.path, best.path) || (m.path === best.path && m.method === method))
      )
        best = m
    const route = (best && byPattern.get(`${best.method} ${best.path}`)) ?? null
    const owner = route ? route.owner : ownerOf(path)
    return {
      route,
      allow: [...new Set(matches.map((m) => m.method))].filter((m) => m !== 'ALL').sort(),
      label: route?.pattern ?? (matches.find((m) => m.method === method || m.method === 'ALL') ?? matches[0])?.path ?? UNMATCHED,
      owner,
      definitionsUpdated: owner && dates.get(owner),
      nearestRoutes: route ? undefined : nearestOf,
    }
  }

  return {
    entries,
    entry: (method, declared) => byDeclared.get(`${method} ${declared}`) ?? byDeclared.get(`ALL ${declared}`),
    resolve(method, path) {
      // The path's shape decides its matches, and with its method its resolution: the segments that name a
      // path's owner are literals of the matcher, so they are part of the shape.
      const matches = matching(path)
      let byMethod = resolved.get(matches)
      if (!byMethod) resolved.set(matches, (byMethod = new Map()))
      let found = byMethod.get(method)
      if (found) return found
      found = resolveMatches(method, path, matches)
      // The method is the client's text: only the methods routes use are kept, so the cache stays bounded.
      if (METHODS.has(method)) byMethod.set(method, found)
      return found
    },
  }
}
