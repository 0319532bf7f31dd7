/**
 * createApp(config, deps) -> the Elysia app. The request flow of docs/architecture.md, in hook order:
 * admission (onRequest, before any body is read: auth, the route's content type and body limit, the first
 * quota credit) -> body (read up to the route's limit, parsed) -> the rest of a per-item cost (onTransform,
 * before the schema) -> schema -> handler (service + presenter) -> reply (form + fields) -> response
 * headers. Every failure on the way becomes one problem in the caller's form (onError), which also gives
 * back the credits of a 503 (http/credits.ts).
 */
import { Elysia, type AnyElysia } from 'elysia'
import type { Config } from './config.ts'
import { ageSeconds, freshness, staleAfterDays } from './data/freshness.ts'
import { type ArtifactSizes, contentMismatch, sizeMismatch } from './data/integrity.ts'
import { OPENING_RETRY_SECONDS, openingProblem } from './data/opening.ts'
import type { DataDir } from './data/types.ts'
import type { Domain, MountedDomain } from './domains/types.ts'
import { AlmanacError, badRequest, unavailable } from './lib/errors.ts'
import { logger } from './lib/logger.ts'
import { redactPaths } from './lib/redact.ts'
import type { Authenticator, Principal } from './http/auth.ts'
import { requestContext } from './http/context.ts'
import { exchangeOf, existingExchange } from './http/exchange.ts'
import { API_PREFIX, isApi, pathOf, pathStart } from './http/paths.ts'
import { routeMatcher } from './http/route-match.ts'
import { callerTurns } from './http/turns.ts'
import { bodyReader, checkRequest, pathIsWellFormed } from './http/request-guards.ts'
import { admissions, checkBodyHeaders } from './http/admission.ts'
import { costOf } from './http/cost.ts'
import { createCredits, givesBack, quotaHeaders } from './http/credits.ts'
import { CACHE_CONTROL, CACHE_KEY, type CacheKind, contentTag, etagOf, noneMatch } from './http/cache.ts'
import { docsRoutes } from './http/docs.ts'
import { metaRoutes } from './http/meta.ts'
import { withCompression } from './http/compression.ts'
import { withCors } from './http/cors.ts'
import { createObservability, labels, type Observability } from './http/observability.ts'
import { openApiRoutes } from './http/openapi.ts'
import { closeInputs, IGNORED_QUERY } from './http/strict-inputs.ts'
import { toProblem } from './http/problem.ts'
import { bodyJson, checkFormHeader, formOf, problemBody, Reply } from './http/reply.ts'
import type { QuotaStore } from './stores/quota.ts'

export { quotaHeaders }

/**
 * Every JSON answer's body depends on the caller's X-Response-Form, and its coding on Accept-Encoding
 * (http/compression.ts), so shared caches must key on both.
 */
const JSON_HEADERS = { 'content-type': 'application/json', vary: 'X-Response-Form, Accept-Encoding' }

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
  /** True once the server is shutting down: /readyz answers 503 while requests are still served (serve.ts). */
  stopping?: () => boolean
}

/** Kept where it was exported from; declared in domains/types.ts, which http/meta.ts can import too. */
export type { MountedDomain }

export interface OpenOptions {
  /** The caller already hashed every artifact (a data refresh does, before it opens anything). */
  hashed?: boolean
  /** Artifacts whose sha256 was checked moments ago (while extracting them): not hashed again. */
  verified?: ReadonlySet<string>
  /** Resolves once the domain's artifacts are in place (extraction); a rejection disables the domain with its message. */
  ready?: (domain: Domain) => Promise<void>
}

/**
 * Opens each domain's datasets, all at once; a domain that cannot open is kept, disabled, with the reason.
 * Sizes and the sha256 of small artifacts are checked first (data/integrity.ts), unless `hashed` says the
 * caller already hashed every artifact. The result is in the order of `domains`.
 */
export async function openDomains(
  config: Config,
  data: DataDir,
  domains: Domain[],
  log: (l: string) => void = logger,
  options: OpenOptions = {},
): Promise<MountedDomain[]> {
  return Promise.all(domains.map((domain) => openDomain(config, data, domain, log, options)))
}

/** Opens one domain (see openDomains): its service, or the reason it is disabled. */
export async function openDomain(
  config: Config,
  data: DataDir,
  domain: Domain,
  log: (l: string) => void = logger,
  { hashed = false, verified, ready }: OpenOptions = {},
): Promise<MountedDomain> {
  const disabled = (problem: string, logged = problem): MountedDomain => {
    log(JSON.stringify({ level: 'error', msg: `The ${domain.name} domain is disabled: ${logged}`, domain: domain.name }))
    return { domain, problem: `The ${domain.name} domain is disabled: ${problem}` }
  }
  const missing = domain.datasets.filter((id) => !data.manifest.datasets[id])
  if (missing.length) {
    const fix = Bun.isStandaloneExecutable
      ? `this executable was compiled without it: run \`bun run data && bun run compile\` in a checkout, or point ALMANAC_DATA_DIR at a datasets/out that has it`
      : `run \`almanac data build --only ${domain.name}\``
    return disabled(`dataset ${missing.join(', ')} is not built (${fix}).`)
  }
  if (ready)
    try {
      await ready(domain)
    } catch (e) {
      return disabled(redactPaths((e as Error).message), (e as Error).message)
    }
  const damaged = domain.datasets.map((id) => sizeMismatch(data, id)).find(Boolean)
  if (damaged) return disabled(`${damaged}; rebuild or re-extract the datasets.`)
  // A small artifact is hashed before its domain answers anything: wrong bytes of the right size would
  // otherwise be served until the background check reached them.
  const corrupt = hashed ? null : await firstMismatch(data, domain.datasets, { small: config.dataHashBeforeServeMaxBytes }, verified)
  if (corrupt)
    return disabled(`${corrupt}; rebuild or re-extract the datasets.`, `${corrupt} (in ${data.dir}); rebuild or re-extract the datasets.`)
  let service: unknown
  try {
    service = await domain.open({ config, data })
  } catch (e) {
    return disabled(redactPaths((e as Error).message), (e as Error).message)
  }
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
  return { domain, service }
}

/** The first content mismatch among `datasets` (the `which` of their artifacts), or null. */
async function firstMismatch(
  data: DataDir,
  datasets: string[],
  which: ArtifactSizes,
  verified?: ReadonlySet<string>,
): Promise<string | null> {
  for (const id of datasets) {
    const mismatch = await contentMismatch(data, id, which, verified)
    if (mismatch) return mismatch
  }
  return null
}

/**
 * Hashes the large artifacts of every open domain in the background (the small ones were hashed before the
 * domain opened) and disables a domain whose artifacts do not match the manifest (its routes answer 503
 * from then on, /readyz says not ready). Those in `verified` were hashed while being extracted. Resolves when done.
 */
export async function verifyDatasets(
  config: Config,
  data: DataDir,
  mounted: MountedDomain[],
  log: (l: string) => void = logger,
  verified?: ReadonlySet<string>,
): Promise<void> {
  for (const m of mounted) {
    if (m.problem || m.opening) continue
    const mismatch = await firstMismatch(data, m.domain.datasets, { large: config.dataHashBeforeServeMaxBytes }, verified)
    if (!mismatch) continue
    m.problem = `The ${m.domain.name} domain is disabled: ${mismatch}; rebuild or re-extract the datasets.`
    log(JSON.stringify({ level: 'error', msg: m.problem, dir: data.dir }))
  }
}

export function createApp(config: Config, deps: AppDeps, mounted: MountedDomain[]): AnyElysia {
  const { authenticator, quota } = deps
  const clock = deps.clock ?? Date.now
  /** Cacheable routes by route pattern, then method: their Cache-Control and the domain whose content tag they use. */
  const caching = new Map<string, Map<string, { control: string; domain: string }>>()
  /** Each open domain's content tag (cache.ts); replaced when the datasets are. */
  const tags = contentTags(deps.data, mounted)
  /** How old each dataset may grow before it is reported stale, as the domains' builders declare it. */
  const limits = staleAfterDays(mounted.flatMap((m) => m.domain.builders ?? []))
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
    .filter((m) => !m.problem && !m.opening)
    .flatMap((m) => m.domain.prefixes.map((prefix) => ({ mounted: m, base: API_PREFIX + prefix })))
  const definitionsOf = (path: string) => definitions.find((d) => path.startsWith(d.prefix) || path === d.base)?.headers

  const credits = createCredits(config, quota, clock, addHeaders)

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
    // A request the server declined to serve (503 …) gets back the credits it was admitted with.
    if (givesBack(problem.status, code)) await credits.giveBack(request)
    // The id the access log has for this request, so a caller's report can be matched to its line.
    const id = existingExchange(request)?.id
    if (id) problem.request_id = id
    if (problem.status === 500)
      deps.log?.(
        JSON.stringify({ level: 'error', msg: 'unhandled', path, request_id: id, error: String((error as Error)?.stack ?? error) }),
      )
    const out = new Headers(JSON_HEADERS)
    for (const [k, v] of Object.entries(setHeaders)) if (typeof v === 'string') out.set(k, v)
    for (const [k, v] of Object.entries(existingExchange(request)?.headers ?? {})) out.set(k, v)
    for (const [k, v] of Object.entries(headers)) out.set(k, v)
    // Failures before routing (401, 400, 413) never passed the transform hook that adds it.
    const dated = definitionsOf(path)
    if (dated && !out.has('x-definitions-updated')) out.set('x-definitions-updated', dated['x-definitions-updated']!)
    if (isApi(path) && !out.has('x-quota-limit')) for (const [k, v] of Object.entries(await credits.peekHeaders(request))) out.set(k, v)
    const body = JSON.stringify(problemBody(problem, formOf(request, config.responseForm)))
    exchangeOf(request).body = body
    return new Response(body, {
      status: problem.status,
      headers: out,
    })
  }

  /** Methods that do answer a path that was not found with the request's method (for 405). */
  const matching = routeMatcher(() => app.routes)
  const allowedMethods = (path: string): string[] => [...new Set(matching(path).map((r) => r.method))].filter((m) => m !== 'ALL').sort()

  /** Each route's admission (body limit, JSON or not, per-item cost) from the request line alone. */
  const admitting = admissions(() => app.routes, config.bodyLimit)

  /**
   * Admission of an authenticated /api/v1 request, before a byte of its body is read: its path (400), its
   * body's declared size and type against its route (413, 415), then its first credit (429, or 503 when
   * the store is down). A path no route answers spends nothing (its 404 or 405 comes later).
   */
  /** Each caller's share of the event loop's turns (turns.ts): past it, a request waits, unread, for a later turn. */
  const turns = callerTurns({
    perTurn: config.requestsPerTurn,
    maxWaiting: config.requestsWaitingPerCaller,
    maxWaitingBytes: config.requestBytesWaitingPerCaller,
  })
  /**
   * After authentication: the request's shape and its first credit, then its turn. A caller refused here
   * (400, 413, 415, 429) is answered at once and holds nothing; an admitted request past its caller's
   * share of this turn waits, unread, for a later one.
   */
  const admit = (request: Request, path: string, principal: Principal) => {
    const exchange = exchangeOf(request)
    exchange.principal = principal
    if (!pathIsWellFormed(path)) throw badRequest('The path holds an invalid percent-encoding (such as %ZZ or a lone %).')
    const admission = (exchange.admission = admitting.forPath(request.method, path))
    checkBodyHeaders(request, admission, config.bodyLimit)
    if (!admission) return
    // What its unread body may hold while it waits: its declared length, else (chunked) its route's limit.
    const declared = request.headers.get('content-length')
    const bytes = declared !== null ? Number(declared) || 0 : request.body ? admission.bodyLimit : 0
    const turn = () => turns.take(principal.subject, bytes)
    const taken = credits.take(request, principal, 1, 1)
    return taken instanceof Promise ? taken.then(turn) : turn()
  }

  const observability = deps.observability ?? createObservability(config)
  /** Per domain: its datasets built without an optional source (a signal it cannot give). */
  const degraded = unavailableSignals(deps.data, mounted)
  if (deps.datasetMetrics !== false) {
    observability.addCollector(() => datasetMetrics(deps.data, mounted, clock()))
    observability.addCollector(() => domainMetrics(mounted))
  }
  // The shared layers run in one request hook and one transform hook: each Elysia hook costs a fixed
  // ~0.6-1 µs a request whatever it does, more than the work inside these.
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
      // Who is calling, before any body is read; then the request's own shape (400, 413, 415) and its
      // first credit (429): a refused caller costs nothing but its headers.
      const refused = (e: unknown) => errorResponse('AUTH', e, request, set.headers as Record<string, unknown>)
      if (pathStart(request.url) < 0)
        throw badRequest('The request has no valid Host header (RFC 9112 section 3.2): send the host name the server is reached by.')
      const path = pathOf(request.url)
      if (!isApi(path)) return checkRequest(request, path, config.bodyLimit)
      // Before auth, like the Host: how to read any answer, this request's 401 included.
      checkFormHeader(request)
      let answer: Principal | Promise<Principal>
      try {
        answer = authenticator.authenticate(request)
      } catch (e) {
        return refused(e)
      }
      if (!(answer instanceof Promise)) return admit(request, path, answer)
      return answer.then((principal) => admit(request, path, principal), refused)
    })
    .use(bodyReader(config.bodyLimit))
    .use(observability.plugin)
    .use(
      openApiRoutes(
        () => app,
        () => mounted.filter((m) => !m.problem && !m.opening && m.domain.definitionsUpdated).flatMap((m) => m.domain.prefixes),
        mounted.flatMap((m) => (m.domain.tag ? [m.domain.tag] : [])),
      ),
    )
    .use(docsRoutes())
    .onTransform({ as: 'global' }, ({ request, route, body, query }) => {
      // After routing and parsing, before the schema: route label, definitions date, then quota.
      const exchange = exchangeOf(request)
      exchange.route = route
      // The parameters every route ignores by design (strict-inputs.ts), before the schema refuses strangers.
      if (query) for (const name of IGNORED_QUERY) delete (query as Record<string, unknown>)[name]
      // A domain disabled after start (a corrupt artifact) keeps its routes but answers 503.
      for (const { mounted: m, base } of openAtStart)
        if (m.problem && (route === base || route.startsWith(base + '/')))
          throw unavailable(m.problem, { domain: m.domain.name, datasets: m.domain.datasets })
      const dated = definitionsOf(route)
      if (dated) addHeaders(request, dated)
      // The credits admission did not take: the rest of a per-item cost (all of it for a route admission
      // could not name); when they do not fit, what was taken is given back with the 429.
      const principal = exchange.principal
      if (!principal || exchange.uncounted) return
      const admission = exchange.admission ?? admitting.forRoute(request.method, route)
      const cost = costOf(admission?.cost, body)
      const rest = cost - (exchange.credits ?? 0)
      if (rest > 0) return credits.take(request, principal, rest, cost)
    })
    .onAfterHandle({ as: 'global' }, ({ response, request, query, set, form }) => {
      const exchange = existingExchange(request)
      const headers = exchange?.headers
      if (response instanceof Reply) {
        const json = bodyJson(response, form, (query as Record<string, string | undefined>)?.fields)
        if (exchange) exchange.body = json
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
        const down: { domain?: string; component?: string; problem: string; opening?: true }[] = mounted
          .filter((m) => m.problem || m.opening)
          .map((m) =>
            m.opening
              ? { domain: m.domain.name, problem: openingProblem(m.domain), opening: true }
              : { domain: m.domain.name, problem: m.problem! },
          )
        // Without fail-open, an unreachable quota store answers every /api/v1 request 503: not ready.
        const store = config.quotaFailOpen || !quota.check ? null : await quota.check()
        // Told first, so a load balancer stops sending here while the listener still accepts (serve.ts stop()).
        if (deps.stopping?.())
          down.unshift({ component: 'server', problem: 'The server is shutting down: it still answers, but send new requests elsewhere.' })
        // The store's address stays in the log: /readyz answers anyone.
        if (store)
          down.push({
            component: 'quota_store',
            problem: 'The quota store is unreachable, so /api/v1 requests are answered 503 (ALMANAC_QUOTA_FAIL_OPEN is off).',
          })
        if (down.length) set.status = 503
        const opening = mounted.filter((m) => m.opening).map((m) => m.domain.name)
        if (opening.length) set.headers['retry-after'] = String(OPENING_RETRY_SECONDS)
        // Said, never a reason to be unready: the server works as configured, and a load balancer taking it
        // out would hide the message from the operator reading it here.
        const noCredentials = await authenticator.unconfigured?.()
        const warnings = noCredentials ? [{ component: 'auth', problem: noCredentials }] : []
        return {
          status: down.length ? 'not_ready' : 'ready',
          // Domains whose datasets are still being extracted or opened (first start); the others already answer.
          ...(opening.length ? { opening } : {}),
          domains: mounted.map((m) => {
            if (m.opening) return { domain: m.domain.name, ready: false, opening: true }
            const missing = m.problem ? [] : degraded.get(m.domain.name)
            return { domain: m.domain.name, ready: !m.problem, ...(missing?.length ? { signals_unavailable: missing } : {}) }
          }),
          // Age and staleness are reported, never a reason to be unready: old data still answers.
          datasets: Object.values(deps.data.manifest.datasets)
            .sort((a, b) => a.id.localeCompare(b.id))
            .map((e) => ({ dataset: e.id, ...freshness(e.id, e, clock(), limits) })),
          ...(down.length ? { problems: down } : {}),
          ...(warnings.length ? { warnings } : {}),
        }
      },
      { detail: { hide: true } },
    )

  const api = new Elysia({ prefix: API_PREFIX })
  for (const m of mounted) api.use(domainRoutes(config, deps.data, m))
  api.use(metaRoutes(config, deps.data, mounted, limits, clock))
  // Before mounting: the app builds each route's validators from these schemas as it takes them.
  closeInputs(api.routes)
  app.use(api)
  // Outside /api/v1, so the request hook neither authenticates nor counts them (isApi is false).
  for (const m of mounted)
    if (!m.problem && !m.opening && m.domain.publicRoutes) app.use(m.domain.publicRoutes({ service: m.service, config, data: deps.data }))

  for (const route of app.routes) {
    const kind = (route.hooks as any)?.detail?.[CACHE_KEY] as CacheKind | undefined
    const owner =
      kind &&
      mounted.find((m) => m.domain.prefixes.some((p) => route.path === API_PREFIX + p || route.path.startsWith(`${API_PREFIX + p}/`)))
    if (kind && owner) {
      if (!caching.has(route.path)) caching.set(route.path, new Map())
      caching.get(route.path)!.set(route.method, { control: CACHE_CONTROL[kind], domain: owner.domain.name })
    }
  }
  // Outermost: metrics and the access log see every response, whichever layer produced it (compressed
  // last, so CORS headers are kept and the log sees the final status). Elysia's own
  // handle answers synchronously or with a promise despite its type; the wrapper keeps whichever it got.
  app.handle = observability.wrap(withCompression(withCors(config, app.handle)), app) as typeof app.handle
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
  for (const m of mounted) out.push(`almanac_domain_ready${labels({ domain: m.domain.name })} ${m.problem || m.opening ? 0 : 1}`)
  return out.join('\n')
}

/** The metrics of each open domain that has some (one collector for all, so a rebuilt app adds none). */
export const domainMetrics = (mounted: MountedDomain[]): string =>
  mounted
    .filter((m) => !m.problem && !m.opening && m.domain.metrics)
    .map((m) => m.domain.metrics!(m.service))
    .join('\n')

/** A domain's routes, or a stand-in that answers 503 (with Retry-After while the domain is opening). */
function domainRoutes(config: Config, data: DataDir, m: MountedDomain): AnyElysia {
  const { domain } = m
  if (!m.problem && !m.opening) return domain.routes({ service: m.service, config, data })
  const plugin = new Elysia({ name: `almanac:unavailable:${domain.name}` })
  const fail = () => {
    if (m.opening)
      throw new AlmanacError('unavailable', openingProblem(domain), {
        extra: { domain: domain.name, datasets: domain.datasets, opening: true },
        headers: { 'Retry-After': String(OPENING_RETRY_SECONDS) },
      })
    throw unavailable(m.problem!, { domain: domain.name, datasets: domain.datasets })
  }
  for (const prefix of domain.prefixes)
    plugin.all(prefix, fail, { detail: { hide: true } }).all(`${prefix}/*`, fail, { detail: { hide: true } })
  return plugin
}

/** The definitions-date header of each open domain that has one, by the path prefixes it answers. */
function definitionsHeaders(data: DataDir, mounted: MountedDomain[]) {
  return mounted.flatMap(({ domain, service, problem, opening }) => {
    const date = problem || opening ? undefined : domain.definitionsUpdated?.({ data, service })
    if (!date) return []
    const headers = { 'x-definitions-updated': date }
    // `/countries` covers `/api/v1/countries` and `/api/v1/countries/...`, not `/api/v1/countriesx`.
    return domain.prefixes.map((prefix) => ({ base: API_PREFIX + prefix, prefix: `${API_PREFIX}${prefix}/`, headers }))
  })
}
