/**
 * The headers an answer carries beyond its body: quota, definitions date, caching, request id. Built here,
 * in one place, from what the exchange learnt on the way (exchange.ts): a new response header is added here.
 *
 * Why templates: Bun makes a Headers from a plain object at ~0.35 µs a header, in process, and 6–7 µs a
 * request for ten over HTTP, while a Headers it is handed is copied for next to nothing (bench/bun-floor.ts).
 * A reply's eleven headers are mostly the same from one request to the next: content type and Vary, the
 * plan's limit and policy, the window's reset, the route's definitions date and Cache-Control. Those come
 * from a kept template; only the four that change (remaining credits, RateLimit, ETag, request id) are set
 * on the copy. Setting a header on a Response already made costs more again, so the request id goes in
 * here rather than being added later by the observability layer.
 */
import type { QuotaState } from '../../stores/quota.ts'
import type { Exchange, QuotaMark } from '../edge/exchange.ts'
import { JSON_HEADERS } from './reply.ts'

export const REQUEST_ID_HEADER = 'x-request-id'

const secondsLeft = ({ state, now }: QuotaMark) => Math.max(0, state.reset - Math.floor(now / 1000))
// The policy is named after the plan (plan names are [A-Za-z0-9_.-], safe in a quoted string).
const policyValue = (state: QuotaState) => `"${state.policy}";q=${state.limit};w=${state.windowSeconds}`
const rateLimitValue = (mark: QuotaMark) => `"${mark.state.policy}";r=${mark.state.remaining};t=${secondsLeft(mark)}`

/** The five quota headers (docs/auth-and-quotas.md): SPEC's X-Quota-* and the IETF RateLimit pair. */
export function quotaHeaders(mark: QuotaMark): Record<string, string> {
  const { state } = mark
  return {
    'x-quota-limit': String(state.limit),
    'x-quota-remaining': String(state.remaining),
    'x-quota-reset': String(state.reset),
    'ratelimit-policy': policyValue(state),
    ratelimit: rateLimitValue(mark),
  }
}

/**
 * Every header the exchange holds, as a record: for the answers built elsewhere (problems, Elysia's own
 * answers), which merge it with headers of their own. The request id is left to the observability layer.
 */
export function exchangeHeaders(exchange: Exchange | undefined): Record<string, string> | undefined {
  const dated = exchange?.resolved?.definitionsUpdated
  if (!exchange?.quota && !dated) return undefined
  const out = exchange!.quota ? quotaHeaders(exchange!.quota) : {}
  if (dated) out['x-definitions-updated'] = dated
  return out
}

/**
 * Templates by the values they hold. A handful live at once (plans × windows × a route's date and cache
 * rule); a new window makes new ones, so the set is dropped whole when it grows past a bound.
 */
const templates = new Map<string, Headers>()
const TEMPLATES_KEPT = 256

function template(state: QuotaState | undefined, dated: string | undefined, control: string | undefined): Headers {
  const key = state ? `${state.policy};${state.limit};${state.windowSeconds};${state.reset};${dated};${control}` : `;${dated};${control}`
  let kept = templates.get(key)
  if (!kept) {
    if (templates.size >= TEMPLATES_KEPT) templates.clear()
    kept = new Headers(JSON_HEADERS)
    if (state) {
      kept.set('x-quota-limit', String(state.limit))
      kept.set('x-quota-reset', String(state.reset))
      kept.set('ratelimit-policy', policyValue(state))
    }
    if (dated) kept.set('x-definitions-updated', dated)
    if (control) kept.set('cache-control', control)
    templates.set(key, kept)
  }
  return kept
}

/**
 * The headers of a JSON reply (caching.ts): content type and Vary, the exchange's quota, definitions date
 * and request id, and, on a cacheable route, Cache-Control and the ETag.
 */
export function replyHeaders(exchange: Exchange | undefined, control?: string, etag?: string): Headers {
  const quota = exchange?.quota
  const headers = new Headers(template(quota?.state, exchange?.resolved?.definitionsUpdated, control))
  if (quota) {
    headers.set('x-quota-remaining', String(quota.state.remaining))
    headers.set('ratelimit', rateLimitValue(quota))
  }
  if (etag) headers.set('etag', etag)
  if (exchange?.id) {
    headers.set(REQUEST_ID_HEADER, exchange.id)
    exchange.idSent = true
  }
  return headers
}
