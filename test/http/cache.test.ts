/**
 * Cacheable answers (issue 18): strong ETags from the datasets' hashes and the representation,
 * Cache-Control per kind, If-None-Match -> 304 that still spends a credit and carries the quota headers,
 * and nothing of the sort on per-caller or random answers.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { noneMatch } from '../../src/http/reply/caching.ts'
import { type TestApp, testApp } from '../support/app.ts'

let app: TestApp
beforeAll(async () => {
  app = await testApp({ env: { ALMANAC_PLANS: 'test:1000/1d', ALMANAC_EMAIL_OFFLINE: 'true' } })
})
afterAll(() => app.close())

const get = (path: string, headers: Record<string, string> = {}) => app.request('GET', path, { headers })

describe('reference data', () => {
  test('a strong ETag and a private Cache-Control; If-None-Match gives a 304 that spends a credit', async () => {
    const first = await get('/api/v1/countries/FR')
    expect(first.status).toBe(200)
    const etag = first.headers.get('etag')!
    expect(etag).toMatch(/^"[0-9a-z]+-[0-9a-z]+"$/)
    expect(first.headers.get('cache-control')).toBe('private, max-age=3600')
    const before = Number(first.headers.get('x-quota-remaining'))

    const again = await get('/api/v1/countries/FR', { 'if-none-match': etag })
    expect(again.status).toBe(304)
    expect(await again.text()).toBe('')
    expect(again.headers.get('etag')).toBe(etag)
    expect(again.headers.get('cache-control')).toBe('private, max-age=3600')
    expect(again.headers.get('vary')).toBe('X-Response-Form, Accept-Encoding')
    expect(again.headers.get('x-definitions-updated')).toBe(first.headers.get('x-definitions-updated'))
    expect(again.headers.get('ratelimit-policy')).toBe(first.headers.get('ratelimit-policy'))
    expect(Number(again.headers.get('x-quota-remaining'))).toBe(before - 1)
  })

  test('each representation has its own ETag: form, fields, resource', async () => {
    const bare = (await get('/api/v1/countries/FR', { 'x-response-form': 'bare' })).headers.get('etag')
    const enveloped = (await get('/api/v1/countries/FR', { 'x-response-form': 'enveloped' })).headers.get('etag')
    const fields = (await get('/api/v1/countries/FR?fields=name', { 'x-response-form': 'bare' })).headers.get('etag')
    const other = (await get('/api/v1/countries/DE', { 'x-response-form': 'bare' })).headers.get('etag')
    expect(new Set([bare, enveloped, fields, other]).size).toBe(4)
    // The same representation twice: the same ETag (strong: same bytes).
    const repeat = await get('/api/v1/countries/FR', { 'x-response-form': 'bare' })
    expect(repeat.headers.get('etag')).toBe(bare)
    // The enveloped ETag does not validate the bare representation.
    expect((await get('/api/v1/countries/FR', { 'x-response-form': 'bare', 'if-none-match': enveloped! })).status).toBe(200)
  })

  test('If-None-Match: lists, weak prefix and * match (RFC 9110 weak comparison); a stranger does not', async () => {
    const etag = (await get('/api/v1/subdivisions/FR-IDF')).headers.get('etag')!
    for (const header of [`"x-1", ${etag}`, `W/${etag}`, '*'])
      expect((await get('/api/v1/subdivisions/FR-IDF', { 'if-none-match': header })).status).toBe(304)
    expect((await get('/api/v1/subdivisions/FR-IDF', { 'if-none-match': '"nope"' })).status).toBe(200)
    expect((await get('/api/v1/subdivisions/FR-IDF', { 'if-none-match': `${etag.slice(0, -2)}"` })).status).toBe(200)
    expect(noneMatch('x'.repeat(5000) + etag, etag)).toBe(false)
  })

  test('Bible texts, postal systems and timezones are cacheable; timezones revalidate every time', async () => {
    for (const path of ['/api/v1/bible/kjv/john/3/16', '/api/v1/bible/web/books', '/api/v1/postal/FR']) {
      const res = await get(path)
      expect(res.status).toBe(200)
      expect(res.headers.get('cache-control')).toBe('private, max-age=3600')
      expect((await get(path, { 'if-none-match': res.headers.get('etag')! })).status).toBe(304)
    }
    const tz = await get('/api/v1/timezones?region=Europe&limit=3')
    expect(tz.headers.get('cache-control')).toBe('private, no-cache')
    expect(tz.headers.get('etag')).toBeTruthy()
  })

  test('problems carry no ETag', async () => {
    const res = await get('/api/v1/countries/XX', { 'if-none-match': '*' })
    expect(res.status).toBe(404)
    expect(res.headers.get('etag')).toBeNull()
    expect(res.headers.get('cache-control')).toBeNull()
  })
})

describe('never on per-caller or random answers', () => {
  test.each([
    ['GET', '/api/v1/ip/me', undefined],
    ['GET', '/api/v1/bible/daily?mode=random', undefined],
    ['GET', '/api/v1/bible/daily', undefined],
    ['POST', '/api/v1/hash/sha256', { input: 'abc' }],
    ['POST', '/api/v1/email/risk', { email: 'someone@example.com' }],
    ['POST', '/api/v1/countries/validate', { codes: ['FR'] }],
  ])('%s %s', async (method, path, body) => {
    const res = await app.request(method, path, { body, headers: { 'if-none-match': '*', 'x-forwarded-for': '8.8.8.8' } })
    expect(res.status).not.toBe(304)
    expect(res.headers.get('etag')).toBeNull()
    expect(res.headers.get('cache-control')).toBeNull()
  })
})

test('the ETag follows the datasets: same body, another artifact hash, another ETag', async () => {
  // A data directory with the same artifacts (symlinks) but a manifest that names other hashes for them,
  // as a rebuilt dataset would; the sizes still match and nothing is hashed before serving (the hashes are
  // made up), so the domain opens.
  const source = resolve('datasets/out')
  const dir = mkdtempSync(join(tmpdir(), 'almanac-etag-'))
  try {
    for (const name of readdirSync(source)) if (name !== 'manifest.json') symlinkSync(join(source, name), join(dir, name))
    const manifest = await Bun.file(join(source, 'manifest.json')).json()
    for (const a of manifest.datasets.countries.artifacts) a.sha256 = 'f'.repeat(64)
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest))
    const other = await testApp({ config: { dataDir: dir, dataHashBeforeServeMaxBytes: 0 } })
    try {
      const a = await get('/api/v1/countries/FR', { 'x-response-form': 'bare' })
      const b = await other.request('GET', '/api/v1/countries/FR', { form: 'bare' })
      expect(await b.text()).toBe(await a.text())
      expect(b.headers.get('etag')).not.toBe(a.headers.get('etag'))
      // Another domain, whose artifacts did not change, keeps its ETag.
      const c = await get('/api/v1/postal/FR', { 'x-response-form': 'bare' })
      const d = await other.request('GET', '/api/v1/postal/FR', { form: 'bare' })
      expect(d.headers.get('etag')).toBe(c.headers.get('etag'))
    } finally {
      await other.close()
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
