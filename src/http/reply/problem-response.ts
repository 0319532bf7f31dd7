/**
 * The one place every failure becomes a response (the app's onError, and the request hook's refusals): a
 * 404 on a path that answers other methods becomes a 405 with Allow (from the request's resolution,
 * route-table.ts); the problem in the caller's form with its request id; the credits of a declined request
 * given back (credits.ts); the quota and definitions headers a response under /api/v1 carries even when it
 * failed before routing. A 500 is logged whole.
 */
import type { Config } from '../../config.ts'
import { AlmanacError } from '../../lib/errors.ts'
import type { Logger } from '../../lib/logger.ts'
import { type Credits, givesBack } from '../credits/credits.ts'
import { exchangeOf } from '../edge/exchange.ts'
import { isApi, pathOf } from '../edge/paths.ts'
import { PROBLEM_URN, toProblem } from './problem.ts'
import { formOf, JSON_HEADERS, problemBody } from './reply.ts'
import { exchangeHeaders, REQUEST_ID_HEADER } from './response-headers.ts'
import type { Resolution } from '../routing/route-table.ts'

export interface ProblemResponseDeps {
  credits: Credits
  /** The request's resolution in the route table (the Allow of a 405, the definitions date), made once. */
  resolve: (request: Request) => Resolution
  log?: Logger
}

export type ProblemResponse = (
  code: string | number,
  error: unknown,
  request: Request,
  setHeaders: Record<string, unknown>,
) => Promise<Response>

export function problemResponse(config: Config, { credits, resolve, log }: ProblemResponseDeps): ProblemResponse {
  return async (code, error, request, setHeaders) => {
    const path = pathOf(request.url)
    // Resolved at the start of the request hook, or now for one that failed before it.
    const resolved = resolve(request)
    if (code === 'NOT_FOUND') {
      const allow = resolved.allow
      if (allow.length)
        error = new AlmanacError('method', `${request.method} is not allowed on ${path}; use ${allow.join(' or ')}.`, {
          headers: { Allow: allow.join(', ') },
        })
    }
    const { problem, headers } = toProblem(code, error, path)
    // A request the server declined to serve (503 …) gets back the credits it was admitted with.
    if (givesBack(problem.status, code)) await credits.giveBack(request)
    else await credits.chargeUnread(request)
    // The id the access log has for this request, so a caller's report can be matched to its line.
    const exchange = exchangeOf(request)
    exchange.problem = problem.type.slice(PROBLEM_URN.length)
    const id = exchange.id
    if (id) problem.request_id = id
    if (problem.status === 500)
      log?.({ level: 'error', msg: 'unhandled', path, request_id: id, error: String((error as Error)?.stack ?? error) })
    const out = new Headers(JSON_HEADERS)
    for (const [k, v] of Object.entries(setHeaders)) if (typeof v === 'string') out.set(k, v)
    for (const [k, v] of Object.entries(exchangeHeaders(exchange) ?? {})) out.set(k, v)
    for (const [k, v] of Object.entries(headers)) out.set(k, v)
    if (isApi(path) && !out.has('x-quota-limit')) for (const [k, v] of Object.entries(await credits.peekHeaders(request))) out.set(k, v)
    const body = JSON.stringify(problemBody(problem, formOf(request, config.responseForm)))
    if (id) {
      out.set(REQUEST_ID_HEADER, id)
      exchange.idSent = true
    }
    exchange.body = body
    return new Response(body, { status: problem.status, headers: out })
  }
}
