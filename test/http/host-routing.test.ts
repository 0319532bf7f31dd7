/**
 * Routing, authentication, quota and metrics decide from one path, whatever the Host header holds. Elysia
 * used to cut the path at a fixed offset of 11 into `http://<host>/...`: with `Host: ab`, `/z/api/v1/...`
 * was routed as `/api/v1/...` while auth saw `/z/...` and let it through unauthenticated and uncounted,
 * and `Host: api` gave correct paths a 405.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import countries from '../../src/domains/countries/index.ts'
import hash from '../../src/domains/hash/index.ts'
import { TEST_KEY } from '../support/app.ts'
import { rawRequest } from '../support/raw-http.ts'
import { liveServer, type LiveServer } from './helpers.ts'

let server: LiveServer
beforeAll(async () => {
  server = await liveServer({ domains: [countries, hash] })
})
afterAll(() => server.stop())

const HOSTS = ['a', 'ab', 'x', 'api', 'a:1', 'abc', 'api:80', '[::1]', '[::1]:8080', 'localhost', 'almanac.internal.example:8443', 'a.b']
const PREFIXES = ['', '/z', '/zz', '/zzz', '/zzzz', '/a/b']
const send = (method: string, target: string, host: string | null, extra: string[] = [], body = '') =>
  rawRequest(
    server.port,
    [
      `${method} ${target} HTTP/1.1`,
      ...(host === null ? [] : [`Host: ${host}`]),
      ...extra,
      ...(body ? [`Content-Length: ${Buffer.byteLength(body)}`] : []),
    ].join('\r\n'),
    body,
  )

describe('whatever the Host header, a request without credentials never gets data', () => {
  for (const host of HOSTS) {
    test(`Host: ${host}`, async () => {
      for (const prefix of PREFIXES) {
        const get = await send('GET', `${prefix}/api/v1/countries/FR`, host)
        // Under /api/v1 it is a 401; anywhere else, not found. Never 200.
        expect({ prefix, status: get.status }).toEqual({ prefix, status: prefix ? 404 : 401 })
        const post = await send('POST', `${prefix}/api/v1/hash/sha256`, host, ['Content-Type: application/json'], '{"input":"abc"}')
        expect({ prefix, status: post.status }).toEqual({ prefix, status: prefix ? 404 : 401 })
      }
    })
  }
})

describe('whatever the Host header, correct paths answer with a key, counted', () => {
  for (const host of HOSTS) {
    test(`Host: ${host}`, async () => {
      const res = await send('GET', '/api/v1/countries/FR', host, [`X-API-Key: ${TEST_KEY}`])
      expect(res.status).toBe(200)
      expect(JSON.parse(res.body).data.alpha_3).toBe('FRA')
      expect(res.headers.get('x-quota-remaining')).toMatch(/^\d+$/)
    })
  }
})

test('absolute-form targets are routed by their path, not by a fixed offset', async () => {
  for (const authority of ['e', 'ab', 'evil.example', 'x:1']) {
    const anonymous = await send('GET', `http://${authority}/z/api/v1/countries/FR`, 'api')
    expect({ authority, status: anonymous.status }).toEqual({ authority, status: 404 })
    const keyed = await send('GET', `http://${authority}/api/v1/countries/FR`, 'api', [`X-API-Key: ${TEST_KEY}`])
    expect({ authority, status: keyed.status }).toEqual({ authority, status: 200 })
  }
})

test('an empty or invalid Host header is a 400 problem (RFC 9112 section 3.2), before any route', async () => {
  for (const host of ['', 'a/b', 'a?b', 'a#b', 'a@b']) {
    const res = await send('GET', '/api/v1/countries/FR', host, [`X-API-Key: ${TEST_KEY}`])
    expect({ host, status: res.status }).toEqual({ host, status: 400 })
    expect(JSON.parse(res.body).error.detail).toContain('Host')
  }
})

test('metrics label requests by the path that was routed', async () => {
  // Earlier tests made the same kinds of requests: compare the counters around these two requests only.
  const series = {
    routed: 'almanac_http_requests_total{method="GET",route="/api/v1/countries/:code",status="200"}',
    unmatched: 'almanac_http_requests_total{method="GET",route="(unmatched)",status="404"}',
    unauthenticated: 'almanac_http_requests_total{method="GET",route="/api/v1/countries/:code",status="401"}',
  }
  const read = async () => {
    const metrics = await (await fetch(`${server.url}/metrics`)).text()
    const value = (name: string) =>
      Number(
        metrics
          .split('\n')
          .find((l) => l.startsWith(`${name} `))
          ?.slice(name.length + 1) ?? 0,
      )
    return { routed: value(series.routed), unmatched: value(series.unmatched), unauthenticated: value(series.unauthenticated) }
  }
  const before = await read()
  expect((await send('GET', '/z/api/v1/countries/FR', 'ab')).status).toBe(404)
  expect((await send('GET', '/api/v1/countries/FR', 'ab', [`X-API-Key: ${TEST_KEY}`])).status).toBe(200)
  const after = await read()
  expect(after).toEqual({ routed: before.routed + 1, unmatched: before.unmatched + 1, unauthenticated: before.unauthenticated })
})
