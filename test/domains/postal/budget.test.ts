/**
 * The work budget of search, nearby and within (issue 21): the worst inputs the schemas accept
 * (worst.ts) either answer within the budget, exactly as an independent oracle says, or are refused
 * with a 422 problem naming what to narrow, in both response forms. Oracles: direct SQL on a second
 * connection for search, the raw mirror rows and a haversine written apart for nearby. No timings
 * here: bench/postal-worst.ts prints them.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import { openDataDir } from '../../../src/data/open.ts'
import { openReadonlySqlite } from '../../../src/data/sqlite.ts'
import postal from '../../../src/domains/postal/index.ts'
import { type PostalService, openPostalService } from '../../../src/domains/postal/service.ts'
import { AlmanacError } from '../../../src/lib/errors.ts'
import { testApp, type TestApp } from '../../support/app.ts'
import { distanceKm } from '../../support/geo.ts'
import { MIRROR } from '../../support/mirror.ts'
import { requestOf, runCase, worstCases, type WorstCase } from './worst.ts'

let app: TestApp
let service: PostalService
const oracle = openReadonlySqlite(openDataDir().path('postal.sqlite'))
beforeAll(async () => {
  app = await testApp({ domains: [postal] })
  service = openPostalService(openReadonlySqlite(openDataDir().path('postal.sqlite')), {}, app.config.postal.workBudget)
})
afterAll(() => app.close())

const send = (c: WorstCase, form: 'bare' | 'enveloped') => {
  const r = requestOf(c)
  return app.json(r.method, `/api/v1/postal${r.path}`, { form, body: r.body })
}

/** The cases whose work exceeds the default budget on the mirror's data (every other one must answer). */
const REFUSED = new Set([
  'search PT prefix=4 offset 58,000',
  // Admitted at 46,041 units until the edge points of a radius count were counted one by one (51k+ now).
  'nearby PT 500 km',
  'nearby PT 500 km offset 190,000',
  'nearby SG 500 km offset 120,000',
  'within PT box',
  'within SG box',
  'within IN box',
  'within PT box x2000 (MultiPolygon)',
  'within PT 10,000-position comb',
])

const rawPoints = (cc: string) =>
  gunzipSync(readFileSync(join(MIRROR, 'geonames-postal', `${cc}.txt.gz`)))
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split('\t'))
    .filter((c) => c[9] !== '' && c[10] !== '')
    .map((c) => ({ lat: Number(c[9]), lng: Number(c[10]) }))

/** Search by direct SQL (GLOB on the stored columns), independent of the service's ranges and budget. */
function searchOracle(c: Extract<WorstCase, { kind: 'search' }>) {
  const where = ['p.country = ?']
  const args: string[] = [c.country]
  if (c.filters.q) where.push('p.place_folded GLOB ?') && args.push(`${c.filters.q}*`)
  if (c.filters.prefix) where.push('p.postal_code GLOB ?') && args.push(`${c.filters.prefix}*`)
  if (c.filters.admin_code) where.push('a.admin_code1 = ? COLLATE NOCASE') && args.push(c.filters.admin_code)
  const from = `FROM places p JOIN admins a ON a.id = p.admin_id WHERE ${where.join(' AND ')}`
  const total = (oracle.query(`SELECT COUNT(*) AS n ${from}`).get(...args) as { n: number }).n
  const codes = oracle
    .query(`SELECT p.postal_code AS code ${from} ORDER BY p.postal_code, p.place_folded, p.id LIMIT ? OFFSET ?`)
    .all(...args, c.page.limit, c.page.offset)
    .map((r: any) => r.code)
  return { total, codes }
}

describe('worst inputs: within the budget or a 422 naming what to narrow', () => {
  for (const c of worstCases()) {
    test(c.name, async () => {
      const bare = await send(c, 'bare')
      const enveloped = await send(c, 'enveloped')
      if (REFUSED.has(c.name)) {
        for (const r of [bare, enveloped]) {
          expect(r.status).toBe(422)
          // Form A wraps the problem in `error`.
          const problem = r === enveloped ? r.body.error : r.body
          expect(problem.reason).toBe('work_budget_exceeded')
          expect(problem.work_budget).toBe(app.config.postal.workBudget)
          expect(problem.detail).toMatch(/work budget of one request; narrow it: /)
          expect(problem.errors.map((e: any) => e.field)).toContain(c.narrow)
        }
        expect(() => runCase(service, c)).toThrow(AlmanacError)
        return
      }
      expect(bare.status).toBe(200)
      expect(enveloped.status).toBe(200)
      runCase(service, c)
      expect(service.lastWork).toBeLessThanOrEqual(service.workBudget)
      const total = enveloped.body.total ?? enveloped.body.total_count
      expect(bare.body.count).toBe(total)
      if (c.kind === 'search') {
        const expected = searchOracle(c)
        expect(total).toBe(expected.total)
        expect(bare.body.results.map((r: any) => r.postal_code)).toEqual(expected.codes)
      } else if (c.kind === 'nearby') {
        const distances = rawPoints(c.country)
          .map((p) => distanceKm(c.at, p))
          .filter((d) => d <= c.at.radius_km)
          .sort((a, b) => a - b)
        expect(total).toBe(distances.length)
        const page = distances.slice(c.page.offset, c.page.offset + c.page.limit).map((d) => Math.round(d * 1000) / 1000)
        expect(bare.body.results.map((r: any) => r.distance_km)).toEqual(page)
      }
    })
  }
})

describe('the budget', () => {
  test('a refused request leaves the connection serving: the next ordinary query answers as before', async () => {
    const small = { lat: 38.72, lng: -9.14, radius_km: 2, limit: 5 }
    const before = await app.json('POST', '/api/v1/postal/PT/nearby', { body: small, form: 'bare' })
    const [within] = worstCases().filter((c) => c.name === 'within PT box')
    expect((await send(within!, 'bare')).status).toBe(422)
    const after = await app.json('POST', '/api/v1/postal/PT/nearby', { body: small, form: 'bare' })
    expect(after.status).toBe(200)
    expect(after.body).toEqual(before.body)
  })

  test('is the same for the same request: work is counted, not timed', () => {
    const [c] = worstCases().filter((c) => c.name === 'search PT admin_code=14 offset 34,000')
    runCase(service, c!)
    const first = service.lastWork
    runCase(service, c!)
    expect(service.lastWork).toBe(first)
    expect(first).toBeGreaterThan(service.workBudget / 2)
  })

  test('ALMANAC_POSTAL_WORK_BUDGET sets it: a smaller budget refuses what the default answers', async () => {
    const tight = await testApp({ domains: [postal], env: { ALMANAC_POSTAL_WORK_BUDGET: '1000' } })
    try {
      const path = '/api/v1/postal/US/search?prefix=7&limit=10'
      const refused = await tight.json('GET', path, { form: 'bare' })
      expect(refused.status).toBe(422)
      expect(refused.body.work_budget).toBe(1000)
      expect(refused.body.errors).toEqual([{ in: 'query', field: 'prefix', message: expect.stringMatching(/longer q or prefix/) }])
      const answered = await app.json('GET', path, { form: 'bare' })
      expect(answered.status).toBe(200)
      const expected = (oracle.query("SELECT COUNT(*) AS n FROM places WHERE country = 'US' AND postal_code GLOB '7*'").get() as any).n
      expect(answered.body.count).toBe(expected)
    } finally {
      await tight.close()
    }
  })
})
