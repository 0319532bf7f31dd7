/**
 * Hashing (SPEC "Hashing"): digests and password hashes. No dataset; `open` sets up the KDF worker pool
 * (threads start on first use) and `close` stops it.
 */
import { availableParallelism } from 'node:os'
import { defineDomain } from '../types.ts'
import { createKdfPool } from './pool.ts'
import { hashRoutes } from './routes.ts'
import { createHashService, type HashService } from './service.ts'
import { hashSources } from './sources.ts'

export default defineDomain<HashService>({
  name: 'hash',
  prefixes: ['/hash'],
  datasets: [],
  open: ({ config }) => {
    const size = config.hash.workers || availableParallelism()
    return createHashService(config.hash, createKdfPool({ size, queueSize: config.hash.queueSize, perOwner: config.hash.jobsPerCaller }))
  },
  routes: ({ service, config }) => hashRoutes(service, config),
  close: (service) => service.pool.close(),
  sources: hashSources,
  docs: 'docs/hash.md',
})
