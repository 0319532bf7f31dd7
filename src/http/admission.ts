/**
 * Admission: what a request may send, known from its request line and headers alone, before a byte of
 * its body is read (quota-policy.ts takes its first credit on the same footing). Per route: whether it takes a
 * JSON body (it has a body schema), its body limit (declared beside the route with `bodyLimit`, else
 * DEFAULT_BODY_LIMIT, never over ALMANAC_BODY_LIMIT) and its per-item cost (cost.ts).
 *
 * The route of a raw path comes from route-match.ts (cached by path shape); where several patterns match
 * (`/ip/me` and `/ip/:ip`), the one Elysia's router picks: literal segments before parameters before
 * wildcards, from the left. So a 1 MB text/plain body to a JSON route is a 415, and a body over its
 * route's limit a 413, while the body is still unread on the socket.
 */
import type { TSchema } from '@sinclair/typebox'
import { AlmanacError, tooLarge } from '../lib/errors.ts'
import { COST_KEY, type PerItemCost } from './cost.ts'
import { routeMatcher, type RouteMatch } from './route-match.ts'

export const BODY_LIMIT_KEY = 'x-body-limit'

/**
 * The body limit of a route that declares none: the largest valid body of an ordinary route (an email
 * address, an IP, a point and radius, one user agent without hints) is under 4 KB even with every
 * character a three-byte UTF-8 sequence.
 */
export const DEFAULT_BODY_LIMIT = 16 * 1024

/** Spread into a route's `detail` when its largest valid body needs more than DEFAULT_BODY_LIMIT: `...bodyLimit(64 * 1024)`. */
export const bodyLimit = (bytes: number) => ({ [BODY_LIMIT_KEY]: bytes })

export interface Admission {
  /** The route pattern (without a trailing slash). */
  route: string
  /** Its body limit in bytes, ALMANAC_BODY_LIMIT included. */
  bodyLimit: number
  /** It takes a JSON body (it has a body schema): any other content type is a 415. */
  json: boolean
  /** Its body schema, against which large-bodies.ts checks a large body before Elysia does. */
  bodySchema?: TSchema
  cost?: PerItemCost
}

interface RouteLike {
  method: string
  path: string
  hooks?: unknown
}

/** Literal segments rank before parameters before wildcards, position by position from the left. */
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

export interface Admissions {
  /** The admission of a raw path, or null when no route answers (a 404 or 405 later, which costs nothing). */
  forPath(method: string, path: string): Admission | null
  /** The admission of a route pattern as Elysia's router reports it (a trailing slash is ignored). */
  forRoute(method: string, route: string): Admission | undefined
}

export function admissions(routes: () => readonly RouteLike[], ceiling: number): Admissions {
  const matching = routeMatcher(routes)
  let rules: Map<string, Admission> | undefined
  /** Per cached match list (one per path shape), the admission of each method asked. */
  const chosen = new WeakMap<RouteMatch[], Map<string, Admission | null>>()
  const trim = (path: string) => (path.length > 1 ? path.replace(/\/+$/, '') : path)
  const compile = () => {
    const out = new Map<string, Admission>()
    for (const r of routes()) {
      const route = trim(r.path)
      const hooks = r.hooks as { body?: TSchema; detail?: Record<string, unknown> } | undefined
      const declared = hooks?.detail?.[BODY_LIMIT_KEY] as number | undefined
      out.set(`${r.method} ${route}`, {
        route,
        bodyLimit: Math.min(declared ?? DEFAULT_BODY_LIMIT, ceiling),
        json: hooks?.body !== undefined,
        bodySchema: hooks?.body,
        cost: hooks?.detail?.[COST_KEY] as PerItemCost | undefined,
      })
    }
    return out
  }
  const forRoute = (method: string, route: string) => {
    rules ??= compile()
    return rules.get(`${method} ${trim(route)}`) ?? rules.get(`ALL ${trim(route)}`)
  }
  const forPath = (method: string, path: string) => {
    const matches = matching(path)
    let byMethod = chosen.get(matches)
    if (!byMethod) chosen.set(matches, (byMethod = new Map()))
    let found = byMethod.get(method)
    if (found === undefined) {
      rules ??= compile()
      let best: RouteMatch | undefined
      for (const m of matches)
        if (
          (m.method === method || m.method === 'ALL') &&
          (!best || moreSpecific(m.path, best.path) || (m.path === best.path && m.method === method))
        )
          best = m
      found = (best && rules.get(`${best.method} ${best.path}`)) ?? null
      byMethod.set(method, found)
    }
    return found
  }
  return { forPath, forRoute }
}

const JSON_TYPE = /^application\/(?:[\w.-]+\+)?json$/

/**
 * The media type of a Content-Type value, lower case, without parameters; null when absent. The exact
 * `application/json` nearly every client sends is returned as it is (the split, trim and lower-casing of
 * every other value cost ~1 µs a POST).
 */
const mediaType = (value: string | null) =>
  value === null ? null : value === 'application/json' ? value : value.split(';', 1)[0]!.trim().toLowerCase()

/**
 * Whether a request carries a body, from its headers: a Content-Length above 0, chunked transfer, or (a
 * Request made in process, with neither header) a body stream. Bun builds a ReadableStream when
 * `request.body` is first read, and a body read after that costs ~4 µs more (bench/bun-floor.ts), so the
 * getter is the last resort here, in the body reader (request-guards.ts), in what a waiting request may hold
 * (quota-policy.ts) and in Elysia's composed handler, which asks the same question in the same order
 * (patches/elysia@1.4.30.patch).
 */
export function hasBody(request: Request, declared: string | null): boolean {
  if (declared !== null) return declared.trim() !== '0'
  return request.headers.has('transfer-encoding') || request.body !== null
}

/**
 * The checks on a body made before reading it: 415 when a JSON route is sent anything but JSON (a form,
 * text, or a body with no Content-Type at all), 413 when its declared length is over the limit.
 */
export function checkBodyHeaders(request: Request, admission: Admission | null, ceiling: number): void {
  const limit = admission?.bodyLimit ?? ceiling
  const declared = request.headers.get('content-length')
  // The type first: a text body is wrong at any size, and the caller should learn that, not a size.
  if (admission?.json && hasBody(request, declared)) {
    const type = mediaType(request.headers.get('content-type'))
    if (type === null || !JSON_TYPE.test(type)) throw unsupported(type)
  }
  if (declared !== null && !(Number(declared) <= limit)) throw overLimit(limit, admission)
}

const unsupported = (type: string | null) =>
  new AlmanacError(
    'unsupported_type',
    `This route takes a JSON body: send it with Content-Type: application/json (the request's Content-Type ` +
      `is ${type === null ? 'missing' : JSON.stringify(type)}).`,
    { extra: { accepted: ['application/json'], received: type } },
  )

/** The 413 of a body over its route's limit (declared, or counted while reading a chunked one). */
export const overLimit = (limit: number, admission?: Admission | null) =>
  tooLarge(
    admission
      ? `The request body is over the limit of ${limit} bytes for ${admission.route.replace(/^\/api\/v1/, '')}.`
      : `The request body is over the limit of ${limit} bytes.`,
  )
