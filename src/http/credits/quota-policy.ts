/**
 * The policy of an authenticated /api/v1 request, in the two hooks server.ts has: at admission (request
 * hook, before a byte of the body is read) its scopes (403), its path (400), its domain disabled since
 * start (503), its body's declared size and type against its route (413, 415), its credit (429, or 503
 * when the store is down: a route of fixed cost is charged here, a per-item route only checked for a credit
 * left), then its turn (turns.ts); after parsing (transform hook) a per-item route's whole cost. A path no
 * route answers spends nothing (its 404 or 405 comes later). Synchronous stores keep promises off the path
 * (credits.ts). Every fact of the route comes from its resolution (route-table.ts).
 */
import type { Config } from '../../config.ts'
import type { QuotaStore } from '../../stores/quota.ts'
import { checkBodyHeaders, hasBody } from '../admission/admission.ts'
import { checkScope, type Principal } from '../admission/auth.ts'
import { type Credits, createCredits } from './credits.ts'
import { checkOpen } from '../routing/domain-routes.ts'
import { exchangeOf, type Exchange } from '../edge/exchange.ts'
import { checkPath } from '../admission/request-guards.ts'
import { costOf } from '../routing/route-facts.ts'
import { callerTurns } from '../admission/turns.ts'

export interface QuotaPolicy {
  credits: Credits
  /**
   * After authentication (the request resolved, exchange.ts `resolveOnce`): its scopes, its shape and its
   * credit, then its turn. A caller refused here (400, 403, 413, 415, 429, 503) is answered at once and
   * holds nothing; an admitted request past its caller's share of this turn waits, unread, for a later one.
   */
  admit(request: Request, path: string, principal: Principal): Promise<void> | undefined
  /**
   * The credits admission did not take: a per-item route's whole cost (all of the cost for a route admission
   * did not resolve); when they do not fit, anything taken is given back with the 429.
   */
  chargeRest(request: Request, exchange: Exchange, body: unknown): ReturnType<Credits['take']> | undefined
}

export function quotaPolicy(config: Config, quota: QuotaStore, clock: () => number): QuotaPolicy {
  const credits = createCredits(config, quota, clock)
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
      const { route, owner } = exchange.resolved!
      checkScope(principal, owner?.domain.name)
      checkPath(path)
      checkOpen(owner)
      checkBodyHeaders(request, route, config.bodyLimit)
      if (!route) return
      // What its unread body may hold while it waits: its declared length, else (chunked) its route's limit.
      const declared = request.headers.get('content-length')
      const bytes = !hasBody(request, declared) ? 0 : declared !== null ? Number(declared) || 0 : route.bodyLimit
      // A per-item route is charged its whole cost once its body is parsed (credits.ts); until then a credit must be left.
      const perItem = route.facts.cost !== undefined
      const turn = () => {
        if (perItem) exchange.awaitsCharge = true
        return turns.take(principal.subject, bytes)
      }
      const taken = route.facts.free
        ? credits.observe(request, principal)
        : perItem
          ? credits.check(request, principal)
          : credits.take(request, principal, 1, 1)
      return taken instanceof Promise ? taken.then(turn) : turn()
    },
    chargeRest(request, exchange, body) {
      const principal = exchange.principal
      if (!principal || exchange.uncounted || exchange.route?.facts.free) return
      exchange.awaitsCharge = false
      const cost = costOf(exchange.route?.facts.cost, body)
      const rest = cost - (exchange.credits ?? 0)
      if (rest > 0) return credits.take(request, principal, rest, cost)
    },
  }
}
