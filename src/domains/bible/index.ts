/** Bible: 34 translations in 28 languages, chapters and verses, FTS5 search, verse of the day. */
import { openReadonlySqlite } from '../../data/sqlite.ts'
import { pooledDatabase, queryPoolMetrics, type QueryPool } from '../../lib/query-pool.ts'
import { workerUrl } from '../../lib/threads.ts'
import { defineDomain } from '../types.ts'
import type { BibleWorkerInit } from './bible-worker.ts'
import { SEARCH_BUDGET_MS, SEARCH_INLINE_MS } from './budget.ts'
import { BIBLE_ARTIFACT } from './artifacts.ts'
import { bibleBuilder } from './build.ts'
import { bibleRoutes } from './routes.ts'
import { bibleSettings } from './settings.ts'
import { type BibleService, openBibleService } from './service.ts'
import { bibleSources } from './sources.ts'

export default defineDomain<{ service: BibleService; pool: QueryPool; close(): Promise<void> }>({
  name: 'bible',
  tag: {
    name: 'bible',
    description:
      '34 Bible translations in 28 languages: languages, translations and their books, chapters, verses and passages by reference, ' +
      'full-text search and a verse of the day.',
  },
  prefixes: ['/bible'],
  settings: bibleSettings,
  datasets: ['bible'],
  open: ({ data, config }) => {
    const path = data.path(BIBLE_ARTIFACT)
    const db = openReadonlySqlite(path)
    const service = openBibleService(db, { searchCacheBytes: config.bible.searchCacheBytes })
    // Searches priced over SEARCH_INLINE_MS run here, each worker on its own connection (docs/bible.md).
    const init: BibleWorkerInit = { path, searchBudgetMs: SEARCH_BUDGET_MS }
    const { pool, close } = pooledDatabase(db, config.queries, {
      url: workerUrl(new URL('./bible-worker.ts', import.meta.url), 'bible/bible-worker'),
      init,
      what: 'Bible search',
    })
    service.offload = { pool, inlineMs: SEARCH_INLINE_MS }
    return { service, pool, close }
  },
  routes: ({ service, config }) => bibleRoutes(service.service, config),
  metrics: (opened) => queryPoolMetrics('bible', opened.pool.stats()),
  close: (opened) => opened.close(),
  builders: [bibleBuilder],
  sources: bibleSources,
  docs: 'docs/bible.md',
  probes: 'test/domains/bible/probes.ts',
})
