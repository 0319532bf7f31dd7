/**
 * Quota credits of one request (docs/auth-and-quotas.md, "What costs a credit"), each request charged once,
 * all or nothing, so a request whose cost fits in what is left is admitted whatever runs beside it:
 * - a route of fixed cost (1) is charged at admission, from the request line and headers (quota-policy.ts,
 *   in the request hook), so a caller with none left is refused before a byte of its body is read;
 * - a per-item route's cost is known only from its body: admission checks that a credit is left (`check`,
 *   spending nothing), and its whole cost is taken in one step after parsing (transform hook). Taking the
 *   first credit at admission and the rest later let concurrent first credits fill the window, so bulk
 *   callers were refused while the plan still had credits (issue 44, on Redis).
 * A request answered 503 (or refused on any other "come back later" ground, see `givesBack`) gets its
 * credits back in `giveBack`, from the one place every problem passes.
 *
 * Memory and SQLite stores answer synchronously, Redis with a promise; each step keeps whichever it got,
 * so the local stores put no promise on the path (an Elysia hook that returns one costs every request).
 */
import type { Config, Plan } from '../../config.ts'
import { AlmanacError, STORE_RETRY_SECONDS, storeUnavailable } from '../../lib/errors.ts'
import { quotaState, quotaWindow, type Answer, type QuotaState, type QuotaStore } from '../../stores/quota.ts'
import type { Principal } from '../admission/auth.ts'
import { exchangeOf, existingExchange } from '../edge/exchange.ts'
import { quotaHeaders } from '../reply/response-headers.ts'

/**
 * Statuses whose credits are given back: the server declined to serve now (503 busy or unavailable, a
 * per-caller share's 429, 507 storage full) and the caller is told to come back; charging for that would
 * make a polite retry loop drain the plan. A 404 of Elysia's router (`NOT_FOUND`: no route ran) likewise,
 * and a 405 (a path that answers another method: GET /ip/bulk reaches GET /ip/:ip, which refuses it).
 * Everything else the caller caused (400 unreadable JSON, 413 counted while reading, 404 of a resource,
 * 422) keeps its credit: the body was read and the route did its work.
 */
export const givesBack = (status: number, code: string | number) =>
  status === 503 || status === 429 || status === 507 || status === 405 || code === 'NOT_FOUND'

/** The answer to this request reports `state` (its headers are made when the response is, response-headers.ts). */
const mark = (request: Request, state: QuotaState, now: number) => void (exchangeOf(request).quota = { state, now })

/** The 429 of a request whose cost does not fit (its credits already given back). */
function refuse(request: Request, principal: Principal, cost: number, state: QuotaState, now: number): never {
  mark(request, state, now)
  const retryAfter = String(Math.max(1, state.reset - Math.floor(now / 1000)))
  const credits = `${cost} credit${cost > 1 ? 's' : ''}`
  const detail =
    cost > state.limit
      ? `This request costs ${credits}, more than the ${state.limit} that plan ${principal.plan.name} allows per window; send at ` +
        `most ${state.limit} items.`
      : `This request costs ${credits} and ${state.remaining} remain in the window of plan ${principal.plan.name}; it resets ` +
        `at ${new Date(state.reset * 1000).toISOString()}.`
  throw new AlmanacError('quota', detail, {
    headers: { 'Retry-After': retryAfter },
    extra: { cost, remaining: state.remaining, reset: state.reset },
  })
}

export interface Credits {
  /**
   * Admission of a request whose cost its body will tell: a 429 (cost 1) unless a credit is left, a 503 when
   * the store cannot be asked (or fail-open); spends nothing and marks the state its answer reports.
   */
  check(request: Request, principal: Principal): Answer<void>
  /** Admission of a route that costs no credit: marks the state its answer reports; a 503 when the store cannot be asked. */
  observe(request: Request, principal: Principal): Answer<void>
  /**
   * Takes `credits` more for the request (its whole cost being `cost`): marks the quota state its answer
   * reports, or throws a 429 after giving back what it held, or a 503 when the store cannot be asked (or lets
   * the request go uncounted, fail-open).
   */
  take(request: Request, principal: Principal, credits: number, cost: number): Answer<void>
  /**
   * The one credit of a per-item request admitted but never charged, because its body could not be read
   * or parsed (400, 413): it was read, so it costs what an unreadable list costs (`costOf`). Never throws:
   * with no credit left the failure spends nothing.
   */
  chargeUnread(request: Request): Answer<void>
  /** Gives back every credit the request holds (its answer is one of `givesBack`). Never throws. */
  giveBack(request: Request): Answer<void>
  /** Quota headers for a response that spent nothing (404, 405 …); zeros without a caller (401). */
  peekHeaders(request: Request): Answer<Record<string, string>>
}

export function createCredits(config: Config, quota: QuotaStore, clock: () => number): Credits {
  /**
   * Quota headers when the store could not be asked. Failing open counts nothing, so the whole plan is
   * reported until the window ends; a 503 says "nothing can be spent now, retry in a moment" rather than
   * pointing clients at the window's end, which could stall them for a day over a short outage.
   */
  const storeDownState = (plan: Plan, now: number): QuotaState => {
    const whole = quotaState(plan, quotaWindow(plan, now).start, 0, true)
    return config.quotaFailOpen ? whole : { ...whole, allowed: false, remaining: 0, reset: Math.floor(now / 1000) + STORE_RETRY_SECONDS }
  }

  /** The store could not be asked: a 503, or (fail-open) the request goes through uncounted. */
  const storeDown = (request: Request, plan: Plan, e: unknown) => {
    const now = clock()
    mark(request, storeDownState(plan, now), now)
    if (config.quotaFailOpen) {
      exchangeOf(request).uncounted = true
      return
    }
    throw storeUnavailable(`The quota store is unreachable, so requests cannot be counted: ${(e as Error).message}. Try again shortly.`)
  }

  /** Marks the caller's state for the answer's headers, spending nothing; with `needed`, a 429 unless that many are left. */
  const peek = (request: Request, principal: Principal, needed: number): Answer<void> => {
    const exchange = exchangeOf(request)
    const now = (exchange.creditsAt ??= clock())
    const { subject, plan } = principal
    const checked = (state: QuotaState) => {
      if (state.remaining < needed) refuse(request, principal, needed, state, now)
      mark(request, state, now)
    }
    let answer: Answer<QuotaState>
    try {
      answer = quota.peek(subject, plan, now)
    } catch (e) {
      return storeDown(request, plan, e)
    }
    return answer instanceof Promise ? answer.then(checked, (e) => storeDown(request, plan, e)) : checked(answer)
  }
  const check: Credits['check'] = (request, principal) => peek(request, principal, 1)
  const observe: Credits['observe'] = (request, principal) => peek(request, principal, 0)

  const take: Credits['take'] = (request, principal, credits, cost) => {
    const exchange = exchangeOf(request)
    if (exchange.uncounted) return
    // Every step of one request counts in the window of its admission.
    const now = (exchange.creditsAt ??= clock())
    const { subject, plan } = principal
    const taken = (state: QuotaState): Answer<void> => {
      if (state.allowed) {
        exchange.credits = (exchange.credits ?? 0) + credits
        mark(request, state, now)
        return
      }
      const held = exchange.credits ?? 0
      if (!held) return refuse(request, principal, cost, state, now)
      exchange.credits = 0
      let back: Answer<QuotaState>
      try {
        back = quota.refund(subject, plan, held, now)
      } catch {
        return refuse(request, principal, cost, state, now)
      }
      return back instanceof Promise
        ? back.then(
            (after) => refuse(request, principal, cost, after, now),
            () => refuse(request, principal, cost, state, now),
          )
        : refuse(request, principal, cost, back, now)
    }
    let answer: Answer<QuotaState>
    try {
      answer = quota.consume(subject, plan, credits, now)
    } catch (e) {
      return storeDown(request, plan, e)
    }
    return answer instanceof Promise ? answer.then(taken, (e) => storeDown(request, plan, e)) : taken(answer)
  }

  const chargeUnread: Credits['chargeUnread'] = (request) => {
    const exchange = existingExchange(request)
    if (!exchange?.awaitsCharge || !exchange.principal) return
    exchange.awaitsCharge = false
    try {
      const taken = take(request, exchange.principal, 1, 1)
      if (taken instanceof Promise) return taken.catch(() => {})
    } catch {}
  }

  const giveBack: Credits['giveBack'] = (request) => {
    const exchange = existingExchange(request)
    const held = exchange?.credits
    const principal = exchange?.principal
    if (!held || !principal) return
    exchange.credits = 0
    exchange.refunded = (exchange.refunded ?? 0) + held
    const now = exchange.creditsAt ?? clock()
    const given = (state: QuotaState) => mark(request, state, now)
    try {
      const back = quota.refund(principal.subject, principal.plan, held, now)
      // A store that fails here keeps the credit; the answer keeps the headers it had.
      return back instanceof Promise ? back.then(given, () => {}) : given(back)
    } catch {}
  }

  /**
   * Without a caller (a 401, the 403 of a plan not offered, a 400 before credentials were read) there is no
   * subject and so no credit: the SPEC's three headers say so (limit 0, remaining 0, a reset of now: nothing
   * to wait for), and the IETF pair, which names a plan, is left out.
   */
  const peekHeaders: Credits['peekHeaders'] = (request) => {
    const principal = existingExchange(request)?.principal
    if (!principal) return { 'x-quota-limit': '0', 'x-quota-remaining': '0', 'x-quota-reset': String(Math.floor(clock() / 1000)) }
    const plan = principal.plan
    const now = clock()
    const down = () => quotaHeaders({ state: storeDownState(plan, now), now })
    try {
      const state = quota.peek(principal.subject, principal.plan, now)
      return state instanceof Promise ? state.then((s) => quotaHeaders({ state: s, now }), down) : quotaHeaders({ state, now })
    } catch {
      return down()
    }
  }

  return { check, observe, take, chargeUnread, giveBack, peekHeaders }
}
