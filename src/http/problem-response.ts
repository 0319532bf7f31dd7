/**
 * The one place every failure becomes a response (the app's onError, and the request hook's refusals): a
 * 404 on a path that answers other methods becomes a 405 with Allow; the problem in the caller's form with
 * its request id; the credits of a declined request given back (credits.ts); the quota and definitions
 * headers a response under /api/v1 carries even when it failed before routing. A 500 is logged whole.
 */
import type { Config } from '../config.ts'
import { AlmanacError } from '../lib/errors.ts'
import { type Credits, givesBack } from './credits.ts'
import { exchangeOf, existingExchange } from './exchange.ts'
import { isApi, pathOf } from './paths.ts'
import { toProblem } from './problem.ts'
import { formOf, JSON_HEADERS, problemBody } from './reply.ts'
import { exchangeHeaders, REQUEST_ID_HEADER } from './response-headers.ts'
import { routeMatcher } from './route-match.ts'

export interface ProblemResponseDeps {
  credits: Credits
  /** The definitions-date header of a path (domain-routes.ts). */
  definitionsOf: (path: string) => string | undefined
  /** The app's routes, read once on first use (for the Allow of a 405). */
  routes: () => readonly { method: string; path: string }[]
  log?: (line: string) => void
}

export type ProblemResponse = (
  code: string | number,
  error: unknown,
  request: Request,
  setHeaders: Record<string, unknown>,
) => Promise<Response>

export function problemResponse(config: Config, { credits, definitionsOf, routes, log }: ProblemResponseDeps): ProblemResponse {
  /** Methods that do answer a path that was not found with the request's method (for 405). */
  const matching = routeMatcher(routes)
  const allowedMethods = (path: string): string[] => [...new Set(matching(path).map((r) => r.method))].filter((m) => m !== 'ALL').sort()

  return async (code, error, request, setHeaders) => {
    const path = pathOf(request.url)
    if (code === 'NOT_FOUND') {
      const allow = allowedMethods(path)
      if (allow.length)
        error = new AlmanacError('method', `${request.method} is not allowed on ${path}; use ${allow.join(' or ')}.`, {
          headers: { Allow: allow.join(', ') },
        })
    }
    const { problem, headers } = toProblem(code, error, path)
    // A request the server declined to serve (503 …) gets back the credits it was admitted with.
    if (givesBack(problem.status, code)) await credits.giveBack(request)
    // The id the access log has for this request, so a caller's report can be matched to its line.
    const exchange = existingExchange(request)
    const id = exchange?.id
    if (id) problem.request_id = id
    if (problem.status === 500)
      log?.(JSON.stringify({ level: 'error', msg: 'unhandled', path, request_id: id, error: String((error as Error)?.stack ?? error) }))
    const out = new Headers(JSON_HEADERS)
    for (const [k, v] of Object.entries(setHeaders)) if (typeof v === 'string') out.set(k, v)
    for (const [k, v] of Object.entries(exchangeHeaders(exchange) ?? {})) out.set(k, v)
    for (const [k, v] of Object.entries(headers)) out.set(k, v)
    // Failures before routing (401, 400, 413) never passed the transform hook that adds it.
    if (!out.has('x-definitions-updated')) {
      const dated = definitionsOf(path)
      if (dated) out.set('x-definitions-updated', dated)
    }
    if (isApi(path) && !out.has('x-quota-limit')) for (const [k, v] of Object.entries(await credits.peekHeaders(request))) out.set(k, v)
    const body = JSON.stringify(problemBody(problem, formOf(request, config.responseForm)))
    if (id) {
      out.set(REQUEST_ID_HEADER, id)
      exchange.idSent = true
    }
    exchangeOf(request).body = body
    return new Response(body, { status: problem.status, headers: out })
  }
}
