/**
 * A real server on a loopback port over the real app (the sample domain by default), for tests that need
 * a socket: the browser, body limits enforced by Bun.serve, fuzzing with raw bytes.
 */
import type { Server } from 'bun'
import type { Config } from '../../src/config.ts'
import { openDataDir } from '../../src/data/open.ts'
import type { Domain } from '../../src/domains/types.ts'
import { createAuthenticator } from '../../src/http/admission/auth.ts'
import { serverBodyCeiling } from '../../src/http/admission/request-guards.ts'
import { createObservability } from '../../src/http/edge/observability.ts'
import { liveApp } from '../../src/refresh.ts'
import { createUsageMeter } from '../../src/http/edge/usage-meter.ts'
import { memoryUsageStore } from '../../src/stores/usage.ts'
import { openDomains } from '../../src/domains/mount.ts'
import { memoryQuotaStore, type QuotaStore } from '../../src/stores/quota.ts'
import { testConfig } from '../support/app.ts'
import { sampleDomain } from '../support/sample-domain.ts'

export interface LiveServer {
  url: string
  port: number
  config: Config
  server: Server<unknown>
  /** Access-log lines written so far (when the config enables the log). */
  log: string[]
  stop(): Promise<void>
}

/**
 * The data dir is `config.dataDir` (pass `config: { dataDir }` for another). The quota store is a memory one
 * that stop() closes, unless `quota` is given: that one stays the caller's to close.
 */
export async function liveServer(
  options: { env?: Record<string, string>; config?: Partial<Config>; domains?: Domain[]; quota?: QuotaStore } = {},
): Promise<LiveServer> {
  const config = testConfig(options.env, options.config)
  const data = openDataDir(config.dataDir)
  const domains = options.domains ?? [sampleDomain()]
  const mounted = await openDomains(config, data, domains, () => {})
  const quota = options.quota ?? memoryQuotaStore()
  const log: string[] = []
  // The ledger is on, as in serve.ts, in this process's memory.
  const usage = createUsageMeter(memoryUsageStore(), { intervalMs: 3_600_000 })
  const observability = createObservability(config, { write: (line) => log.push(line), usage })
  // Served as serve.ts serves: through a LiveApp, which also collects the datasets' and domains' metrics.
  const authenticator = createAuthenticator(config)
  const live = liveApp(config, { domains, authenticator, quota, usage, observability, log: () => {} }, data, mounted)
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: (req) => live.handle(req),
    maxRequestBodySize: serverBodyCeiling(config.bodyLimit),
    development: false,
  })
  live.attach(server)
  return {
    url: `http://127.0.0.1:${server.port}`,
    port: server.port!,
    config,
    server,
    log,
    async stop() {
      await server.stop(true)
      await usage.close()
      if (!options.quota) await quota.close()
    },
  }
}
