/**
 * The document shows `/api/v1/timezones/{tz_name}` while routing keeps the `/timezones/*` wildcard (an
 * IANA name holds `/`). Measured here over a loopback server: the name sent as generated clients send it
 * (`America%2FArgentina%2FBuenos_Aires`) answers exactly like the literal path, a wrong method is still
 * a 405 naming GET, and the metrics label every form of the path under the one route pattern.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { domains } from '../../../src/domains/index.ts'
import { TEST_KEY } from '../../support/app.ts'
import { liveServer, type LiveServer } from '../../http/helpers.ts'

let server: LiveServer
beforeAll(async () => {
  server = await liveServer({ domains })
})
afterAll(() => server.stop())

const get = (path: string, method = 'GET') =>
  fetch(server.url + path, { method, headers: { 'x-api-key': TEST_KEY, 'x-response-form': 'bare' } })

test('the path parameter percent-encoded, as a generated client sends it, answers like the literal path', async () => {
  const doc = (await (await fetch(server.url + '/openapi.json')).json()) as any
  expect(doc.paths['/api/v1/timezones/{tz_name}'].get.parameters[0]).toEqual(
    expect.objectContaining({ name: 'tz_name', in: 'path', required: true }),
  )
  expect(doc.paths['/api/v1/timezones/*']).toBeUndefined()
  for (const name of ['America/Argentina/Buenos_Aires', 'Europe/London', 'UTC', 'JST']) {
    const literal = (await (await get(`/api/v1/timezones/${name}?fields=timezone,utc_offset`)).json()) as any
    const encoded = (await (await get(`/api/v1/timezones/${encodeURIComponent(name)}?fields=timezone,utc_offset`)).json()) as any
    expect(encoded).toEqual(literal)
    if (name.includes('/')) expect(encoded.timezone).toBe(name)
  }
  expect((await get('/api/v1/timezones/Nowhere%2FAtAll')).status).toBe(404)
})

test('a wrong method is a 405 with Allow, and metrics keep the wildcard pattern as the label', async () => {
  // Both requests are made here, so the label checks below do not rest on the previous test's requests.
  expect((await get('/api/v1/timezones/Europe%2FParis')).status).toBe(200)
  const res = await get('/api/v1/timezones/Europe%2FParis', 'DELETE')
  expect(res.status).toBe(405)
  expect(res.headers.get('allow')).toContain('GET')
  const metrics = await (await fetch(server.url + '/metrics')).text()
  const labels = [...metrics.matchAll(/almanac_http_requests_total\{method="(\w+)",route="([^"]*)",status="(\d+)"\}/g)].filter((m) =>
    m[2]!.includes('timezones/'),
  )
  expect(labels.length).toBeGreaterThan(0)
  for (const [, , route] of labels) expect(route).toBe('/api/v1/timezones/*')
  expect(labels.some(([, method, , status]) => method === 'DELETE' && status === '405')).toBe(true)
  expect(labels.some(([, method, , status]) => method === 'GET' && status === '200')).toBe(true)
})
