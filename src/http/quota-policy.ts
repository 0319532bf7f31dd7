/**
 * The quota policy of an authenticated /api/v1 request, in the two hooks server.ts has: at admission (request
 * hook, before a byte of the body is read) its path (400), its body's declared size and type against its
 * route (413, 415), its first credit (429, or 503 when the store is down), then its turn (turns.ts); after
 * parsing (transform hook) the rest of a per-item cost. A path no route answers spends nothing (its 404 or
 * 405 comes later). Synchronous stores keep promises off the path (credits.ts).
 */
import type { Config } from '../config.ts'
import type { QuotaStore } from '../stores/quota.ts'
import { admissions, checkBodyHeaders, hasBody } from './admission.ts'
import type { Principal } from './auth.ts'
import { costOf } from './cost.ts'
import { type Credits, createCredits } from './credits.ts'
import { exchangeOf, type Exchange } from './exchange.ts'
import { checkPath } from './request-guards.ts'
import { callerTurns } from './turns.ts'

export interface QuotaPolicy {
  credits: Credits
  /**
   * After authentication: the request's shape and its first credit, then its turn. A caller refused here
   * (400, 413, 415, 429) is answered at once and holds nothing; an admitted request past its caller's
   * share of this turn waits, unread, for a later one.
   */
  admit(request: Request, path: string, principal: Principal): Promise<void> | undefined
  /**
   * The credits admission did not take: the rest of a per-item cost (all of it for a route admission could
   * not name); when they do not fit, what was taken is given back with the 429.
   */
  chargeRest(request: Request, exchange: Exchange, route: string, body: unknown): ReturnType<Credits['take']> | undefined
}

/** `routes`: the app's routes, read once on first use (admission.ts). */
export function quotaPolicy(
  config: Config,
  quota: QuotaStore,
  clock: () => number,
  routes: () => readonly { method: string; path: string; hooks?: unknown }[],
): QuotaPolicy {
  const credits = createCredits(config, quota, clock)
  /** Each route's admission (body limit, JSON or not, per-item cost) from the request line alone. */
  const admitting = admissions(routes, config.bodyLimit)
  /** Each caller's share of the event loop's turns (turns.ts): past it, a request waits, unread, for a later turn. */
  const turns = callerTurns({
    perTurn: config.requestsPerTurn,
    maxWaiting: config.requestsWaitingPerCaller,
    maxWaitingBytes: config.requestBytesWaitingPerCaller,
    sliceMs: config.turnSliceMicros / 1000,
  })
  return {
    credits,
    admit(request, path, principal) {
      const exchange = exchangeOf(request)
      exchange.principal = principal
      checkPath(path)
      const admission = (exchange.admission = admitting.forPath(request.method, path))
      checkBodyHeaders(request, admission, config.bodyLimit)
      if (!admission) return
      // What its unread body may hold while it waits: its declared length, else (chunked) its route's limit.
      const declared = request.headers.get('content-length')
      const bytes = !hasBody(request, declared) ? 0 : declared !== null ? Number(declared) || 0 : admission.bodyLimit
      const turn = () => turns.take(principal.subject, bytes)
      const taken = credits.take(request, principal, 1, 1)
      return taken instanceof Promise ? taken.then(turn) : turn()
    },
    chargeRest(request, exchange, route, body) {
      const principal = exchange.principal
      if (!principal || exchange.uncounted) return
      const admission = exchange.admission ?? admitting.forRoute(request.method, route)
      const cost = costOf(admission?.cost, body)
      const rest = cost - (exchange.credits ?? 0)
      if (rest > 0) return credits.take(request, principal, rest, cost)
    },
  }
}
