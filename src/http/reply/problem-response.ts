/**
 * The one place every failure becomes a response (the app's onError, and the request hook's refusals): a
 * 404 on a path that answers other methods becomes a 405 with Allow (from the request's resolution,
 * route-table.ts); the problem in the caller's form with its request id; the credits of a declined request
 * given back (credits.ts); the quota and definitions headers a response under /api/v1 carries even when it
 * failed before routing. A 500 is logged whole.
 */
import type { Config } from '../../config.ts'
import { AlmanacError, type FieldError } from '../../lib/errors.ts'
import type { Logger } from '../../lib/logger.ts'
import { type Credits, givesBack } from '../credits/credits.ts'
import { exchangeOf } from '../edge/exchange.ts'
import { isApi, pathOf } from '../edge/paths.ts'
import { PROBLEM_URN, toProblem } from './problem.ts'
import { formOf, JSON_HEADERS, problemBody } from './reply.ts'
import { exchangeHeaders, REQUEST_ID_HEADER } from './response-headers.ts'
import { pathParameters, type Resolution, type RouteEntry } from '../routing/route-table.ts'

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
      error = allow.length
        ? new AlmanacError('method', `${request.method} is not allowed on ${path}; use ${allow.join(' or ')}.`, {
            headers: { Allow: allow.join(', ') },
          })
        : noSuchRoute(resolved.nearestRoutes?.(path) ?? [])
    }
    const { problem, headers } = toProblem(code, error, path)
    if (problem.errors && resolved.route) placeErrors(problem.errors, resolved.route)
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

/**
 * The 404 of a path no route answers: the route patterns it is nearest (route-table.ts `nearestRoutes`),
 * and where the reference is, so a caller at `/` or on a typo learns where to look.
 */
function noSuchRoute(near: readonly string[]): AlmanacError {
  const guess = near.length ? ` (did you mean ${near.join(' or ')}?)` : ''
  return new AlmanacError('not_found', `No such route${guess}. The API reference is at /docs, the OpenAPI document at /openapi.json.`)
}

/**
 * Services name a refused input by its field and default to the body (lib/errors.ts `invalid`): the IP
 * service's `ip` is the body's in POST /ip and the path's in GET /ip/:ip. A field that is a path parameter of
 * the route and not a member of its body is in the path; on a route that takes no body, a `header.` field
 * is a header and any other a query parameter.
 */
function placeErrors(errors: FieldError[], route: RouteEntry): void {
  const params = pathParameters(route.pattern)
  const members = (route.bodySchema as { properties?: object } | undefined)?.properties ?? {}
  for (const e of errors) {
    if (e.in !== 'body') continue
    const name = e.field.split('.')[0]!
    if (params.includes(name) && !Object.hasOwn(members, name)) e.in = 'path'
    else if (!route.json) e.in = e.field.startsWith('header.') ? 'header' : 'query'
  }
}
