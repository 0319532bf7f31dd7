/**
 * A large invalid body is refused without Elysia's ValidationError, which serialises the whole value into
 * its message (large-bodies.ts). Through the real app, for every route whose body limit (`x-body-limit` in
 * the OpenAPI document) is over the default: the same mistake in a small body (Elysia's check) and in a
 * large one (the check made after parsing) gives the same problem, and while the large one is refused no
 * JSON text as long as its body is ever made (JSON.stringify is watched: Elysia's message would be one).
 */
import { afterAll, beforeAll, describe, expect, spyOn, test } from 'bun:test'
import { DEFAULT_BODY_LIMIT } from '../../src/http/routing/route-table.ts'
import * as jsonShape from '../../src/http/admission/json-shape.ts'
import { testApp, TEST_KEY, type TestApp } from '../support/app.ts'
import { turnCounter } from '../support/turns.ts'

/** A second caller, for the request that must not wait behind the first caller's large bodies. */
const OTHER_KEY = 'other-caller-key-0002'

/** A sample value for each path parameter of a large-body route (the test fails on an unknown one). */
const PARAMS: Record<string, string> = { country_code: 'DE' }

let app: TestApp
let largeRoutes: { path: string; limit: number }[]
beforeAll(async () => {
  app = await testApp({ env: { ALMANAC_PLANS: 'test:1000000/1d', ALMANAC_API_KEYS: `${TEST_KEY},${OTHER_KEY}` } })
  const doc = (await app.json('GET', '/openapi.json', { key: null })).body
  largeRoutes = Object.entries<any>(doc.paths).flatMap(([path, ops]) =>
    ops.post?.['x-body-limit'] > DEFAULT_BODY_LIMIT
      ? [
          {
            path: path.replace(/\{(\w+)\}/g, (_, name: string) => PARAMS[name] ?? `<no sample for ${name}>`),
            limit: ops.post['x-body-limit'],
          },
        ]
      : [],
  )
})
afterAll(() => app.close())

/** The problem of POSTing `body` (sent as it is), and the longest JSON.stringify result made meanwhile. */
async function refuse(path: string, body: string) {
  let longest = 0
  const stringify = JSON.stringify
  const spy = spyOn(JSON, 'stringify').mockImplementation(((...args: Parameters<typeof JSON.stringify>) => {
    const text = stringify(...args)
    longest = Math.max(longest, text?.length ?? 0)
    return text
  }) as typeof JSON.stringify)
  try {
    const res = await app.handle(
      new Request(`http://localhost${path}`, {
        method: 'POST',
        headers: { 'x-api-key': TEST_KEY, 'x-response-form': 'bare', 'content-type': 'application/json' },
        body,
      }),
    )
    return { status: res.status, problem: (await res.json()) as any, longest }
  } finally {
    spy.mockRestore()
  }
}

describe('a large invalid body gets the problem a small one gets, without being serialised', () => {
  test('the routes with a body limit over the default are found (bulk, polygons, hashing)', () => {
    const paths = largeRoutes.map((r) => r.path)
    expect(paths).toEqual(expect.arrayContaining(['/api/v1/ua/bulk', '/api/v1/postal/DE/within', '/api/v1/hash/sha256']))
    for (const p of paths) expect(p).not.toContain('<no sample')
  })

  test('an unknown member (and the members it leaves missing), padded to half the route limit', async () => {
    for (const { path, limit } of largeRoutes) {
      const small = await refuse(path, JSON.stringify({ zz_unknown: 'x' }))
      const padding = 'x'.repeat(limit / 2)
      const large = await refuse(path, JSON.stringify({ zz_unknown: padding }))
      expect({ path, status: large.status }).toEqual({ path, status: 422 })
      expect({ path, errors: large.problem.errors, detail: large.problem.detail }).toEqual({
        path,
        errors: small.problem.errors,
        detail: small.problem.detail,
      })
      // An object body names the stranger; the one body that is a list (device-catalog) is not a list.
      expect({ path, named: large.problem.errors.some((e: any) => e.field === 'zz_unknown' || e.field === '(root)') }).toEqual({
        path,
        named: true,
      })
      expect({ path, longest: large.longest < padding.length / 10 }).toEqual({ path, longest: true })
    }
  })

  test('a bulk of 12,000 user agents is refused as one of 101: the list is too long', async () => {
    const small = await refuse('/api/v1/ua/bulk', JSON.stringify({ ua_list: Array.from({ length: 101 }, () => ({})) }))
    const body = JSON.stringify({
      ua_list: Array.from({ length: 12_000 }, (_, i) => ({ ua: `Mozilla/5.0 (X11; Linux x86_64) probe/${i}` })),
    })
    const large = await refuse('/api/v1/ua/bulk', body)
    expect(small.status).toBe(422)
    expect(large.status).toBe(422)
    expect(large.problem.errors).toEqual(small.problem.errors)
    expect(large.problem.errors[0]).toMatchObject({ in: 'body', field: 'ua_list' })
    expect(large.problem.errors[0].message).toContain('100')
    expect(large.longest).toBeLessThan(body.length / 10)
    // The same for a route whose body is the list itself.
    const catalog = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => `Mozilla/5.0 (X11; Linux x86_64) probe/${i}`))
    const fewOver = await refuse('/api/v1/ua/compat/device-catalog', catalog(101))
    const manyOver = await refuse('/api/v1/ua/compat/device-catalog', catalog(12_000))
    expect(fewOver.status).toBe(422)
    expect(manyOver.problem.errors).toEqual(fewOver.problem.errors)
    expect(manyOver.problem.errors[0].message).toContain('100')
  })

  test('four large bodies at once: each scan part and each parse in a turn of its own, a small request answered meanwhile', async () => {
    const turn = turnCounter()
    const parsedAt: { turn: number; length: number }[] = []
    const scanned = new Map<jsonShape.JsonScan, number[]>()
    const advance = jsonShape.JsonScan.prototype.advance
    const scan = spyOn(jsonShape.JsonScan.prototype, 'advance').mockImplementation(function (this: jsonShape.JsonScan, chars?: number) {
      scanned.set(this, [...(scanned.get(this) ?? []), turn.now()])
      return advance.call(this, chars)
    })
    const parse = JSON.parse
    const spy = spyOn(JSON, 'parse').mockImplementation(((text: string, reviver?: any) => {
      if (typeof text === 'string' && text.startsWith('{"ua_list"')) parsedAt.push({ turn: turn.now(), length: text.length })
      return parse(text, reviver)
    }) as typeof JSON.parse)
    try {
      const body = JSON.stringify({ ua_list: Array.from({ length: 12_000 }, (_, i) => ({ ua: `Mozilla/5.0 probe/${i}` })) })
      const large = Array.from({ length: 4 }, () =>
        app.handle(
          new Request('http://localhost/api/v1/ua/bulk', {
            method: 'POST',
            headers: { 'x-api-key': TEST_KEY, 'x-response-form': 'bare', 'content-type': 'application/json' },
            body,
          }),
        ),
      )
      const small = await app.request('GET', '/api/v1/countries/FR', { key: OTHER_KEY })
      const smallAt = turn.now()
      const answers = await Promise.all(large)
      expect(small.status).toBe(200)
      expect(answers.map((r) => r.status)).toEqual([422, 422, 422, 422])
      // Each body scanned in parts of at most 64 KiB: four scans of several parts, every part in a turn of its own.
      const parts = [...scanned.values()].filter((turns) => turns.length > 1)
      expect(parts.length).toBe(4)
      for (const turns of parts) expect(turns.length).toBe(Math.ceil(body.length / (64 * 1024)))
      const partTurns = parts.flat()
      expect(new Set(partTurns).size).toBe(partTurns.length)
      // Each parse in a turn after its scan's last part, none in a scan's turn; and each parsed only the list's
      // first 101 items, not the 12,000.
      expect(parsedAt.length).toBe(4)
      expect(new Set(parsedAt.map((p) => p.turn)).size).toBe(4)
      for (const p of parsedAt) expect(partTurns).not.toContain(p.turn)
      expect(Math.min(...parsedAt.map((p) => p.turn))).toBeGreaterThan(Math.min(...parts.map((turns) => turns.at(-1)!)))
      for (const p of parsedAt) expect(p.length).toBeLessThan(body.length / 50)
      // Another caller's small request did not wait for all four: it was answered before the last was parsed.
      expect(smallAt).toBeLessThan(Math.max(...parsedAt.map((p) => p.turn)))
    } finally {
      spy.mockRestore()
      scan.mockRestore()
      turn.stop()
    }
  })

  test('a valid large body is still answered', async () => {
    const body = JSON.stringify({
      ua_list: Array.from({ length: 100 }, (_, i) => ({ ua: `curl/8.${i}.0`, headers: { 'x-pad': 'p'.repeat(300) } })),
    })
    expect(body.length).toBeGreaterThan(DEFAULT_BODY_LIMIT)
    const res = await app.handle(
      new Request('http://localhost/api/v1/ua/bulk', {
        method: 'POST',
        headers: { 'x-api-key': TEST_KEY, 'x-response-form': 'bare', 'content-type': 'application/json' },
        body,
      }),
    )
    expect(res.status).toBe(200)
    const answer: any = await res.json()
    expect(answer.results.length).toBe(100)
    expect(answer.results[7]).toMatchObject({ ua: 'curl/8.7.0', client: { name: 'curl', version: '8.7.0' } })
  })
})
