/** Postal codes: GeoNames records with formats, lookup, search, radius and polygon queries. */
import { openReadonlySqlite } from '../../data/sqlite.ts'
import { defineDomain } from '../types.ts'
import { POSTAL_ARTIFACT, postalBuilder } from './build.ts'
import { postalRoutes } from './routes.ts'
import { PostalService } from './service.ts'
import { postalSources } from './sources.ts'

export default defineDomain<{ service: PostalService; close(): void }>({
  name: 'postal',
  prefixes: ['/postal'],
  datasets: ['postal'],
  open: ({ data, config }) => {
    const db = openReadonlySqlite(data.path(POSTAL_ARTIFACT))
    return { service: new PostalService(db, {}, config.postal.workBudget), close: () => db.close() }
  },
  routes: ({ service, config }) => postalRoutes(service.service, config),
  close: (opened) => opened.close(),
  builders: [postalBuilder],
  sources: postalSources,
  docs: 'docs/postal.md',
})
