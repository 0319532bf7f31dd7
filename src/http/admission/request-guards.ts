/**
 * Checks on the request itself, before any route sees it: a path with a broken percent-escape (`%ZZ`) is a
 * 400 (Elysia would otherwise hand routes a null path parameter), and the body limit is a 413 problem in
 * the caller's form: the route's own limit under /api/v1 (admission.ts), `config.bodyLimit` elsewhere.
 * JSON bodies are limited in depth and size before they are parsed.
 *
 * A declared `Content-Length` over the limit is refused before a byte of the body is read. A body without
 * one (chunked) is read here with a running count and refused as soon as it passes the limit, so a client
 * cannot make the server buffer more than the limit either way. `Bun.serve`'s own `maxRequestBodySize` is set
 * well above the limit (see `serverBodyCeiling`) as a last backstop: it answers with an empty 413 of its own,
 * so it must only ever see requests that lie about their size by a wide margin.
 */
import { Elysia, ParseError } from 'elysia'
import { badRequest, invalid } from '../../lib/errors.ts'
import { hasBody, overLimit } from './admission.ts'
import { callerOf, existingExchange } from '../edge/exchange.ts'
import { checkMemberNames, JsonScan } from './json-shape.ts'
import { checkLargeBody, LARGE_BODY_CHARS } from './large-bodies.ts'
import { heavySteps } from './turns.ts'

/** Characters of a large JSON body scanned in one heavy step: ~0.2 ms (json-shape.ts, ~3 ns a character). */
const SCAN_CHARS_A_STEP = 64 * 1024

/** The transport-level ceiling handed to Bun.serve: generous, so our JSON 413 answers in all honest cases. */
export const serverBodyCeiling = (bodyLimit: number) => Math.max(bodyLimit * 16, 64 * 1024 * 1024)

async function readCapped(request: Request, limit: number): Promise<string> {
  const reader = request.body!.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      reader.cancel().catch(() => {})
      throw overLimit(limit, existingExchange(request)?.route)
    }
    chunks.push(value)
  }
  return new TextDecoder().decode(Buffer.concat(chunks))
}

function pathIsWellFormed(path: string): boolean {
  if (!path.includes('%')) return true
  try {
    decodeURIComponent(path)
    return true
  } catch {
    return false
  }
}

/** A path with a broken percent-escape (`%ZZ`, a lone `%`) is a 400. */
export function checkPath(path: string): void {
  if (!pathIsWellFormed(path)) throw badRequest('The path holds an invalid percent-encoding (such as %ZZ or a lone %).')
}

/** The checks made before routing on the request and its path (from the app's one request hook): throws a 400 or a 413. */
export function checkRequest(request: Request, path: string, limit: number): void {
  checkPath(path)
  const declared = request.headers.get('content-length')
  if (declared !== null && !(Number(declared) <= limit)) throw overLimit(limit)
}

/**
 * Reads request bodies: every JSON body (its shape checked before it is parsed, json-shape.ts), and any
 * body sent without a Content-Length, counting as it goes. Other bodies with a Content-Length (already
 * checked against the limit) are left to Elysia's own parsers.
 */
export const bodyReader = (limit: number, maxWaitingBytes: number) =>
  new Elysia({ name: 'almanac:body-reader', seed: limit }).onParse({ as: 'global' }, async ({ request, contentType }) => {
    const length = request.headers.get('content-length')
    if (!hasBody(request, length)) return
    // The route's own limit when admission resolved it (its Content-Length was checked against it there).
    const route = existingExchange(request)?.route
    const cap = route?.bodyLimit ?? limit
    const type = (contentType ?? '').toLowerCase()
    const json = type.includes('json')
    const declared = length !== null
    if (declared && !json) return
    const text = declared ? await request.text() : await readCapped(request, cap)
    // A large body's scan, in parts of SCAN_CHARS_A_STEP, then its parse and checks, are heavy steps with a
    // turn of the event loop each (turns.ts heavySteps): whatever another request waits behind is one.
    const large = text.length > LARGE_BODY_CHARS
    const step = () => (large ? heavySteps.take(callerOf(request), text.length, maxWaitingBytes) : undefined)
    if (json) {
      // A large body's over-long per-item list is parsed only to one item past its maximum (json-shape.ts).
      const scan = new JsonScan(text, large ? route?.facts.cost : undefined)
      while (!scan.done) {
        const turn = step()
        if (turn) await turn
        scan.advance(large ? SCAN_CHARS_A_STEP : Infinity)
      }
      const next = step()
      if (next) await next
      const parseable = scan.parseable()
      let parsed: unknown
      try {
        parsed = JSON.parse(parseable)
      } catch (e) {
        throw new ParseError(e as Error)
      }
      // Every body is an object (or an array); a bare string of 300,000 characters took the schema 0.7 s.
      if (typeof parsed !== 'object' || parsed === null) throw invalid('(root)', 'the request body must be a JSON object')
      checkMemberNames(parseable, parsed)
      if (large) checkLargeBody(route, parsed)
      return parsed
    }
    const turn = step()
    if (turn) await turn
    if (type.startsWith('application/x-www-form-urlencoded')) {
      const form = Object.fromEntries(new URLSearchParams(text))
      checkMemberNames(text, form)
      return form
    }
    return text
  })
