/**
 * The least any server must do to answer two of bench/http.ts's rows as the SPEC asks, with no framework and
 * none of Almanac's code: a bare `Bun.serve` that finds the caller by its key (a Map), counts a credit (a
 * Map), sends the SPEC's headers (quota and RateLimit, request id, Vary, content type; from a kept `Headers`,
 * as http/reply/response-headers.ts does) and writes the JSON.
 * - `GET /api/v1/meta/datasets/countries?fields=…`: the light route in Form B, `fields` applied to a fixed record;
 * - `POST /api/v1/ip`: the body read and parsed, the address checked for a string, a fixed answer (no lookup).
 * No validation beyond that, no metrics, no CORS, no compression check, no problem documents: a floor, not a
 * service. bench/http.ts runs it beside the hello-world so its table says what the SPEC itself costs on this
 * machine and what Almanac's layers cost over it. Started by bench/http.ts with PORT set.
 */
import { BENCH_KEY } from './lib.ts'

const PLAN = { name: 'bench', limit: 2_000_000_000, windowSeconds: 86_400 }
const callers = new Map([[BENCH_KEY, 'key:bench']])
const used = new Map<string, number>()
const kept = new Headers({
  'content-type': 'application/json',
  vary: 'X-Response-Form, Accept-Encoding',
  'x-quota-limit': String(PLAN.limit),
  'x-quota-reset': '1795824000',
  'ratelimit-policy': `"${PLAN.name}";q=${PLAN.limit};w=${PLAN.windowSeconds}`,
})
const RECORD: Record<string, string> = { id: 'countries', name: 'Countries', version: '4.20.1', source: 'iso-codes' }
const idPrefix = crypto.getRandomValues(new Uint32Array(2)).join('')
let requests = 0

function answer(caller: string, json: string): Response {
  const count = (used.get(caller) ?? 0) + 1
  used.set(caller, count)
  const remaining = PLAN.limit - count
  const headers = new Headers(kept)
  headers.set('x-quota-remaining', String(remaining))
  headers.set('ratelimit', `"${PLAN.name}";r=${remaining};t=3600`)
  headers.set('x-request-id', `${idPrefix}-${++requests}`)
  return new Response(json, { headers })
}

const problem = (status: number) => new Response(`{"status":${status}}`, { status })

async function handle(request: Request): Promise<Response> {
  const url = request.url
  const start = url.indexOf('/', url.indexOf('//') + 2)
  const query = url.indexOf('?', start)
  const path = query < 0 ? url.slice(start) : url.slice(start, query)
  const caller = callers.get(request.headers.get('x-api-key') ?? '')
  if (path === '/api/v1/meta/datasets/countries') {
    if (!caller) return problem(401)
    const fields = query < 0 ? null : new URLSearchParams(url.slice(query + 1)).get('fields')
    const picked = fields ? Object.fromEntries(fields.split(',').map((f) => [f, RECORD[f]])) : RECORD
    return answer(caller, JSON.stringify(picked))
  }
  if (path === '/api/v1/ip' && request.method === 'POST') {
    if (!caller) return problem(401)
    const body = JSON.parse(await request.text()) as { ip?: unknown }
    if (typeof body.ip !== 'string') return problem(422)
    return answer(caller, `{"status":"ok","data":{"ip":${JSON.stringify(body.ip)}},"error":null}`)
  }
  return path === '/' ? new Response('ok') : problem(404)
}

const server = Bun.serve({ port: Number(process.env.PORT ?? 0), hostname: '127.0.0.1', development: false, fetch: handle })
console.log(`listening ${server.port}`)
