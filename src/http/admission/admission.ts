/**
 * Admission: what a request may send, known from its request line and headers alone, before a byte of
 * its body is read (quota-policy.ts takes its first credit on the same footing). Its route, resolved once
 * (route-table.ts), says whether it takes a JSON body (it has a body schema) and its body limit (declared
 * beside the route, else DEFAULT_BODY_LIMIT, never over ALMANAC_BODY_LIMIT). So a 1 MB text/plain body to
 * a JSON route is a 415, and a body over its route's limit a 413, while the body is still unread on the
 * socket.
 */
import { AlmanacError, tooLarge } from '../../lib/errors.ts'
import type { RouteEntry } from '../routing/route-table.ts'

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
export function checkBodyHeaders(request: Request, route: RouteEntry | null, ceiling: number): void {
  const limit = route?.bodyLimit ?? ceiling
  const declared = request.headers.get('content-length')
  // The type first: a text body is wrong at any size, and the caller should learn that, not a size.
  if (route?.json && hasBody(request, declared)) {
    const type = mediaType(request.headers.get('content-type'))
    if (type === null || !JSON_TYPE.test(type)) throw unsupported(type)
  }
  if (declared !== null && !(Number(declared) <= limit)) throw overLimit(limit, route)
}

const unsupported = (type: string | null) =>
  new AlmanacError(
    'unsupported_type',
    `This route takes a JSON body: send it with Content-Type: application/json (the request's Content-Type ` +
      `is ${type === null ? 'missing' : JSON.stringify(type)}).`,
    { extra: { accepted: ['application/json'], received: type } },
  )

/** The 413 of a body over its route's limit (declared, or counted while reading a chunked one). */
export const overLimit = (limit: number, route?: RouteEntry | null) =>
  tooLarge(
    route
      ? `The request body is over the limit of ${limit} bytes for ${route.pattern.replace(/^\/api\/v1/, '')}.`
      : `The request body is over the limit of ${limit} bytes.`,
  )
