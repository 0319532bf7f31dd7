/**
 * What an operator watches: Prometheus metrics at `GET /metrics` (requests by route pattern and status, a
 * latency histogram, quota refusals, in-flight requests, process figures) and one JSON access-log line per
 * request (`config.accessLog`). How long the event loop was held comes from `event-loop.ts`.
 *
 * Both are taken around the whole app (`wrap(app.handle)`), not in Elysia hooks: hooks do not see every
 * response (an early return from `onRequest`, a 404, the status an error handler finally chose), the wrapper
 * does. Routes are labelled by their pattern (`/api/v1/countries/:code`), never the raw path, so the
 * number of series stays bounded whatever clients send; unknown paths share one label.
 */
import { Elysia, type AnyElysia } from 'elysia'
import type { Server } from 'bun'
import { APP_VERSION } from '../../version.ts'
import type { Config } from '../../config.ts'
import { logger } from '../../lib/logger.ts'
import { eventLoopMonitor } from './event-loop.ts'
import { type Exchange, exchangeOf, existingExchange } from './exchange.ts'
import { pathOf } from './paths.ts'
import { internalProblem } from '../reply/problem.ts'
import { formOf, problemBody } from '../reply/reply.ts'
import { REQUEST_ID_HEADER } from '../reply/response-headers.ts'
import type { Resolution } from '../routing/route-table.ts'
import type { UsageMeter } from './usage-meter.ts'

export const METRICS_PATH = '/metrics'

/** Latency buckets in seconds: sub-millisecond lookups up to slow KDF hashes. */
const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/** Everything counted for one method and route pattern. */
interface RouteStats {
  method: string
  route: string
  byStatus: Map<number, number>
  /** Requests per latency bucket, not cumulative (the exposition makes them cumulative). */
  buckets: number[]
  sum: number
  count: number
  refusals: number
}

type Handle = (request: Request) => Response | Promise<Response>

export interface Observability {
  /** The `/metrics` route. Series are labelled by the route pattern the app's transform hook records. */
  plugin: AnyElysia
  /**
   * Wraps an app's handler: times, counts and logs every request, whatever answered it, labelled by the
   * route it resolved to in the app's route table (`resolve`, which keeps the resolution on the exchange).
   */
  wrap(handle: Handle, resolve: (request: Request) => Resolution): Handle
  /** The server whose TCP peers the access log names (serve.ts, once it listens). */
  attach(server: Server<unknown>): void
  /** Prometheus text exposition of everything counted so far. */
  render(): string
  /** Writes out buffered access-log lines. */
  flush(): void
  /** Adds metric text made at each scrape (already in exposition format), e.g. dataset ages. */
  addCollector(collect: () => string): void
}

export interface ObservabilityOptions {
  /** Where access-log lines go (one JSON object a line, no newline). Default: buffered stdout. */
  write?: (line: string) => void
  /** The usage ledger's meter: every answered request of a known caller is counted there. */
  usage?: UsageMeter
}

const escapeLabel = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')
/** `{k="v",…}` with each value escaped as the exposition format asks. */
export const labels = (pairs: Record<string, string>) =>
  '{' +
  Object.entries(pairs)
    .map(([k, v]) => `${k}="${escapeLabel(v)}"`)
    .join(',') +
  '}'

/** Stdout through Bun's buffered sink, flushed a few times a second and at exit. */
function bufferedStdout(): { write(line: string): void; flush(): void } {
  const sink = Bun.stdout.writer()
  let pending = false
  const flush = () => {
    pending = false
    sink.flush()
  }
  return {
    write(line) {
      sink.write(line + '\n')
      if (!pending) {
        pending = true
        setTimeout(flush, 200).unref?.()
      }
    },
    flush,
  }
}

/** The ISO time of the current millisecond, made once per millisecond (a busy server logs many per ms). */
let isoMs = 0
let isoText = ''
function isoNow(): string {
  const now = Date.now()
  if (now !== isoMs) {
    isoMs = now
    isoText = new Date(now).toISOString()
  }
  return isoText
}

const REQUEST_ID_MAX = 128

/** Characters a caller's request id may hold: letters, digits and `-._:@/+=` (no quotes, spaces or controls). */
const ID_CHAR = new Uint8Array(128)
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._:@/+=') ID_CHAR[c.charCodeAt(0)] = 1

/**
 * The caller's X-Request-Id when it is 1 to 128 of those characters (so it is safe in a header, a log
 * line and a problem as it is); otherwise undefined and the server makes one. A loop, no regex.
 */
export function acceptedRequestId(raw: string | null): string | undefined {
  if (raw === null || raw.length === 0 || raw.length > REQUEST_ID_MAX) return undefined
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i)
    if (c >= 128 || !ID_CHAR[c]) return undefined
  }
  return raw
}

/** Made ids: a random prefix per process (workers differ) and a counter; unique, and cheaper than a UUID. */
const ID_PREFIX = `${crypto.getRandomValues(new Uint32Array(2)).reduce((s, n) => s + n.toString(16).padStart(8, '0'), '')}-`
let idCounter = 0
const newRequestId = () => ID_PREFIX + (++idCounter).toString(36)

/**
 * One access-log line: `{"time","level","msg","method","path","route","status","duration_ms","request_id","caller"?,
 * "credits"?,"ip"?,"ua"?}`; `caller` is who called (`key:<key id>` or `jwt:<sub>`), never the key, and `credits`
 * what the request spent (a bulk of 3: 3; given back: 0). Built as
 * text, with JSON.stringify only for the strings a client controls: a third of the cost of stringifying
 * an object made for the purpose.
 */
function accessLine(
  method: string,
  path: string,
  route: string,
  status: number,
  seconds: number,
  id: string,
  caller: string | undefined,
  credits: number,
  ip: string | undefined,
  ua: string | null,
): string {
  // The id is either ours or passed acceptedRequestId: no escaping needed.
  let line =
    `{"time":"${isoNow()}","level":"info","msg":"request","method":${JSON.stringify(method)},"path":${JSON.stringify(path)},` +
    `"route":${JSON.stringify(route)},"status":${status},"duration_ms":${Math.round(seconds * 1e6) / 1e3},"request_id":"${id}"`
  if (caller) line += `,"caller":${JSON.stringify(caller.slice(0, 256))},"credits":${credits}`
  if (ip) line += `,"ip":${JSON.stringify(ip)}`
  if (ua) line += `,"ua":${JSON.stringify(ua.slice(0, 256))}`
  return line + '}'
}

/** The body's bytes as sent: as re-encoded (compression), else the body the app made, else its Content-Length. */
function bytesSent(request: Request, response: Response, exchange: Exchange): number {
  if (request.method === 'HEAD' || response.status === 304) return 0
  if (exchange.sentBytes !== undefined) return exchange.sentBytes
  const body = exchange.body
  if (body !== undefined) return typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength
  return Number(response.headers.get('content-length')) || 0
}

export function createObservability(config: Config, options: ObservabilityOptions = {}): Observability {
  const startedAt = Date.now() / 1000
  const eventLoop = eventLoopMonitor()
  /** One entry per series; a route pattern's label drops trailing slashes. */
  const stats: RouteStats[] = []
  let inFlight = 0
  const collectors: (() => string)[] = []
  const stdout = options.write ? undefined : bufferedStdout()
  const write = options.write ?? stdout!.write

  let server: Server<unknown> | undefined

  /** By route pattern, then method: two lookups on strings the route table holds, no per-request key. */
  const byRoute = new Map<string, Map<string, RouteStats>>()
  const statsOf = (method: string, route: string): RouteStats => {
    let methods = byRoute.get(route)
    if (!methods) byRoute.set(route, (methods = new Map()))
    let entry = methods.get(method)
    if (!entry) {
      entry = { method, route, byStatus: new Map(), buckets: new Array(BUCKETS.length).fill(0), sum: 0, count: 0, refusals: 0 }
      stats.push(entry)
      methods.set(method, entry)
    }
    return entry
  }

  const usage = options.usage
  const record = (request: Request, resolve: (request: Request) => Resolution, response: Response, seconds: number) => {
    const method = request.method
    const status = response.status
    const exchange = existingExchange(request)
    if (usage && exchange?.principal) usage.record(exchange, method, status, seconds, bytesSent(request, response, exchange))
    // The route that ran, else what the request resolved to (a 401 before routing, a 404, a 405).
    const s = statsOf(method, exchange?.route?.pattern ?? resolve(request).label)
    s.byStatus.set(status, (s.byStatus.get(status) ?? 0) + 1)
    s.sum += seconds
    s.count++
    let bucket = 0
    while (bucket < BUCKETS.length && seconds > BUCKETS[bucket]!) bucket++
    if (bucket < BUCKETS.length) s.buckets[bucket]!++
    if (status === 429) s.refusals++
    if (config.accessLog) {
      let ip: string | undefined
      try {
        ip = server?.requestIP(request)?.address
      } catch {
        ip = undefined
      }
      write(
        accessLine(
          method,
          pathOf(request.url),
          s.route,
          status,
          seconds,
          exchange?.id ?? '-',
          exchange?.principal?.caller,
          exchange?.credits ?? 0,
          ip,
          request.headers.get('user-agent'),
        ),
      )
    }
  }

  if (usage) collectors.push(() => usage.metrics())
  const render = () => metricsText({ stats, inFlight, startedAt, eventLoop, collectors })

  const plugin = new Elysia({ name: 'almanac:observability' }).get(
    METRICS_PATH,
    () => new Response(render(), { headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'cache-control': 'no-store' } }),
    { detail: { hide: true } },
  )

  /** The app maps every error to a problem; this is the last line, so the process never dies on input. */
  const internalError = (request: Request, e: unknown): Response => {
    const exchange = existingExchange(request)
    const id = exchange?.id
    // Built with the id among its headers: `done` has nothing to add.
    if (exchange && id) exchange.idSent = true
    logger.error('unhandled', { path: pathOf(request.url), request_id: id, error: String((e as Error)?.stack ?? e) })
    const { problem } = internalProblem()
    if (id) problem.request_id = id
    return new Response(JSON.stringify(problemBody(problem, formOf(request, config.responseForm))), {
      status: 500,
      headers: { 'content-type': 'application/json', vary: 'X-Response-Form', ...(id ? { [REQUEST_ID_HEADER]: id } : {}) },
    })
  }

  // Not an async function: a promise chain only when the app's answer is one, and no extra frame per request.
  const wrap =
    (handle: Handle, resolve: (request: Request) => Resolution): Handle =>
    (request) => {
      const started = performance.now()
      inFlight++
      const exchange = exchangeOf(request)
      const id = (exchange.id = acceptedRequestId(request.headers.get(REQUEST_ID_HEADER)) ?? newRequestId())
      const done = (response: Response) => {
        inFlight--
        try {
          // Replies and problems are built with it (response-headers.ts); setting a header afterwards costs more.
          if (!exchange.idSent) response.headers.set(REQUEST_ID_HEADER, id)
        } catch {
          // A response with immutable headers (none of ours) goes out without the echo.
        }
        record(request, resolve, response, (performance.now() - started) / 1000)
        return response
      }
      const failed = (e: unknown) => done(internalError(request, e))
      let answer: Response | Promise<Response>
      try {
        answer = handle(request)
      } catch (e) {
        return failed(e)
      }
      return answer instanceof Promise ? answer.then(done, failed) : done(answer)
    }

  return {
    plugin,
    wrap,
    render,
    flush: () => stdout?.flush(),
    addCollector: (collect) => void collectors.push(collect),
    attach: (s) => void (server = s),
  }
}

/** What a scrape of one process reads: the server's own series, then each collector's text. */
interface MetricsState {
  stats: RouteStats[]
  inFlight: number
  startedAt: number
  eventLoop: { render(): string }
  collectors: (() => string)[]
}

/** The Prometheus text of /metrics. Under `--workers N` each process is scraped on its own; the label says which one answered. */
function metricsText({ stats, inFlight, startedAt, eventLoop, collectors }: MetricsState): string {
  const worker = process.env.ALMANAC_WORKER_INDEX
  const out: string[] = []
  out.push(
    '# HELP almanac_build_info Version of the running server (and which worker process answered).',
    '# TYPE almanac_build_info gauge',
    `almanac_build_info${labels({ version: APP_VERSION, ...(worker !== undefined ? { worker } : {}) })} 1`,
  )
  const series = [...stats].sort((x, y) => (x.route === y.route ? (x.method < y.method ? -1 : 1) : x.route < y.route ? -1 : 1))
  out.push(
    '# HELP almanac_http_requests_total Requests answered, by method, route pattern and status.',
    '# TYPE almanac_http_requests_total counter',
  )
  for (const { method, route, byStatus } of series) {
    for (const [status, n] of [...byStatus].sort((x, y) => x[0] - y[0]))
      out.push(`almanac_http_requests_total${labels({ method, route, status: String(status) })} ${n}`)
  }
  out.push(
    '# HELP almanac_http_request_duration_seconds Time from request to response, by method and route pattern.',
    '# TYPE almanac_http_request_duration_seconds histogram',
  )
  for (const { method, route, buckets, sum, count } of series) {
    let cumulative = 0
    BUCKETS.forEach((le, i) =>
      out.push(`almanac_http_request_duration_seconds_bucket${labels({ method, route, le: String(le) })} ${(cumulative += buckets[i]!)}`),
    )
    out.push(`almanac_http_request_duration_seconds_bucket${labels({ method, route, le: '+Inf' })} ${count}`)
    out.push(`almanac_http_request_duration_seconds_sum${labels({ method, route })} ${sum}`)
    out.push(`almanac_http_request_duration_seconds_count${labels({ method, route })} ${count}`)
  }
  out.push(
    "# HELP almanac_quota_refusals_total Requests refused because the caller's quota was used up (429), by route pattern.",
    '# TYPE almanac_quota_refusals_total counter',
  )
  const refused = new Map<string, number>()
  for (const { route, refusals } of series) if (refusals) refused.set(route, (refused.get(route) ?? 0) + refusals)
  for (const [route, n] of [...refused].sort()) out.push(`almanac_quota_refusals_total${labels({ route })} ${n}`)
  if (!refused.size) out.push('almanac_quota_refusals_total 0')
  out.push(
    '# HELP almanac_http_requests_in_flight Requests being handled now.',
    '# TYPE almanac_http_requests_in_flight gauge',
    `almanac_http_requests_in_flight ${inFlight}`,
  )
  const cpu = process.cpuUsage()
  out.push(
    '# HELP process_cpu_seconds_total User and system CPU time spent.',
    '# TYPE process_cpu_seconds_total counter',
    `process_cpu_seconds_total ${(cpu.user + cpu.system) / 1e6}`,
  )
  out.push(
    '# HELP process_resident_memory_bytes Resident memory size.',
    '# TYPE process_resident_memory_bytes gauge',
    `process_resident_memory_bytes ${process.memoryUsage.rss()}`,
  )
  out.push(
    '# HELP process_start_time_seconds Start time of the process since the Unix epoch.',
    '# TYPE process_start_time_seconds gauge',
    `process_start_time_seconds ${startedAt}`,
  )
  out.push(eventLoop.render())
  for (const collect of collectors) {
    const extra = collect()
    if (extra) out.push(extra.trimEnd())
  }
  return out.join('\n') + '\n'
}
