/**
 * `GET /docs`: Swagger UI over `/openapi.json`, with every asset served from our own routes. The files come
 * from the `swagger-ui-dist` npm package through `with { type: 'file' }` imports, so `bun build --compile`
 * embeds them in the executable and the page renders on a machine with no internet. No inline script:
 * the page's Content-Security-Policy allows only this origin.
 */
import { Elysia } from 'elysia'
import bundlePath from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'file' }
import cssPath from 'swagger-ui-dist/swagger-ui.css' with { type: 'file' }
import faviconPath from 'swagger-ui-dist/favicon-32x32.png' with { type: 'file' }
import { exchangeOf } from '../edge/exchange.ts'
import { OPENAPI_PATH } from './openapi.ts'

export const DOCS_PATH = '/docs'

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  // Swagger UI sets style attributes at run time.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

const PAGE = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Almanac API documentation</title>
  <link rel="icon" type="image/png" href="${DOCS_PATH}/favicon.png">
  <link rel="stylesheet" href="${DOCS_PATH}/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="${DOCS_PATH}/swagger-ui-bundle.js"></script>
  <script src="${DOCS_PATH}/init.js"></script>
</body>
</html>
`

const INIT = `window.ui = SwaggerUIBundle({
  url: '${OPENAPI_PATH}',
  dom_id: '#swagger-ui',
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
  defaultModelsExpandDepth: 0,
  displayRequestDuration: true,
  tryItOutEnabled: false,
  validatorUrl: null,
});
`

/**
 * A file served as it is; text files are declared to compression.ts, which compresses them once (the
 * 1.7 MB Swagger bundle) and keeps the result. Read into memory on first request: ~2 MB in all.
 */
const asset = (path: string, type: string) => {
  let bytes: Promise<Uint8Array> | undefined
  const text = !type.startsWith('image/')
  const headers = {
    'content-type': type,
    'cache-control': 'public, max-age=86400',
    'x-content-type-options': 'nosniff',
    ...(text ? { vary: 'Accept-Encoding' } : {}),
  }
  return async ({ request }: { request: Request }) => {
    bytes ??= Bun.file(path).bytes()
    const body = await bytes
    if (text) {
      const exchange = exchangeOf(request)
      exchange.body = body
      exchange.bodyKey = path
    }
    return new Response(body, { headers })
  }
}

const text =
  (body: string, type: string, extra: Record<string, string> = {}) =>
  () =>
    new Response(body, { headers: { 'content-type': type, 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff', ...extra } })

export const docsRoutes = () =>
  new Elysia({ name: 'almanac:docs' })
    .get(DOCS_PATH, text(PAGE, 'text/html; charset=utf-8', { 'content-security-policy': CSP, 'referrer-policy': 'no-referrer' }), {
      detail: { hide: true },
    })
    .get(`${DOCS_PATH}/init.js`, text(INIT, 'text/javascript; charset=utf-8'), { detail: { hide: true } })
    .get(`${DOCS_PATH}/swagger-ui-bundle.js`, asset(bundlePath, 'text/javascript; charset=utf-8'), { detail: { hide: true } })
    .get(`${DOCS_PATH}/swagger-ui.css`, asset(cssPath, 'text/css; charset=utf-8'), { detail: { hide: true } })
    .get(`${DOCS_PATH}/favicon.png`, asset(faviconPath, 'image/png'), { detail: { hide: true } })
