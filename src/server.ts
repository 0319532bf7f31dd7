/**
 * createApp(config, deps) -> the Elysia app. The request flow of docs/architecture.md, in hook order:
 * auth (onRequest, before any body is read) -> quota (onTransform: after parse, before the schema) ->
 * schema -> handler (service + presenter) -> reply (form + fields) -> response headers. Every failure on
 * the way becomes one problem in the caller's form (onError).
 */
import { Elysia, type AnyElysia } from 'elysia'
import type { Config, Plan } from './config.ts'
import { ageSeconds, freshness } from './data/freshness.ts'
import { type ArtifactSizes, contentMismatch, sizeMismatch } from './data/integrity.ts'
import type { DataDir } from './data/types.ts'
import type { Domain } from './domains/types.ts'
import { AlmanacError, badRequest, unavailable } from './lib/errors.ts'
import { redactPaths } from './lib/redact.ts'
import type { Authenticator, Principal } from './http/auth.ts'
import { requestContext } from './http/context.ts'
import { exchangeOf, existingExchange } from './http/exchange.ts'
import { API_PREFIX, isApi, pathOf, pathStart } from './http/paths.ts'
import { routeMatcher } from './http/route-match.ts'
import { bodyReader, checkRequest } from './http/request-guards.ts'
import { COST_KEY, costOf, type PerItemCost } from './http/cost.ts'
import { CACHE_CONTROL, CACHE_KEY, type CacheKind, contentTag, etagOf, noneMatch } from './http/cache.ts'
import { docsRoutes } from './http/docs.ts'
import { metaRoutes } from './http/meta.ts'
import { withCors } from './http/cors.ts'
import { createObservability, labels, type Observability } from './http/observability.ts'
import { openApiRoutes } from './http/openapi.ts'
import { toProblem } from './http/problem.ts'
import { bodyJson, formOf, problemBody, Reply } from './http/reply.ts'
import { quotaState, windowStart, type QuotaState, type QuotaStore } from './stores/quota.ts'

/** Retry-After of the 503 sent while the quota store is unreachable. */
const STORE_RETRY_SECONDS = 2

/** Every JSON answer's body depends on the caller's X-Response-Form, so shared caches must key on it. */
const JSON_HEADERS = { 'content-type': 'application/json', vary: 'X-Response-Form' }

export interface AppDeps {
  data: DataDir
  domains: Domain[]
  authenticator: Authenticator
  quota: QuotaStore
  log?: (line: string) => void
  /** Metrics and access log; one is made from the config when absent (tests pass their own to read the log). */
  observability?: Observability
  /** Milliseconds since the epoch for quota windows and their headers (tests fix it; default Date.now). */
  clock?: () => number
  /** Register the dataset metrics collector (default true); a LiveApp registers one for all its generations. */
  datasetMetrics?: boolean
}

/**
 * A domain as opened at start: its service, or why it is unavailable. `problem` is shown to callers (the
 * 503 of its routes, /readyz, the datasets endpoint), so it names datasets, never file paths; the log
 * has the whole story. It may be set later, when the background integrity check finds a corrupt artifact.
 */
export interface MountedDomain {
  domain: Domain
  service?: unknown
  problem?: string
}

/**
 * Opens each domain's datasets; a domain that cannot open is kept, disabled, with the reason. Sizes and the
 * sha256 of small artifacts are checked first (data/integrity.ts), unless `hashed` says the caller already
 * hashed every artifact (a data refresh does, before it opens anything).
 */
export async function openDomains(
  config: Config,
  data: DataDir,
  domains: Domain[],
  log: (l: string) => void = console.error,
  { hashed = false }: { hashed?: boolean } = {},
): Promise<MountedDomain[]> {
  const out: MountedDomain[] = []
  const disabled = (domain: Domain, problem: string, logged = problem) => {
    log(`The ${domain.name} domain is disabled: ${logged}`)
    out.push({ domain, problem: `The ${domain.name} domain is disabled: ${problem}` })
  }
  for (const domain of domains) {
    const missing = domain.datasets.filter((id) => !data.manifest.datasets[id])
    if (missing.length) {
      const fix = Bun.isStandaloneExecutable
        ? `this executable was compiled without it: run \`bun run data && bun run compile\` in a checkout, or point ALMANAC_DATA_DIR at a datasets/out that has it`
        : `run \`almanac data build --only ${domain.name}\``
      disabled(domain, `dataset ${missing.join(', ')} is not built (${fix}).`)
      continue
    }
    const damaged = domain.datasets.map((id) => sizeMismatch(data, id)).find(Boolean)
    if (damaged) {
      disabled(domain, `${damaged}; rebuild or re-extract the datasets.`)
      continue
    }
    // A small artifact is hashed before its domain answers anything: wrong bytes of the right size would
    // otherwise be served until the background check reached them.
    const corrupt = hashed ? null : await firstMismatch(data, domain.datasets, { small: config.dataHashBeforeServeMaxBytes })
    if (corrupt) {
      disabled(
        domain,
        `${corrupt}; rebuild or re-extract the datasets.`,
        `${corrupt} (in ${data.dir}); rebuild or re-extract the datasets.`,
      )
      continue
    }
    try {
      out.push({ domain, service: await domain.open({ config, data }) })
      // Open, but built without an optional source: say which signal it cannot give.
      for (const id of domain.datasets) {
        const missing = data.manifest.datasets[id]?.unavailable
        if (missing?.length)
          log(
            JSON.stringify({
              level: 'warn',
              msg: `The ${domain.name} domain serves without ${missing.map((u) => u.id).join(', ')}: dataset ${id} was built without them (rebuild with the sources available to add them)`,
              domain: domain.name,
              dataset: id,
            }),
          )
      }
    } catch (e) {
      disabled(domain, redactPaths((e as Error).message), (e as Error).message)
    }
  }
  return out
}

/** The first content mismatch among `datasets` (the `which` of their artifacts), or null. */
async function firstMismatch(data: DataDir, datasets: string[], which: ArtifactSizes): Promise<string | null> {
  for (const id of datasets) {
    const mismatch = await contentMismatch(data, id, which)
    if (mismatch) return mismatch
  }
  return null
}

/**
 * Hashes the large artifacts of every open domain in the background (the small ones were hashed before the
 * domain opened) and disables a domain whose artifacts do not match the manifest (its routes answer 503
 * from then on, /readyz says not ready). Resolves when done.
 */
export async function verifyDatasets(
  config: Config,
  data: DataDir,
  mounted: MountedDomain[],
  log: (l: string) => void = console.error,
): Promise<void> {
  for (const m of mounted) {
    if (m.problem) continue
    const mismatch = await firstMismatch(data, m.domain.datasets, { large: config.dataHashBeforeServeMaxBytes })
    if (!mismatch) continue
    m.problem = `The ${m.domain.name} domain is disabled: ${mismatch}; rebuild or re-extract the datasets.`
    log(JSON.stringify({ level: 'error', msg: m.problem, dir: data.dir }))
  }
}

export function quotaHeaders(state: QuotaState, now: number): Record<string, string> {
  const resetIn = Math.max(0, state.reset - Math.floor(now / 1000))
  return {
    'x-quota-limit': String(state.limit),
    'x-quota-remaining': String(state.remaining),
    'x-quota-reset': String(state.reset),
    // The policy is named after the plan (plan names are [A-Za-z0-9_.-], safe in a quoted string).
    'ratelimit-policy': `"${state.policy}";q=${state.limit};w=${state.windowSeconds}`,
    ratelimit: `"${state.policy}";r=${state.remaining};t=${resetIn}`,
  }
}

export function createApp(config: Config, deps: AppDeps, mounted: MountedDomain[]): AnyElysia {
  const { authenticator, quota } = deps
  const clock = deps.clock ?? Date.now
  /** Per-item costs by route pattern, then method. */
  const costs = new Map<string, Map<string, PerItemCost>>()
  /** Cacheable routes by route pattern, then method: their Cache-Control and the domain whose content tag they use. */
  const caching = new Map<string, Map<string, { control: string; domain: string }>>()
  /** Each open domain's content tag (cache.ts); replaced when the datasets are. */
  const tags = contentTags(deps.data, mounted)
  /**
   * Adds headers this request's response must carry (quota, definitions date). Kept beside Elysia's
   * `set.headers` because a reply whose Response we build ourselves is measurably cheaper than Elysia
   * merging a header object into every response.
   */
  const addHeaders = (request: Request, headers: Record<string, string>) => {
    const exchange = exchangeOf(request)
    if (exchange.headers) Object.assign(exchange.headers, headers)
    else exchange.headers = { ...headers }
  }

  /**
   * `x-definitions-updated` of the domain a path or route pattern belongs to (SPEC: reference-data
   * endpoints), on every response under its prefixes, problems included. A handful of prefixes: a scan.
   */
  const definitions = definitionsHeaders(deps.data, mounted)
  /** Domains open at start, which the background integrity check may still disable, by their route prefixes. */
  const openAtStart = mounted
    .filter((m) => !m.problem)
    .flatMap((m) => m.domain.prefixes.map((prefix) => ({ mounted: m, base: API_PREFIX + prefix })))
  const definitionsOf = (path: string) => definitions.find((d) => path.startsWith(d.prefix) || path === d.base)?.headers

  /**
   * Quota headers when the store could not be asked. Failing open counts nothing, so the whole plan is
   * reported until the window ends; a 503 says "nothing can be spent now, retry in a moment" rather than
   * pointing clients at the window's end, which could stall them for a day over a short outage.
   */
  const storeDownHeaders = (plan: Plan) => {
    const now = clock()
    return quotaHeaders(
      config.quotaFailOpen
        ? quotaState(plan, windowStart(plan, now), 0, true)
        : {
            allowed: false,
            policy: plan.name,
            limit: plan.credits,
            remaining: 0,
            reset: Math.floor(now / 1000) + STORE_RETRY_SECONDS,
            windowSeconds: plan.windowSeconds,
          },
      now,
    )
  }

  const quotaFailure = (e: unknown): AlmanacError | null => {
    if (config.quotaFailOpen) return null
    return new AlmanacError(
      'unavailable',
      `The quota store is unreachable, so requests cannot be counted: ${(e as Error).message}. Try again shortly.`,
      {
        headers: { 'Retry-After': String(STORE_RETRY_SECONDS) },
      },
    )
  }

  /**
   * Quota headers for a response that spent nothing (404, 405, malformed JSON …). Without a caller (401,
   * 403) there is no subject to count: the default plan's limit is shown with nothing remaining and a
   * reset of now, i.e. "no credits until you authenticate", with nothing to wait for.
   */
  const peekHeaders = async (request: Request): Promise<Record<string, string>> => {
    const principal = existingExchange(request)?.principal
    const plan = principal?.plan ?? config.plans.get(config.defaultPlan)!
    const now = clock()
    if (!principal)
      return quotaHeaders(
        {
          allowed: false,
          policy: plan.name,
          limit: plan.credits,
          remaining: 0,
          reset: Math.floor(now / 1000),
          windowSeconds: plan.windowSeconds,
        },
        now,
      )
    try {
      return quotaHeaders(await quota.peek(principal.subject, plan, now), now)
    } catch {
      return storeDownHeaders(plan)
    }
  }

  const errorResponse = async (code: string | number, error: unknown, request: Request, setHeaders: Record<string, unknown>) => {
    const path = pathOf(request.url)
    if (code === 'NOT_FOUND') {
      const allow = allowedMethods(path)
      if (allow.length)
        error = new AlmanacError('method', `${request.method} is not allowed on ${path}; use ${allow.join(' or ')}.`, {
          headers: { Allow: allow.join(', ') },
        })
    }
    const { problem, headers } = toProblem(code, error, path)
    // The id the access log has for this request, so a caller's report can be matched to its line.
    const id = existingExchange(request)?.id
    if (id) problem.request_id = id
    if (problem.status === 500)
      deps.log?.(JSON.stringify({ level: 'error', path, request_id: id, error: String((error as Error)?.stack ?? error) }))
    const out = new Headers(JSON_HEADERS)
    for (const [k, v] of Object.entries(setHeaders)) if (typeof v === 'string') out.set(k, v)
    for (const [k, v] of Object.entries(existingExchange(request)?.headers ?? {})) out.set(k, v)
    for (const [k, v] of Object.entries(headers)) out.set(k, v)
    // Failures before routing (401, 400, 413) never passed the transform hook that adds it.
    const dated = definitionsOf(path)
    if (dated && !out.has('x-definitions-updated')) out.set('x-definitions-updated', dated['x-definitions-updated']!)
    if (isApi(path) && !out.has('x-quota-limit')) for (const [k, v] of Object.entries(await peekHeaders(request))) out.set(k, v)
    return new Response(JSON.stringify(problemBody(problem, formOf(request, config.responseForm))), {
      status: problem.status,
      headers: out,
    })
  }

  /** Methods that do answer a path that was not found with the request's method (for 405). */
  const matching = routeMatcher(() => app.routes)
  const allowedMethods = (path: string): string[] => [...new Set(matching(path).map((r) => r.method))].filter((m) => m !== 'ALL').sort()

  /** After the store answered: the quota headers, and a 429 when the request does not fit. */
  const spend = (request: Request, principal: Principal, cost: number, state: QuotaState, now: number) => {
    addHeaders(request, quotaHeaders(state, now))
    if (state.allowed) return
    const retryAfter = String(Math.max(1, state.reset - Math.floor(now / 1000)))
    const credits = `${cost} credit${cost > 1 ? 's' : ''}`
    const detail =
      cost > state.limit
        ? `This request costs ${credits}, more than the ${state.limit} that plan ${principal.plan.name} allows per window; send at most ${state.limit} items.`
        : `This request costs ${credits} and ${state.remaining} remain in the window of plan ${principal.plan.name}; it resets at ${new Date(state.reset * 1000).toISOString()}.`
    throw new AlmanacError('quota', detail, {
      headers: { 'Retry-After': retryAfter },
      extra: { cost, remaining: state.remaining, reset: state.reset },
    })
  }

  /** The store could not be asked: a 503, or (fail-open) the request goes through uncounted. */
  const storeDown = (request: Request, plan: Plan, e: unknown) => {
    addHeaders(request, storeDownHeaders(plan))
    const failure = quotaFailure(e)
    if (failure) throw failure
  }

  const observability = deps.observability ?? createObservability(config)
  /** Per domain: its datasets built without an optional source (a signal it cannot give). */
  const degraded = unavailableSignals(deps.data, mounted)
  if (deps.datasetMetrics !== false) observability.addCollector(() => datasetMetrics(deps.data, mounted, clock()))
  for (const m of mounted) if (!m.problem && m.domain.metrics) observability.addCollector(() => m.domain.metrics!(m.service))
  // The shared layers run in one request hook and one transform hook: each Elysia hook costs a fixed
  // ~0.6-1 µs a request whatever it does, more than the work inside these.
  // standardHostname: false makes the router cut the path where paths.ts does (see there).
  const app: AnyElysia = new Elysia({ handler: { standardHostname: false } })
    .use(requestContext(config.responseForm))
    .onError(({ code, error, request, set }) => errorResponse(code, error, request, set.headers as Record<string, unknown>))
    .onRequest((context) => {
      // The context made here is the one handlers get (Elysia makes it before routing when a request hook
      // exists), so the form is set on it once. Request and set are always on it, whatever a minifier
      // does to this function's text (Elysia reads hook source to decide what else to provide).
      const { request, set } = context
      context.form = formOf(request, config.responseForm)
      // Who is calling, before any body is read; then the request's own shape (400, 413).
      const refused = (e: unknown) => errorResponse('AUTH', e, request, set.headers as Record<string, unknown>)
      if (pathStart(request.url) < 0)
        throw badRequest('The request has no valid Host header (RFC 9112 section 3.2): send the host name the server is reached by.')
      const path = pathOf(request.url)
      if (!isApi(path)) return checkRequest(request, path, config.bodyLimit)
      let answer: Principal | Promise<Principal>
      try {
        answer = authenticator.authenticate(request)
      } catch (e) {
        return refused(e)
      }
      if (!(answer instanceof Promise)) {
        exchangeOf(request).principal = answer
        return checkRequest(request, path, config.bodyLimit)
      }
      return answer.then((principal) => {
        exchangeOf(request).principal = principal
        checkRequest(request, path, config.bodyLimit)
      }, refused)
    })
    .use(bodyReader(config.bodyLimit))
    .use(observability.plugin)
    .use(
      openApiRoutes(
        () => app,
        () => mounted.filter((m) => !m.problem && m.domain.definitionsUpdated).flatMap((m) => m.domain.prefixes),
      ),
    )
    .use(docsRoutes())
    .onTransform({ as: 'global' }, ({ request, route, body }) => {
      // After routing and parsing, before the schema: route label, definitions date, then quota.
      const exchange = exchangeOf(request)
      exchange.route = route
      // A domain disabled after start (a corrupt artifact) keeps its routes but answers 503.
      for (const { mounted: m, base } of openAtStart)
        if (m.problem && (route === base || route.startsWith(base + '/')))
          throw unavailable(m.problem, { domain: m.domain.name, datasets: m.domain.datasets })
      const dated = definitionsOf(route)
      if (dated) addHeaders(request, dated)
      const principal = exchange.principal
      if (!principal) return
      const cost = costOf(costs.get(route)?.get(request.method), body)
      const now = clock()
      const spent = (state: QuotaState) => spend(request, principal, cost, state, now)
      const failed = (e: unknown) => storeDown(request, principal.plan, e)
      let answer: QuotaState | Promise<QuotaState>
      try {
        answer = quota.consume(principal.subject, principal.plan, cost, now)
      } catch (e) {
        return failed(e)
      }
      return answer instanceof Promise ? answer.then(spent, failed) : spent(answer)
    })
    .onAfterHandle({ as: 'global' }, ({ response, request, query, set, form }) => {
      const exchange = existingExchange(request)
      const headers = exchange?.headers
      if (response instanceof Reply) {
        const json = bodyJson(response, form, (query as Record<string, string | undefined>)?.fields)
        const status = typeof set.status === 'number' ? set.status : 200
        const cache = status === 200 && exchange?.route ? caching.get(exchange.route)?.get(request.method) : undefined
        const tag = cache && tags.get(cache.domain)
        if (tag) {
          // The quota was spent in the transform hook, so a 304 counts like a 200 and carries the same headers.
          const out: Record<string, string> = headers ? Object.assign(headers, JSON_HEADERS) : { ...JSON_HEADERS }
          out.etag = etagOf(tag, json)
          out['cache-control'] = cache.control
          if (!noneMatch(request.headers.get('if-none-match'), out.etag)) return new Response(json, { status, headers: out })
          delete out['content-type']
          return new Response(null, { status: 304, headers: out })
        }
        return new Response(json, { status, headers: headers ? Object.assign(headers, JSON_HEADERS) : JSON_HEADERS })
      }
      if (headers) Object.assign(set.headers, headers)
    })
    .get('/healthz', () => ({ status: 'ok' }), { detail: { hide: true } })
    .get(
      '/readyz',
      async ({ set }) => {
        const down: { domain?: string; component?: string; problem: string }[] = mounted
          .filter((m) => m.problem)
          .map((m) => ({ domain: m.domain.name, problem: m.problem! }))
        // Without fail-open, an unreachable quota store answers every /api/v1 request 503: not ready.
        const store = config.quotaFailOpen || !quota.check ? null : await quota.check()
        // The store's address stays in the log: /readyz answers anyone.
        if (store)
          down.push({
            component: 'quota_store',
            problem: 'The quota store is unreachable, so /api/v1 requests are answered 503 (ALMANAC_QUOTA_FAIL_OPEN is off).',
          })
        if (down.length) set.status = 503
        return {
          status: down.length ? 'not_ready' : 'ready',
          domains: mounted.map((m) => {
            const missing = m.problem ? [] : degraded.get(m.domain.name)
            return { domain: m.domain.name, ready: !m.problem, ...(missing?.length ? { signals_unavailable: missing } : {}) }
          }),
          // Age and staleness are reported, never a reason to be unready: old data still answers.
          datasets: Object.values(deps.data.manifest.datasets)
            .sort((a, b) => a.id.localeCompare(b.id))
            .map((e) => ({ dataset: e.id, ...freshness(e.id, e, clock()) })),
          ...(down.length ? { problems: down } : {}),
        }
      },
      { detail: { hide: true } },
    )

  const api = new Elysia({ prefix: API_PREFIX })
  for (const m of mounted) api.use(domainRoutes(config, deps.data, m))
  api.use(metaRoutes(config, deps.data, mounted, clock))
  app.use(api)
  // Outside /api/v1, so the request hook neither authenticates nor counts them (isApi is false).
  for (const m of mounted)
    if (!m.problem && m.domain.publicRoutes) app.use(m.domain.publicRoutes({ service: m.service, config, data: deps.data }))

  for (const route of app.routes) {
    const kind = (route.hooks as any)?.detail?.[CACHE_KEY] as CacheKind | undefined
    const owner =
      kind &&
      mounted.find((m) => m.domain.prefixes.some((p) => route.path === API_PREFIX + p || route.path.startsWith(`${API_PREFIX + p}/`)))
    if (kind && owner) {
      if (!caching.has(route.path)) caching.set(route.path, new Map())
      caching.get(route.path)!.set(route.method, { control: CACHE_CONTROL[kind], domain: owner.domain.name })
    }
    const cost = (route.hooks as any)?.detail?.[COST_KEY] as PerItemCost | undefined
    if (!cost) continue
    if (!costs.has(route.path)) costs.set(route.path, new Map())
    costs.get(route.path)!.set(route.method, cost)
  }
  // Outermost: metrics and the access log see every response, whichever layer produced it. Elysia's own
  // handle answers synchronously or with a promise despite its type; the wrapper keeps whichever it got.
  app.handle = observability.wrap(withCors(config, app.handle), app) as typeof app.handle
  return app
}

/** Each domain's content tag: a hash over the sha256 of its datasets' artifacts (cache.ts). */
export function contentTags(data: DataDir, mounted: MountedDomain[]): Map<string, string> {
  const out = new Map<string, string>()
  for (const { domain } of mounted) {
    const hashes = domain.datasets.flatMap((id) => data.manifest.datasets[id]?.artifacts.map((a) => a.sha256) ?? [])
    if (hashes.length) out.set(domain.name, contentTag(hashes))
  }
  return out
}

/** The optional sources each open domain's datasets were built without, by domain (for /readyz). */
export function unavailableSignals(data: DataDir, mounted: MountedDomain[]): Map<string, { dataset: string; sources: string[] }[]> {
  const out = new Map<string, { dataset: string; sources: string[] }[]>()
  for (const { domain } of mounted) {
    const list = domain.datasets.flatMap((id) => {
      const missing = data.manifest.datasets[id]?.unavailable ?? []
      return missing.length ? [{ dataset: id, sources: missing.map((u) => u.id) }] : []
    })
    if (list.length) out.set(domain.name, list)
  }
  return out
}

/**
 * Per dataset: age of its upstream data in seconds (from the newest source's date), when it was built,
 * how many optional sources it lacks; per domain: whether it answers. Made at each scrape (a few lines).
 */
export function datasetMetrics(data: DataDir, mounted: MountedDomain[], now: number): string {
  const entries = Object.values(data.manifest.datasets).sort((a, b) => a.id.localeCompare(b.id))
  const out = [
    "# HELP almanac_dataset_age_seconds Seconds since the upstream date of the dataset's newest source (how stale the data is).",
    '# TYPE almanac_dataset_age_seconds gauge',
  ]
  for (const e of entries) {
    const age = ageSeconds(e, now)
    if (age !== null) out.push(`almanac_dataset_age_seconds${labels({ dataset: e.id })} ${age}`)
  }
  out.push(
    '# HELP almanac_dataset_built_timestamp_seconds When the dataset was built, in Unix seconds.',
    '# TYPE almanac_dataset_built_timestamp_seconds gauge',
  )
  for (const e of entries) {
    const built = Date.parse(e.built)
    if (Number.isFinite(built)) out.push(`almanac_dataset_built_timestamp_seconds${labels({ dataset: e.id })} ${Math.floor(built / 1000)}`)
  }
  out.push(
    "# HELP almanac_dataset_info The dataset's version, upstream date and build date (value 1).",
    '# TYPE almanac_dataset_info gauge',
  )
  for (const e of entries)
    out.push(`almanac_dataset_info${labels({ dataset: e.id, version: e.version, date: e.date ?? '', built: e.built.slice(0, 10) })} 1`)
  out.push(
    '# HELP almanac_dataset_unavailable_sources Optional sources the dataset was built without (signals it cannot give).',
    '# TYPE almanac_dataset_unavailable_sources gauge',
  )
  for (const e of entries) out.push(`almanac_dataset_unavailable_sources${labels({ dataset: e.id })} ${e.unavailable?.length ?? 0}`)
  out.push('# HELP almanac_domain_ready Whether the domain answers (1) or is disabled (0).', '# TYPE almanac_domain_ready gauge')
  for (const m of mounted) out.push(`almanac_domain_ready${labels({ domain: m.domain.name })} ${m.problem ? 0 : 1}`)
  return out.join('\n')
}

/** A domain's routes, or a stand-in that answers 503. */
function domainRoutes(config: Config, data: DataDir, m: MountedDomain): AnyElysia {
  const { domain } = m
  if (!m.problem) return domain.routes({ service: m.service, config, data })
  const plugin = new Elysia({ name: `almanac:unavailable:${domain.name}` })
  const fail = () => {
    throw unavailable(m.problem!, { domain: domain.name, datasets: domain.datasets })
  }
  for (const prefix of domain.prefixes)
    plugin.all(prefix, fail, { detail: { hide: true } }).all(`${prefix}/*`, fail, { detail: { hide: true } })
  return plugin
}

/** The definitions-date header of each open domain that has one, by the path prefixes it answers. */
function definitionsHeaders(data: DataDir, mounted: MountedDomain[]) {
  return mounted.flatMap(({ domain, service, problem }) => {
    const date = problem ? undefined : domain.definitionsUpdated?.({ data, service })
    if (!date) return []
    const headers = { 'x-definitions-updated': date }
    // `/countries` covers `/api/v1/countries` and `/api/v1/countries/...`, not `/api/v1/countriesx`.
    return domain.prefixes.map((prefix) => ({ base: API_PREFIX + prefix, prefix: `${API_PREFIX}${prefix}/`, headers }))
  })
}
