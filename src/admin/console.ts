/**
 * `GET /console`: the operator console, a page of plain HTML, JavaScript modules and CSS driving the
 * operator API (/admin/v1) from the browser with the operator's token (docs/console.md). Its files are
 * imported `with { type: 'file' }`, so `bun build --compile` embeds them in the executable and the page
 * works on a machine with no internet; each is read once, on its first request, and kept.
 *
 * Every answer carries a Content-Security-Policy that allows this origin only and no inline script or
 * style, refuses framing, and sends no Referer. The page itself is `no-store`; the assets are revalidated on
 * each load (`no-cache` with an ETag), so an upgraded server never pairs its page with yesterday's script.
 */
import { Elysia } from 'elysia'
import { exchangeOf } from '../http/edge/exchange.ts'
import chartsPath from './console/charts.js' with { type: 'file' }
import cssPath from './console/console.css' with { type: 'file' }
import htmlPath from './console/index.html' with { type: 'file' }
import scriptPath from './console/console.js' with { type: 'file' }

export const CONSOLE_PATH = '/console'
export const CONSOLE_ASSETS = `${CONSOLE_PATH}/assets`

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

/** The headers of every console answer. */
const SECURITY = {
  'content-security-policy': CONSOLE_CSP,
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
}

/** `If-None-Match` holds `etag`, compared weakly (RFC 9110 section 13.1.2): compression.ts makes a compressed answer's tag weak. */
const matches = (header: string | null, etag: string) =>
  header !== null && header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)

/**
 * A file served as it is, read on first request. Declared to compression.ts (`body`, `bodyKey`), which
 * compresses it once and keeps the result.
 */
const file = (path: string, type: string, cache: string) => {
  let read: Promise<{ body: Uint8Array; etag: string }> | undefined
  const headers = { ...SECURITY, 'content-type': type, 'cache-control': cache, vary: 'Accept-Encoding' }
  return async ({ request }: { request: Request }) => {
    read ??= Bun.file(path)
      .bytes()
      .then((body) => ({ body, etag: `"${Bun.hash(body).toString(36)}"` }))
    const { body, etag } = await read
    if (matches(request.headers.get('if-none-match'), etag)) return new Response(null, { status: 304, headers: { ...headers, etag } })
    const exchange = exchangeOf(request)
    exchange.body = body
    exchange.bodyKey = path
    return new Response(body, { headers: { ...headers, etag } })
  }
}

const HIDDEN = { detail: { hide: true } }

/**
 * The console's routes, outside /api/v1 (the request hook neither authenticates nor counts them: the page
 * is public, the data behind it is the operator API's to guard).
 */
export const consoleRoutes = () =>
  new Elysia({ name: 'almanac:console' })
    .get(CONSOLE_PATH, file(htmlPath as unknown as string, 'text/html; charset=utf-8', 'no-store'), HIDDEN)
    .get(`${CONSOLE_ASSETS}/console.js`, file(scriptPath, 'text/javascript; charset=utf-8', 'no-cache'), HIDDEN)
    .get(`${CONSOLE_ASSETS}/charts.js`, file(chartsPath, 'text/javascript; charset=utf-8', 'no-cache'), HIDDEN)
    .get(`${CONSOLE_ASSETS}/console.css`, file(cssPath, 'text/css; charset=utf-8', 'no-cache'), HIDDEN)
