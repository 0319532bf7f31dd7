/**
 * Where a search runs (docs/bible.md, "Where a search runs"): priced under SEARCH_INLINE_MS on the event
 * loop, over it on a query worker with its own connection, over the budget a 422 before either. The same
 * answer either way; a full queue or a caller at its cap is a 503 with Retry-After that costs no credit;
 * closing the domain ends its workers once their searches are answered. The pool's counters say where
 * each search ran; nothing here is timed.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { openDataDir } from '../../../src/data/open.ts'
import { SEARCH_INLINE_MS } from '../../../src/domains/bible/budget.ts'
import bible from '../../../src/domains/bible/index.ts'
import type { BibleService, SearchSort } from '../../../src/domains/bible/service.ts'
import { createLogger } from '../../../src/lib/logger.ts'
import type { QueryPool } from '../../../src/lib/query-pool.ts'
import { settled } from '../../support/settled.ts'
import { testApp, testConfig } from '../../support/app.ts'

type Opened = { service: BibleService; pool: QueryPool; close(): Promise<void> }
type Search = [q: string, ids: string[] | undefined, sort: SearchSort, page: { limit: number; offset: number }]

/** Real searches, cheap and costly, both sorts, deep pages, and ones over the budget. */
const SEARCHES: Search[] = [
  ['jehoshaphat', ['kjv'], 'relevance', { limit: 20, offset: 0 }],
  ['love', undefined, 'relevance', { limit: 50, offset: 10 }],
  ['the', ['kjv'], 'relevance', { limit: 20, offset: 0 }],
  ['the', ['kjv'], 'canonical', { limit: 100, offset: 2000 }],
  ['the', undefined, 'canonical', { limit: 50, offset: 30000 }],
  ['"in the beginning"', undefined, 'relevance', { limit: 100, offset: 0 }],
  ['lov*', ['kjv', 'web'], 'relevance', { limit: 20, offset: 5 }],
  ['faith hope', undefined, 'canonical', { limit: 20, offset: 0 }],
  ['and the', undefined, 'relevance', { limit: 20, offset: 0 }],
  [Array(16).fill('the*').join(' '), undefined, 'relevance', { limit: 20, offset: 0 }],
]

describe('one app, default pool', () => {
  const opened = testApp({ domains: [bible] })
  afterAll(async () => (await opened).close())

  test('every search answers the same on the event loop and on a query worker (values and 422s)', async () => {
    const app = await opened
    const { service, pool } = app.opened<Opened>('bible')
    let problems = 0
    for (const [q, ids, sort, page] of SEARCHES) {
      const inline = await settled(() => service.search(q, ids, sort, page))
      const pooled = await settled(() => pool.run('search', [q, ids, sort, page, 'translations']))
      expect(pooled).toEqual(inline)
      if (inline.problem) problems++
    }
    expect(problems).toBeGreaterThan(0)
    expect(problems).toBeLessThan(SEARCHES.length)
  })

  test('the price routes: under the inline threshold on the loop, over it on a worker, over the budget a 422 from neither', async () => {
    const app = await opened
    const { service, pool } = app.opened<Opened>('bible')
    const search = (q: string, translation?: string) =>
      app.json('GET', `/api/v1/bible/search?q=${encodeURIComponent(q)}${translation ? `&translation=${translation}` : ''}`, {
        form: 'bare',
      })

    const cheap = service.search('jehoshaphat', ['kjv'], 'relevance', { limit: 20, offset: 0 })
    expect(cheap.estimatedMs).toBeLessThan(SEARCH_INLINE_MS)
    let before = pool.stats().completed
    const inline = await search('jehoshaphat', 'kjv')
    expect(inline.status).toBe(200)
    expect(inline.body.count).toBe(cheap.total)
    expect(pool.stats().completed).toBe(before)

    // Two common words: ranked live over their shared verses (one common word reads its stored ranking).
    const costly = service.search('the lord', undefined, 'relevance', { limit: 20, offset: 0 })
    expect(costly.estimatedMs).toBeGreaterThan(SEARCH_INLINE_MS)
    before = pool.stats().completed
    const pooled = await search('the lord')
    expect(pooled.status).toBe(200)
    expect(pooled.body.count).toBe(costly.total)
    expect(pooled.body.results.map((h: { reference: string }) => h.reference)).toEqual(costly.hits.map((h) => h.reference))
    expect(pool.stats().completed).toBe(before + 1)

    const stats = pool.stats()
    const refused = await search(Array(16).fill('the*').join(' '))
    expect(refused.status).toBe(422)
    expect(refused.body.reason).toBe('search_over_budget')
    expect(pool.stats()).toMatchObject({ completed: stats.completed, refused: stats.refused })
  })
})

describe('a full queue and a caller at its cap', () => {
  const A = 'offload-key-a-0123456789'
  const B = 'offload-key-b-0123456789'
  const opened = testApp({
    domains: [bible],
    env: {
      ALMANAC_API_KEYS: `${A}:small,${B}:small`,
      ALMANAC_PLANS: 'small:100/1d',
      ALMANAC_DEFAULT_PLAN: 'small',
      ALMANAC_QUERY_WORKERS: '1',
      ALMANAC_QUERY_QUEUE: '1',
      ALMANAC_QUERY_JOBS_PER_CALLER: '2',
    },
  })
  afterAll(async () => (await opened).close())

  test('are refused at once with 503 + Retry-After, spending no credit; the held searches are answered', async () => {
    const app = await opened
    const { pool } = app.opened<Opened>('bible')
    const costly = (key: string) => app.json('GET', '/api/v1/bible/search?q=the%20lord&translation=kjv', { key, form: 'bare' })
    /** Waits until the pool has taken the search just sent (no timing: it only polls the counters). */
    const taken = async (running: number, queued: number) => {
      while (pool.stats().running !== running || pool.stats().queued !== queued) await Bun.sleep(1)
    }
    const release = pool.hold()
    const first = costly(A)
    await taken(1, 0)
    const second = costly(A)
    await taken(1, 1)

    const overCap = await costly(A)
    expect(overCap.status).toBe(503)
    expect(overCap.headers.get('retry-after')).toBe('1')
    expect(overCap.body.type).toBe('urn:almanac:problem:busy')
    expect(overCap.body.detail).toContain('queries.jobsPerCaller')
    expect(overCap.headers.get('x-quota-remaining')).toBe('98')

    const queueFull = await costly(B)
    expect(queueFull.status).toBe(503)
    expect(queueFull.headers.get('retry-after')).toBe('1')
    expect(queueFull.body.detail).toContain('the queue holds 1')
    expect(queueFull.headers.get('x-quota-remaining')).toBe('100')
    expect(pool.stats().refused).toBe(2)

    release()
    const answered = await Promise.all([first, second])
    expect(answered.map((r) => r.status)).toEqual([200, 200])
    expect(answered.map((r) => r.headers.get('x-quota-remaining')).sort()).toEqual(['98', '99'])
    const later = await costly(B)
    expect(later.status).toBe(200)
    expect(later.headers.get('x-quota-remaining')).toBe('99')
  })
})

test('closing the domain ends its workers once their searches are answered', async () => {
  const config = testConfig({ ALMANAC_QUERY_WORKERS: '2' })
  const o = (await bible.open({ config, data: openDataDir(config.dataDir), log: createLogger() })) as Opened
  const page = { limit: 20, offset: 0 }
  await Promise.all([
    o.service.searchAnywhere('the lord', ['kjv'], 'relevance', page, 'translations'),
    o.pool.run('search', ['the lord', ['web'], 'relevance', page]),
  ])
  expect(o.pool.stats().workers).toBe(2)
  const release = o.pool.hold()
  const order: string[] = []
  const running = Promise.resolve(o.service.searchAnywhere('the', undefined, 'canonical', page, 'translations')).then((answer) => {
    order.push('answered')
    return answer
  })
  const closing = Promise.resolve(bible.close!(o)).then(() => order.push('closed'))
  release()
  expect((await running).total).toBeGreaterThan(100_000)
  await closing
  // Closing waited for the search it had running (held until then), and answered it rather than failing it.
  expect(order).toEqual(['answered', 'closed'])
  expect(o.pool.stats().workers).toBe(0)
})
