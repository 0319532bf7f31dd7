/**
 * createApp(config, deps, mounted) -> the Elysia app: it composes, and each stage lives in its folder of
 * src/http (docs/architecture.md, "How a request travels"), in hook order: routing (onRequest: the request
 * resolved once in the route table, compiled below once the routes are mounted) -> admission (auth, scopes,
 * shape checks and the first credit, http/credits/quota-policy.ts) -> body (read up to the route's limit,
 * parsed) -> the rest of a per-item cost (onTransform, before the schema) -> schema -> handler (service +
 * presenter) -> reply (form + fields, ETag/304) -> response headers. Every failure on the way becomes one
 * problem in the caller's form (onError, http/reply/problem-response.ts), which also gives back the credits
 * of a 503. Opening and verifying the domains is domains/mount.ts.
 */
import { Elysia, type AnyElysia } from 'elysia'
import type { Config, ResponseForm } from './config.ts'
import type { DataDir } from './data/types.ts'
import type { Domain, MountedDomain } from './domains/types.ts'
import { staleAfterDays } from './data/freshness.ts'
import { badRequest } from './lib/errors.ts'
import type { Authenticator, Principal } from './http/admission/auth.ts'
import { replyResponse } from './http/reply/caching.ts'
import { withCompression } from './http/edge/compression.ts'
import { requestContext } from './http/routing/context.ts'
import { withCors } from './http/edge/cors.ts'
import { docsRoutes } from './http/endpoints/docs.ts'
import { domainRoutes } from './http/routing/domain-routes.ts'
import { closeInputs, declaredRoutes, generatedDocument } from './http/routing/elysia-routes.ts'
import { asLogger, type LogSink, logger } from './lib/logger.ts'
import { exchangeOf, existingExchange, resolveOnce } from './http/edge/exchange.ts'
import { metaRoutes } from './http/endpoints/meta.ts'
import { createObservability, type Observability } from './http/edge/observability.ts'
import { buildOpenApiDocument, openApiRoutes } from './http/endpoints/openapi.ts'
import { API_PREFIX, isApi, pathOf, pathStart } from './http/edge/paths.ts'
import { problemResponse } from './http/reply/problem-response.ts'
import { quotaPolicy } from './http/credits/quota-policy.ts'
import type { UsageMeter } from './http/edge/usage-meter.ts'
import { usageRoutes } from './http/endpoints/usage.ts'
import { operatorRoutes } from './admin/mount.ts'
import type { KeyStore } from './stores/keys.ts'
import { readiness } from './http/endpoints/readiness.ts'
import { exchangeHeaders } from './http/reply/response-headers.ts'
import { bodyJson, checkFormHeader, formOf, Reply } from './http/reply/reply.ts'
import { bodyReader, checkRequest } from './http/admission/request-guards.ts'
import { compileRouteTable, type RouteTable } from './http/routing/route-table.ts'
import { IGNORED_QUERY } from './http/routing/strict-inputs.ts'
import type { QuotaStore } from './stores/quota.ts'
export interface AppDeps {
  data: DataDir
  domains: Domain[]
  authenticator: Authenticator
  quota: QuotaStore
  log?: LogSink
  /** Metrics and access log; one is made from the config when absent (tests pass their own to read the log). */
  observability?: Observability
  /** The key store, for the operator API (/admin/v1); without it those routes answer 503. */
  keys?: KeyStore
  /** The usage ledger's meter (serve.ts makes it beside the quota store); without it /api/v1/usage answers 503. */
  usage?: UsageMeter
  /** Milliseconds since the epoch for quota windows and their headers (tests fix it; default Date.now). */
  clock?: () => number
  /** True once the server is shutting down: /readyz answers 503 while requests are still served (serve.ts). */
  stopping?: () => boolean
}

export function createApp(config: Config, deps: AppDeps, mounted: MountedDomain[]): AnyElysia {
  const clock = deps.clock ?? Date.now
  const policy = quotaPolicy(config, deps.quota, clock)
  // The domains' one logger: the app's (tests pass theirs to read the lines).
  const log = asLogger(deps.log ?? logger)
  /** The route table, compiled once the routes are mounted (below), before the first request. */
  let table: RouteTable
  /** What a request resolves to in the table: worked out once, on first ask, and kept on its exchange. */
  const resolve = (request: Request, path?: string) => resolveOnce(table, request, path)
  const errorResponse = problemResponse(config, { credits: policy.credits, resolve, log })
  /** How old each dataset may grow before it is reported stale, as the domains' builders declare it. */
  const limits = staleAfterDays(mounted.flatMap((m) => m.domain.builders ?? []))
  const ready = readiness(config, { ...deps, clock, limits }, mounted)
  // The datasets' and domains' metrics are the LiveApp's to collect (refresh.ts): it knows which generation serves.
  const observability = deps.observability ?? createObservability(config, { usage: deps.usage })
  // The shared layers run in one request hook and one transform hook: each Elysia hook costs a fixed
  // ~0.6-1 µs a request whatever it does, more than the work inside these. So the modules composed here
  // give functions these hooks call, never hooks of their own.
  // standardHostname: false makes the router cut the path where paths.ts does (see there).
  // normalize: false, or Elysia would strip the members a closed schema does not name before checking it,
  // and an unknown member would be dropped without a word (strict-inputs.ts).
  const app: AnyElysia = new Elysia({ handler: { standardHostname: false }, normalize: false })
    .use(requestContext(config.responseForm))
    .onError(({ code, error, request, set }) => errorResponse(code, error, request, set.headers as Record<string, unknown>))
    .onRequest((context) => {
      // The context made here is the one handlers get (Elysia makes it before routing when a request hook
      // exists), so the form is set on it once. Request and set are always on it, whatever a minifier
      // does to this function's text (Elysia reads hook source to decide what else to provide).
      const { request, set } = context
      context.form = formOf(request, config.responseForm)
      // The request's route, resolved once: every later layer reads it from the exchange.
      const path = pathOf(request.url)
      exchangeOf(request).route = resolve(request, path).route ?? undefined
      // Who is calling, before any body is read; then the request's own shape (400, 403, 413, 415) and its
      // first credit (429): a refused caller costs nothing but its headers.
      const refused = (e: unknown) => errorResponse('AUTH', e, request, set.headers as Record<string, unknown>)
      if (pathStart(request.url) < 0)
        throw badRequest('The request has no valid Host header (RFC 9112 section 3.2): send the host name the server is reached by.')
      if (!isApi(path)) return checkRequest(request, path, config.bodyLimit)
      // Before auth, like the Host: how to read any answer, this request's 401 included.
      checkFormHeader(request)
      let answer: Principal | Promise<Principal>
      try {
        answer = deps.authenticator.authenticate(request)
      } catch (e) {
        return refused(e)
      }
      if (!(answer instanceof Promise)) return policy.admit(request, path, answer)
      return answer.then((principal) => policy.admit(request, path, principal), refused)
    })
    .use(bodyReader(config.bodyLimit, config.requestBytesWaitingPerCaller))
    .use(observability.plugin)
    .use(openApiRoutes(() => buildOpenApiDocument(generatedDocument(app), table)))
    .use(docsRoutes())
    .onTransform({ as: 'global' }, ({ request, route, body, query }) => {
      // After routing and parsing, before the schema: the route Elysia's router chose (the resolution's,
      // unless a method such as HEAD reached another), then the rest of the request's cost.
      const exchange = exchangeOf(request)
      if (exchange.route?.declared !== route) exchange.route = table.entry(request.method, route)
      // The parameters every route ignores by design (strict-inputs.ts), before the schema refuses strangers.
      if (query) for (const name of IGNORED_QUERY) delete (query as Record<string, unknown>)[name]
      // The credits admission did not take: the rest of a per-item cost.
      return policy.chargeRest(request, exchange, body)
    })
    .onAfterHandle({ as: 'global' }, ({ response, request, query, set, form }) => {
      const exchange = existingExchange(request)
      if (response instanceof Reply) {
        const fields = (query as Record<string, string | undefined>)?.fields
        const json = bodyJson(response, form, fields, exchange?.route?.fields?.[form as ResponseForm])
        if (exchange) exchange.body = json
        return replyResponse(request, json, typeof set.status === 'number' ? set.status : 200, exchange)
      }
      const headers = exchangeHeaders(exchange)
      if (headers) Object.assign(set.headers, headers)
    })
    .get('/healthz', () => ({ status: 'ok' }), { detail: { hide: true } })
    .get('/readyz', ({ set }) => ready(set), { detail: { hide: true } })

  const api = new Elysia({ prefix: API_PREFIX })
  for (const m of mounted) api.use(domainRoutes(config, deps.data, m, log))
  api.use(metaRoutes(config, deps.data, mounted, limits, clock))
  api.use(usageRoutes(config, deps.usage, clock))
  // Before mounting: the app builds each route's validators from these schemas as it takes them.
  closeInputs(api)
  app.use(api)
  // Outside /api/v1, so the request hook neither authenticates nor counts them (isApi is false).
  app.use(operatorRoutes(config, deps, { mounted, limits, clock, metrics: observability.render }))
  for (const m of mounted)
    if (m.state === 'open' && m.domain.publicRoutes) app.use(m.domain.publicRoutes({ service: m.service, config, data: deps.data, log }))

  table = compileRouteTable(declaredRoutes(app), { mounted, data: deps.data, bodyLimit: config.bodyLimit })
  // Outermost: metrics and the access log see every response, whichever layer produced it (compressed
  // last, so CORS headers are kept and the log sees the final status). Elysia's own
  // handle answers synchronously or with a promise despite its type; the wrapper keeps whichever it got.
  app.handle = observability.wrap(withCompression(withCors(config, app.handle)), resolve) as typeof app.handle
  return app
}
