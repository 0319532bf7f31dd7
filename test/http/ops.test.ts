/**
 * Operations in-process: health and readiness without credentials, Prometheus metrics (requests by route
 * pattern and status, latency histogram, quota refusals), and the JSON access log with its toggle.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { TEST_KEY } from '../support/app.ts'
import { liveServer, type LiveServer } from './helpers.ts'

let server: LiveServer
let quiet: LiveServer
beforeAll(async () => {
  server = await liveServer({
    env: { ALMANAC_ACCESS_LOG: 'true', ALMANAC_PLANS: 'tiny:3/1h', ALMANAC_DEFAULT_PLAN: 'tiny', ALMANAC_API_KEYS: `${TEST_KEY}:tiny` },
  })
  quiet = await liveServer({ env: { ALMANAC_ACCESS_LOG: 'false' } })
})
afterAll(async () => {
  await server.stop()
  await quiet.stop()
})

const get = (s: LiveServer, path: string, headers: Record<string, string> = { 'x-api-key': TEST_KEY }) => fetch(s.url + path, { headers })

/** Parses Prometheus text into `name{labels}` -> value. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue
    const m = /^([a-zA-Z_:][\w:]*(?:\{.*\})?) (\S+)$/.exec(line)
    if (!m) throw new Error(`not exposition format: ${line}`)
    out.set(m[1]!, Number(m[2]))
  }
  return out
}

describe('health and readiness', () => {
  test('answer without credentials, in JSON', async () => {
    const h = await fetch(quiet.url + '/healthz')
    expect(h.status).toBe(200)
    expect(await h.json()).toEqual({ status: 'ok' })
    const r = await fetch(quiet.url + '/readyz')
    expect(r.status).toBe(200)
    expect(((await r.json()) as { status: string }).status).toBe('ready')
    expect((await fetch(quiet.url + '/metrics')).status).toBe(200)
  })
})

describe('metrics', () => {
  test('count requests by route pattern and status, time them, and count quota refusals', async () => {
    // Plan tiny: 3 credits, the 4th is a 429.
    for (const name of ['mars', 'venus', 'earth', 'saturn']) await get(server, `/api/v1/planets/${name}`)
    await get(server, '/api/v1/planets/mars', {}) // no key: 401
    for (const junk of ['/x/1', '/x/2', '/y/%F0%9F%98%80']) await get(server, junk)
    const res = await fetch(server.url + '/metrics')
    expect(res.headers.get('content-type')).toContain('text/plain; version=0.0.4')
    const text = await res.text()
    const m = samples(text)
    const route = 'route="/api/v1/planets/:name"'
    expect(m.get(`almanac_http_requests_total{method="GET",${route},status="200"}`)).toBe(3)
    expect(m.get(`almanac_http_requests_total{method="GET",${route},status="429"}`)).toBe(1)
    expect(m.get(`almanac_http_requests_total{method="GET",${route},status="401"}`)).toBe(1)
    expect(m.get(`almanac_quota_refusals_total{${route}}`)).toBe(1)
    // Raw paths never become labels: unknown paths share one series.
    expect(m.get('almanac_http_requests_total{method="GET",route="(unmatched)",status="404"}')).toBe(3)
    expect(text).not.toContain('/x/1')
    expect(text).not.toContain('venus')
    // The histogram is cumulative and agrees with the counters.
    const buckets = [...m]
      .filter(([k]) => k.startsWith(`almanac_http_request_duration_seconds_bucket{method="GET",${route}`))
      .map(([, v]) => v)
    expect(buckets.length).toBe(15)
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]!).toBeGreaterThanOrEqual(buckets[i - 1]!)
    expect(buckets.at(-1)).toBe(5)
    expect(m.get(`almanac_http_request_duration_seconds_count{method="GET",${route}}`)).toBe(5)
    expect(m.get(`almanac_http_request_duration_seconds_sum{method="GET",${route}}`)!).toBeGreaterThan(0)
    expect(m.get('process_resident_memory_bytes')!).toBeGreaterThan(1e6)
    expect([...m.keys()].some((k) => k.startsWith('almanac_build_info{version='))).toBe(true)
  })
})

describe('access log', () => {
  test('one JSON line per request with method, path, route, status, duration and peer; no query string', async () => {
    const before = server.log.length
    await get(server, '/healthz?token=secret-in-query')
    await get(server, '/api/v1/planets?limit=1', {})
    await fetch(server.url + '/api/v1/planets/bulk', {
      method: 'POST',
      headers: { 'x-api-key': TEST_KEY, 'content-type': 'application/json' },
      body: '{',
    })
    const lines = server.log.slice(before).map((l) => JSON.parse(l))
    expect(lines.length).toBe(3)
    expect(lines[0]).toEqual(expect.objectContaining({ method: 'GET', path: '/healthz', route: '/healthz', status: 200, ip: '127.0.0.1' }))
    expect(typeof lines[0].duration_ms).toBe('number')
    expect(new Date(lines[0].time).getTime()).toBeGreaterThan(0)
    expect(lines[1]).toEqual(expect.objectContaining({ path: '/api/v1/planets', route: '/api/v1/planets', status: 401 }))
    expect(lines[2]).toEqual(expect.objectContaining({ method: 'POST', route: '/api/v1/planets/bulk' }))
    expect([400, 429]).toContain(lines[2].status)
    expect(server.log.join('\n')).not.toContain('secret-in-query')
  })

  test('a line stays valid JSON whatever the client sends, and keeps at most 256 characters of user agent', async () => {
    const before = server.log.length
    const ua = 'evil "quoted" \\ back\tslash ' + 'é'.repeat(300)
    await fetch(server.url + '/api/v1/planets/%22quoted%22%5C', { headers: { 'x-api-key': TEST_KEY, 'user-agent': ua } })
    const [line] = server.log.slice(before)
    const parsed = JSON.parse(line!)
    expect(Object.keys(parsed)).toEqual([
      'time',
      'level',
      'msg',
      'method',
      'path',
      'route',
      'status',
      'duration_ms',
      'request_id',
      'caller',
      'credits',
      'ip',
      'ua',
    ])
    // The status is whatever the small test plan allows (404, or 429 once spent); the line is the point.
    expect(parsed).toEqual(
      expect.objectContaining({
        msg: 'request',
        method: 'GET',
        path: '/api/v1/planets/%22quoted%22%5C',
        route: '/api/v1/planets/:name',
        status: expect.any(Number),
      }),
    )
    expect(parsed.ua).toBe(ua.slice(0, 256))
    // A lookup spends 1 when answered (a 404 of a resource included), nothing when refused with 429.
    expect(parsed.credits).toBe(parsed.status === 429 ? 0 : 1)
    expect(Math.abs(new Date(parsed.time).getTime() - Date.now())).toBeLessThan(60_000)
  })

  test('is off when ALMANAC_ACCESS_LOG=false', async () => {
    await get(quiet, '/healthz')
    await get(quiet, '/api/v1/planets/mars')
    expect(quiet.log).toEqual([])
  })
})
