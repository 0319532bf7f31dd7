/**
 * CORS for browsers calling the API from other origins (`ALMANAC_CORS_ORIGINS`, off by default: no
 * header is added and nothing runs per request). A preflight (`OPTIONS` with
 * `Access-Control-Request-Method`) is answered here, before authentication: browsers never send
 * credentials on it. Answers to allowed origins expose the quota, RateLimit and request-id headers so a
 * page can read them. No cookies are involved (keys travel in headers), so credentials are never allowed.
 */
import type { Config } from '../../config.ts'

type Handle = (request: Request) => Response | Promise<Response>

/** Response headers a page may read (the CORS-safelisted ones, such as Content-Type, are always readable). */
export const EXPOSED_HEADERS = [
  'X-Quota-Limit',
  'X-Quota-Remaining',
  'X-Quota-Reset',
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'X-Request-Id',
  'X-Definitions-Updated',
  'WWW-Authenticate',
  'Allow',
].join(', ')

/** Request headers a page may send besides the safelisted ones. */
export const ALLOWED_HEADERS = 'X-API-Key, Authorization, Content-Type, X-Response-Form, X-Request-Id'
export const ALLOWED_METHODS = 'GET, POST, OPTIONS'
/** Seconds a browser may cache a preflight answer. */
const MAX_AGE = '600'

/** Wraps the app's handler with CORS; the handler itself when no origin is configured. */
export function withCors(config: Pick<Config, 'corsOrigins'>, handle: Handle): Handle {
  if (!config.corsOrigins.length) return handle
  const any = config.corsOrigins.includes('*')
  const allowed = new Set(config.corsOrigins)
  const allowOrigin = (origin: string) => (any ? '*' : allowed.has(origin) ? origin : null)

  const decorate = (response: Response, allow: string) => {
    const h = response.headers
    h.set('access-control-allow-origin', allow)
    h.set('access-control-expose-headers', EXPOSED_HEADERS)
    // The answer differs by Origin unless every origin gets `*`.
    if (!any) h.append('vary', 'Origin')
    return response
  }

  return (request) => {
    const origin = request.headers.get('origin')
    if (origin === null) return handle(request)
    const allow = allowOrigin(origin)
    if (request.method === 'OPTIONS' && request.headers.has('access-control-request-method')) {
      const headers = new Headers({ vary: 'Origin' })
      if (allow) {
        headers.set('access-control-allow-origin', allow)
        headers.set('access-control-allow-methods', ALLOWED_METHODS)
        headers.set('access-control-allow-headers', ALLOWED_HEADERS)
        headers.set('access-control-max-age', MAX_AGE)
      }
      // An origin not allowed gets no CORS headers: the browser refuses the real request itself.
      return new Response(null, { status: 204, headers })
    }
    if (!allow) return handle(request)
    const answer = handle(request)
    return answer instanceof Promise ? answer.then((r) => decorate(r, allow)) : decorate(answer, allow)
  }
}
