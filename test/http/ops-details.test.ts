/**
 * Operations details over real loopback servers: request ids (honoured when safe, made otherwise, echoed,
 * logged, in problems), the caller's key id (never the key) in the access log, CORS (off by default,
 * preflight without a key, quota headers exposed), /readyz with the quota store down and with datasets
 * built without an optional source, and dataset ages in /metrics.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createHash } from 'node:crypto'
import { openDataDir, SOURCE_OUT_DIR } from '../../src/data/open.ts'
import type { Domain } from '../../src/domains/types.ts'
import { acceptedRequestId } from '../../src/http/edge/observability.ts'
import { redisQuotaStore } from '../../src/stores/quota-redis.ts'
import { TEST_KEY, testConfig } from '../support/app.ts'
import { startRedis, type TestRedis } from '../support/redis.ts'
import { sampleDomain } from '../support/sample-domain.ts'
import { tempDirs } from '../support/temp.ts'
import { liveServer, type LiveServer } from './helpers.ts'

const tempDir = tempDirs('almanac-ops-')

describe('request ids', () => {
  let s: LiveServer
  beforeAll(async () => {
    s = await liveServer({ env: { ALMANAC_ACCESS_LOG: 'true' } })
  })
  afterAll(() => s.stop())
  const lastLine = () => JSON.parse(s.log.at(-1)!)

  test('made when absent: echoed, different per request, the same in the access log', async () => {
    const a = await fetch(`${s.url}/api/v1/planets/mars`, { headers: { 'x-api-key': TEST_KEY } })
    const idA = a.headers.get('x-request-id')!
    expect(idA).toMatch(/^[0-9a-f]{16}-[0-9a-z]+$/)
    expect(lastLine().request_id).toBe(idA)
    const b = await fetch(`${s.url}/healthz`)
    expect(b.headers.get('x-request-id')).not.toBe(idA)
    expect(lastLine().request_id).toBe(b.headers.get('x-request-id'))
  })

  test("a caller's safe id is honoured: echoed, logged, and named in problems", async () => {
    const id = 'trace-01HZY:abc/def+1=2@x.y_z'
    const res = await fetch(`${s.url}/api/v1/planets/pluto`, { headers: { 'x-api-key': TEST_KEY, 'x-request-id': id } })
    expect(res.status).toBe(404)
    expect(res.headers.get('x-request-id')).toBe(id)
    const body = (await res.json()) as { error: { request_id: string; instance: string } }
    expect(body.error.request_id).toBe(id)
    expect(lastLine().request_id).toBe(id)
    // Problems before any route (401) carry it too.
    const refused = await fetch(`${s.url}/api/v1/planets/mars`, { headers: { 'x-request-id': id } })
    expect(refused.status).toBe(401)
    expect(((await refused.json()) as { error: { request_id: string } }).error.request_id).toBe(id)
  })

  test('an unsafe or oversized id is replaced, never echoed', async () => {
    for (const bad of ['a'.repeat(129), 'has space', 'quote"d', 'ünïcode', '<script>', 'semi;colon', '']) {
      const res = await fetch(`${s.url}/healthz`, { headers: { 'x-request-id': bad } })
      const echoed = res.headers.get('x-request-id')!
      expect(echoed).not.toBe(bad)
      expect(echoed).toMatch(/^[0-9a-f]{16}-[0-9a-z]+$/)
    }
    expect(acceptedRequestId('a'.repeat(128))).toBe('a'.repeat(128))
    expect(acceptedRequestId('x\u0000y')).toBeUndefined()
  })

  test('the access log names the caller by key id, never the key', async () => {
    await fetch(`${s.url}/api/v1/planets/mars`, { headers: { 'x-api-key': TEST_KEY } })
    const line = s.log.at(-1)!
    const keyId = createHash('sha256').update(TEST_KEY).digest('hex').slice(0, 16)
    expect(JSON.parse(line).caller).toBe(`key:cfg_${keyId}`)
    expect(line).not.toContain(TEST_KEY)
    for (const l of s.log) expect(l).not.toContain(TEST_KEY)
  })
})

describe('CORS', () => {
  let off: LiveServer
  let on: LiveServer
  let any: LiveServer
  beforeAll(async () => {
    off = await liveServer()
    on = await liveServer({ env: { ALMANAC_CORS_ORIGINS: 'https://app.example.com,http://localhost:3000' } })
    any = await liveServer({ env: { ALMANAC_CORS_ORIGINS: '*' } })
  })
  afterAll(async () => {
    await off.stop()
    await on.stop()
    await any.stop()
  })
  const preflight = (s: LiveServer, origin: string) =>
    fetch(`${s.url}/api/v1/planets/bulk`, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-api-key, content-type' },
    })

  test('off by default: no CORS header anywhere, a preflight is not answered for browsers', async () => {
    const res = await fetch(`${off.url}/api/v1/planets/mars`, { headers: { 'x-api-key': TEST_KEY, origin: 'https://app.example.com' } })
    expect(res.headers.get('access-control-allow-origin')).toBeNull()
    const pre = await preflight(off, 'https://app.example.com')
    expect(pre.headers.get('access-control-allow-origin')).toBeNull()
  })

  test('a preflight from an allowed origin is answered without a key', async () => {
    const pre = await preflight(on, 'https://app.example.com')
    expect(pre.status).toBe(204)
    expect(pre.headers.get('access-control-allow-origin')).toBe('https://app.example.com')
    expect(pre.headers.get('access-control-allow-methods')).toContain('POST')
    expect(pre.headers.get('access-control-allow-headers')!.toLowerCase()).toContain('x-api-key')
    expect(pre.headers.get('access-control-allow-credentials')).toBeNull()
    expect(pre.headers.get('vary')).toContain('Origin')
  })

  test('an origin not listed gets no CORS headers', async () => {
    const pre = await preflight(on, 'https://evil.example')
    expect(pre.headers.get('access-control-allow-origin')).toBeNull()
    const res = await fetch(`${on.url}/api/v1/planets/mars`, { headers: { 'x-api-key': TEST_KEY, origin: 'https://evil.example' } })
    expect(res.status).toBe(200)
    expect(res.headers.get('access-control-allow-origin')).toBeNull()
  })

  test('answers to an allowed origin expose the quota, RateLimit and request-id headers, errors included', async () => {
    for (const [headers, status] of [
      [{ 'x-api-key': TEST_KEY }, 200],
      [{}, 401],
    ] as [Record<string, string>, number][]) {
      const res = await fetch(`${on.url}/api/v1/planets/mars`, { headers: { ...headers, origin: 'http://localhost:3000' } })
      expect(res.status).toBe(status)
      expect(res.headers.get('access-control-allow-origin')).toBe('http://localhost:3000')
      const exposed = res.headers
        .get('access-control-expose-headers')!
        .split(', ')
        .map((h) => h.toLowerCase())
      for (const h of [
        'x-quota-limit',
        'x-quota-remaining',
        'x-quota-reset',
        'ratelimit',
        'ratelimit-policy',
        'retry-after',
        'x-request-id',
      ])
        expect(exposed).toContain(h)
      // A known caller's answer carries every quota header it exposes; a 401 (no caller) the SPEC's three only.
      for (const h of exposed)
        if (h.startsWith('x-quota') || h.startsWith('ratelimit')) expect(res.headers.has(h)).toBe(status === 200 || h.startsWith('x-quota'))
      expect(res.headers.get('vary')).toContain('Origin')
      expect(res.headers.get('vary')).toContain('X-Response-Form')
    }
  })

  test('* allows any origin', async () => {
    const res = await fetch(`${any.url}/api/v1/planets/mars`, { headers: { 'x-api-key': TEST_KEY, origin: 'https://anyone.example' } })
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    expect((await preflight(any, 'https://anyone.example')).headers.get('access-control-allow-origin')).toBe('*')
  })

  test('bad origins in the setting are named', () => {
    expect(() => testConfig({ ALMANAC_CORS_ORIGINS: 'https://app.example.com/' })).toThrow('ALMANAC_CORS_ORIGINS')
    expect(() => testConfig({ ALMANAC_CORS_ORIGINS: 'app.example.com' })).toThrow('ALMANAC_CORS_ORIGINS')
  })
})

describe('/readyz and the quota store', () => {
  let redis: TestRedis
  beforeAll(async () => {
    redis = await startRedis()
  })
  afterAll(() => redis.stop())

  test('not ready while Redis is unreachable and fail-open is off; ready again when it is back', async () => {
    const quota = redisQuotaStore(redis.url, { timeoutMs: 500, maxBackoffMs: 50 })
    const s = await liveServer({ env: { ALMANAC_QUOTA_STORE: redis.url }, quota })
    try {
      expect((await fetch(`${s.url}/readyz`)).status).toBe(200)
      await redis.stop()
      const down = await fetch(`${s.url}/readyz`)
      expect(down.status).toBe(503)
      const body = (await down.json()) as { status: string; problems: { component?: string; problem: string }[] }
      expect(body.status).toBe('not_ready')
      expect(body.problems).toEqual([{ component: 'quota_store', problem: expect.stringContaining('quota store is unreachable') }])
      expect(JSON.stringify(body)).not.toContain(redis.url)
      // What /readyz predicts is what callers get.
      expect((await fetch(`${s.url}/api/v1/planets/mars`, { headers: { 'x-api-key': TEST_KEY } })).status).toBe(503)
      await redis.start()
      let status = 0
      for (let i = 0; i < 200 && status !== 200; i++) {
        status = (await fetch(`${s.url}/readyz`)).status
        if (status !== 200) await Bun.sleep(25)
      }
      expect(status).toBe(200)
    } finally {
      await s.stop()
      quota.close()
    }
  }, 30_000)

  test('with fail-open, an unreachable Redis does not make the server unready', async () => {
    const quota = redisQuotaStore('redis://127.0.0.1:1', { timeoutMs: 300 })
    const s = await liveServer({ env: { ALMANAC_QUOTA_STORE: 'redis://127.0.0.1:1', ALMANAC_QUOTA_FAIL_OPEN: 'true' }, quota })
    try {
      expect((await fetch(`${s.url}/readyz`)).status).toBe(200)
    } finally {
      await s.stop()
      quota.close()
    }
  })
})

describe('datasets built without an optional source', () => {
  test('/readyz stays ready and names the missing signal; /metrics counts it', async () => {
    const dir = tempDir()
    mkdirSync(dir, { recursive: true })
    const entry = (id: string, unavailable?: { id: string; reason: string }[]) => ({
      id,
      version: '1',
      date: '2026-01-01',
      built: '2026-02-01T00:00:00.000Z',
      revision: 1,
      inputs: '',
      sources: [],
      counts: {},
      artifacts: [],
      ...(unavailable ? { unavailable } : {}),
    })
    writeFileSync(
      join(dir, 'manifest.json'),
      JSON.stringify({
        generated: '',
        datasets: { core: entry('core'), flags: entry('flags', [{ id: 'tor-list', reason: 'not in /srv/mirror/ip-lists and offline' }]) },
      }),
    )
    const domain = { ...sampleDomain(), datasets: ['core', 'flags'] } as Domain
    const s = await liveServer({ config: { dataDir: dir }, domains: [domain] })
    try {
      const res = await fetch(`${s.url}/readyz`)
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({
        status: 'ready',
        domains: [{ domain: 'planets', ready: true, signals_unavailable: [{ dataset: 'flags', sources: ['tor-list'] }] }],
        // Freshness per dataset (issue 18): these have no threshold, so never stale.
        datasets: ['core', 'flags'].map((dataset) => ({ dataset, age_days: expect.any(Number), stale: false, stale_after_days: null })),
      })
      const metrics = await (await fetch(`${s.url}/metrics`)).text()
      expect(metrics).toContain('almanac_dataset_unavailable_sources{dataset="flags"} 1')
      expect(metrics).toContain('almanac_dataset_unavailable_sources{dataset="core"} 0')
      expect(metrics).toContain(`almanac_dataset_built_timestamp_seconds{dataset="flags"} ${Date.UTC(2026, 1, 1) / 1000}`)
      expect(metrics).toContain('almanac_domain_ready{domain="planets"} 1')
      // The datasets endpoint names it too, without the operator's paths.
      const meta = await fetch(`${s.url}/api/v1/meta/datasets/flags`, { headers: { 'x-api-key': TEST_KEY, 'x-response-form': 'bare' } })
      expect(((await meta.json()) as any).unavailable_sources).toEqual([{ id: 'tor-list', reason: 'not in … and offline' }])
    } finally {
      await s.stop()
    }
  })
})

test('/metrics: the age of each real dataset in seconds and its build date', async () => {
  const s = await liveServer()
  try {
    const text = await (await fetch(`${s.url}/metrics`)).text()
    const manifest = openDataDir(SOURCE_OUT_DIR).manifest
    const ids = Object.keys(manifest.datasets)
    expect(ids.length).toBeGreaterThan(0)
    for (const id of ids) {
      const e = manifest.datasets[id]!
      const age = Number(new RegExp(`^almanac_dataset_age_seconds\\{dataset="${id}"\\} (\\d+)$`, 'm').exec(text)?.[1])
      const [y, m, d] = e.date!.split('-').map(Number)
      const expected = (Date.now() - Date.UTC(y!, m! - 1, d!)) / 1000
      expect(Math.abs(age - expected)).toBeLessThan(300)
      expect(text).toContain(`almanac_dataset_built_timestamp_seconds{dataset="${id}"} ${Math.floor(new Date(e.built).getTime() / 1000)}`)
      expect(text).toContain(
        `almanac_dataset_info{dataset="${id}",version="${e.version}",date="${e.date}",built="${e.built.slice(0, 10)}"} 1`,
      )
    }
  } finally {
    await s.stop()
  }
})
