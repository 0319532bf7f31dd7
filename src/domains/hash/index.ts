/**
 * Hashing (SPEC "Hashing"): digests and password hashes. No dataset; `open` sets up the KDF worker pool
 * (threads start on first use) under the hashing memory budget, and `close` stops it.
 */
import { availableParallelism } from 'node:os'
import { defineDomain } from '../types.ts'
import { hashSettings } from './settings.ts'
import { callerShare, memoryBudget } from './budget.ts'
import { createKdfPool, poolMetrics } from './pool.ts'
import { hashRoutes } from './routes.ts'
import { openHashService, type HashService } from './service.ts'
import { hashSources } from './sources.ts'

export default defineDomain<HashService>({
  name: 'hash',
  tag: {
    name: 'hash',
    description: 'Digests (md5, sha1, sha256, sha512) and password hashes (bcrypt, scrypt, argon2id) of a UTF-8 input.',
  },
  settings: hashSettings,
  prefixes: ['/hash'],
  datasets: [],
  open: ({ config, log }) => {
    const size = config.hash.workers || availableParallelism()
    const limits = { ...config.hash, memoryBudgetBytes: memoryBudget(config.hash.memoryBudgetBytes, config.workers) }
    const pool = createKdfPool({
      size,
      queueSize: config.hash.queueSize,
      perOwner: config.hash.jobsPerCaller,
      memoryBudget: limits.memoryBudgetBytes,
      memoryPerOwner: callerShare(limits.memoryBudgetBytes),
      log,
    })
    return openHashService(limits, pool)
  },
  routes: ({ service, config }) => hashRoutes(service, config),
  close: (service) => service.pool.close(),
  metrics: (service) => poolMetrics(service.pool.stats()),
  sources: hashSources,
  docs: 'docs/hash.md',
  probes: 'test/domains/hash/probes.ts',
})
