/**
 * What the shared layers learn about one request on its way through (server.ts, observability.ts), kept on
 * the Request itself under a private symbol. It dies with the request; a WeakMap entry per request and
 * layer cost ~0.15 µs each plus collector work, a property next to nothing.
 */
import type { Principal } from '../admission/auth.ts'
import { pathOf } from './paths.ts'
import type { Resolution, RouteEntry, RouteTable } from '../routing/route-table.ts'
import type { QuotaState } from '../../stores/quota.ts'

/** The quota state a request was counted in, and the time it counted at (for RateLimit's `t`). */
export interface QuotaMark {
  state: QuotaState
  now: number
}

export interface Exchange {
  /** Who is calling (set by authentication on /api/v1 requests). */
  principal?: Principal
  /** What its method and path resolve to in the route table, worked out once (`resolveOnce` below). */
  resolved?: Resolution
  /**
   * The route that runs: the resolution's, unless Elysia's router chose another (server.ts's transform hook
   * then names that one); absent when no route answers.
   */
  route?: RouteEntry
  /** The quota state the request was last counted in: its answer's quota headers (response-headers.ts). */
  quota?: QuotaMark
  /** Quota credits this request holds (taken, not given back), and the time they count in (credits.ts). */
  credits?: number
  creditsAt?: number
  /** Credits given back to the caller (its answer was one of credits.ts `givesBack`): the usage ledger counts them. */
  refunded?: number
  /** The problem's kind when the answer is one (`quota`, `not-found` …): the usage ledger's outcome. */
  problem?: string
  /** Bytes of the body as sent when a layer re-encoded it (compression.ts); else `body`'s. */
  sentBytes?: number
  /** Admitted to a per-item route whose cost is charged once its body is parsed, and not charged yet. */
  awaitsCharge?: boolean
  /** The quota store could not be asked and fail-open let the request through: nothing is counted. */
  uncounted?: boolean
  /** This request's id (the caller's X-Request-Id when acceptable, else one made here); echoed, logged, in problems. */
  id?: string
  /** The answer was built with the id among its headers (response-headers.ts): nothing to add afterwards. */
  idSent?: boolean
  /**
   * The body of the response, when the layer that made it may have it compressed (compression.ts): JSON
   * replies, problems, the OpenAPI document, the /docs assets. Undeclared bodies (images, streams) are sent as they are.
   */
  body?: string | Uint8Array
  /** Set when `body` is the same on every request (a static asset): its compressed forms are made once and kept. */
  bodyKey?: string
}

const EXCHANGE = Symbol('almanac.exchange')

type Carrier = Request & { [EXCHANGE]?: Exchange }

/** This request's exchange, made on first use. */
export const exchangeOf = (request: Request): Exchange => ((request as Carrier)[EXCHANGE] ??= {})

/** This request's exchange if a layer has made one. */
export const existingExchange = (request: Request): Exchange | undefined => (request as Carrier)[EXCHANGE]

/**
 * The caller's quota subject, for per-caller shares of shared things (KDF jobs, QR store bytes, outbound
 * lookup slots). Authentication sets it on every /api/v1 request before a route runs.
 */
export const callerOf = (request: Request): string => existingExchange(request)?.principal?.subject ?? 'anonymous'

/**
 * The resolution of a request in the route table, made on first ask and kept on its exchange: every layer
 * asks this. `path`: the request's path when the caller has already cut it from the URL.
 */
export function resolveOnce(table: RouteTable, request: Request, path?: string): Resolution {
  return (exchangeOf(request).resolved ??= table.resolve(request.method, path ?? pathOf(request.url)))
}
