/** Postal codes: GeoNames records with formats, lookup, search, radius and polygon queries. */
import { openReadonlySqlite } from '../../data/sqlite.ts'
import { pooledDatabase, queryPoolMetrics, type QueryPool } from '../../lib/query-pool.ts'
import { workerUrl } from '../../lib/threads.ts'
import { defineDomain } from '../types.ts'
import { postalSettings } from './settings.ts'
import { POSTAL_ARTIFACT, postalBuilder } from './build.ts'
import type { PostalWorkerInit } from './postal-worker.ts'
import { postalRoutes } from './routes.ts'
import { INLINE_WORK, type PostalService, openPostalService } from './service.ts'
import { postalSources } from './sources.ts'

export default defineDomain<{ service: PostalService; pool: QueryPool; close(): Promise<void> }>({
  name: 'postal',
  tag: {
    name: 'postal',
    description:
      'Postal code systems (formats, regular expressions) and postal code records: lookup, search, radius and polygon queries, ' +
      'validation. From GeoNames.',
  },
  settings: postalSettings,
  prefixes: ['/postal'],
  datasets: ['postal'],
  open: ({ data, config }) => {
    const path = data.path(POSTAL_ARTIFACT)
    const db = openReadonlySqlite(path)
    const service = openPostalService(db, {}, config.postal.workBudget)
    // Queries whose inline budget runs out run again here, each worker on its own connection (docs/postal.md).
    const init: PostalWorkerInit = { path, workBudget: config.postal.workBudget }
    const { pool, close } = pooledDatabase(db, config.queries, {
      url: workerUrl(new URL('./postal-worker.ts', import.meta.url), 'postal/postal-worker'),
      init,
      what: 'postal query',
    })
    service.offload = { pool, inlineWork: INLINE_WORK }
    return { service, pool, close }
  },
  routes: ({ service, config }) => postalRoutes(service.service, config),
  metrics: (opened) => queryPoolMetrics('postal', opened.pool.stats()),
  close: (opened) => opened.close(),
  builders: [postalBuilder],
  sources: postalSources,
  docs: 'docs/postal.md',
  probes: 'test/domains/postal/probes.ts',
})
