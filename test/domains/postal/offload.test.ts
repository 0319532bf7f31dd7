/**
 * Where a postal query runs (docs/postal.md, "Where a query runs"): on the event loop under INLINE_WORK
 * units; when those run out, again on a query worker under the whole work budget, whose count is the
 * same, so the answer (or the 422) is the one a whole-budget run on the loop gives. The pool's counters
 * say where each query ran; nothing here is timed.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import postal from '../../../src/domains/postal/index.ts'
import { presentRecord } from '../../../src/domains/postal/present.ts'
import { INLINE_WORK, type PostalRecord, type PostalService } from '../../../src/domains/postal/service.ts'
import type { QueryPool } from '../../../src/lib/query-pool.ts'
import { settled } from '../../support/settled.ts'
import { testApp } from '../../support/app.ts'
import { requestOf, runCase, worstCases, type WorstCase } from './worst.ts'

setDefaultTimeout(120_000)

type Opened = { service: PostalService; pool: QueryPool }

/** Ordinary queries (a few hundred rows at most) beside the worst inputs the schemas accept. */
const ORDINARY: WorstCase[] = [
  { name: 'search US q=beverly', kind: 'search', country: 'US', filters: { q: 'beverly' }, page: { limit: 50, offset: 0 }, narrow: 'q' },
  {
    name: 'search DE prefix=80',
    kind: 'search',
    country: 'DE',
    filters: { prefix: '80' },
    page: { limit: 20, offset: 5 },
    narrow: 'prefix',
  },
  {
    name: 'nearby US 5 km',
    kind: 'nearby',
    country: 'US',
    at: { lat: 34.09, lng: -118.41, radius_km: 5 },
    page: { limit: 10, offset: 0 },
    narrow: 'radius_km',
  },
  {
    name: 'within US Beverly Hills',
    kind: 'within',
    country: 'US',
    geometry: {
      type: 'Polygon',
      coordinates: [
        [
          [-118.42, 34.06],
          [-118.38, 34.06],
          [-118.38, 34.1],
          [-118.42, 34.1],
          [-118.42, 34.06],
        ],
      ],
    },
    page: { limit: 10, offset: 0 },
    narrow: 'geometry',
  },
]
const CASES = [...ORDINARY, ...worstCases(200)]

const argsOf = (c: WorstCase) => [c.country, c.kind === 'search' ? c.filters : c.kind === 'nearby' ? c.at : c.geometry, c.page]

describe('postal queries on the loop and on a worker', () => {
  const opened = testApp({ domains: [postal] })
  afterAll(async () => (await opened).close())

  test('every query answers the same on the event loop under the whole budget and on a query worker (values and 422s)', async () => {
    const app = await opened
    const { service, pool } = app.opened<Opened>('postal')
    const outcomes = { value: 0, problem: 0 }
    for (const c of CASES) {
      const inline = await settled(() => runCase(service, c))
      const pooled = await settled(() => pool.run(c.kind, argsOf(c)))
      expect(pooled).toEqual(inline)
      outcomes[inline.problem ? 'problem' : 'value']++
    }
    expect(outcomes.value).toBeGreaterThan(4)
    expect(outcomes.problem).toBeGreaterThan(4)
  })

  test('a query within INLINE_WORK stays on the loop; past it, the HTTP answer comes from a worker and equals the inline one', async () => {
    const app = await opened
    const { service, pool } = app.opened<Opened>('postal')
    const send = (c: WorstCase) => {
      const r = requestOf(c)
      return app.json(r.method, `/api/v1/postal${r.path}`, { body: r.body, form: 'bare' })
    }
    const ran = { inline: 0, pooled: 0 }
    for (const c of CASES) {
      const inline = await settled(() => runCase(service, c))
      const work = service.lastWork
      const before = pool.stats().completed
      const answer = await send(c)
      const onWorker = pool.stats().completed - before
      expect(onWorker).toBe(work > INLINE_WORK ? 1 : 0)
      ran[onWorker ? 'pooled' : 'inline']++
      if (inline.problem) {
        expect(answer.status).toBe(422)
        expect(answer.body.detail).toBe(inline.problem.detail)
        expect(answer.body.reason).toBe('work_budget_exceeded')
      } else {
        const value = inline.value as { total: number; items: { postal_code: string; place_name: string }[] }
        const places = (rows: { postal_code: string; place_name: string }[]) => rows.map((r) => `${r.postal_code} ${r.place_name}`)
        expect(answer.status).toBe(200)
        expect(answer.body.count).toBe(value.total)
        expect(places(answer.body.results)).toEqual(places(value.items))
      }
    }
    expect(ran.inline).toBeGreaterThanOrEqual(ORDINARY.length)
    expect(ran.pooled).toBeGreaterThan(8)
  })

  test('a page a worker presented (as JSON text) is the page the loop presents, in both forms and with fields', async () => {
    const app = await opened
    const { service, pool } = app.opened<Opened>('postal')
    let compared = 0
    for (const c of worstCases(200)) {
      const inline = await settled(() => runCase(service, c))
      if (inline.problem || service.lastWork <= INLINE_WORK) continue
      const { total, items } = inline.value as { total: number; items: PostalRecord[] }
      const r = requestOf(c)
      for (const form of ['enveloped', 'bare'] as const)
        for (const fields of [undefined, 'postal_code,latitude']) {
          const path = `/api/v1/postal${r.path}${fields ? `${r.path.includes('?') ? '&' : '?'}fields=${fields}` : ''}`
          const before = pool.stats().completed
          const answer = await app.json(r.method, path, { body: r.body, form })
          expect(pool.stats().completed - before).toBe(1)
          const presented = items.map((item) => presentRecord(item, form) as Record<string, unknown>)
          const picked = fields ? presented.map((p) => ({ postal_code: p.postal_code, latitude: p.latitude })) : presented
          const body = answer.body
          expect({ case: c.name, form, fields, status: answer.status, total: body.total ?? body.total_count ?? body.count }).toEqual({
            case: c.name,
            form,
            fields,
            status: 200,
            total,
          })
          expect(form === 'enveloped' ? body.data : body.results).toEqual(picked)
          compared++
        }
    }
    expect(compared).toBeGreaterThanOrEqual(16)
  })
})
