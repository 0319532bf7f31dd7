/**
 * Starts the HTTP server: config -> datasets -> domains -> app -> listen, and stops gracefully on SIGTERM.
 */
import type { Server } from 'bun'
import type { Config } from './config.ts'
import { resolveDataDir } from './data/open.ts'
import { domains as allDomains } from './domains/index.ts'
import { createAuthenticator } from './http/auth.ts'
import { createApp, openDomains } from './server.ts'
import { memoryQuotaStore } from './stores/quota.ts'

export interface Running {
  server: Server<unknown>
  url: string
  stop(): Promise<void>
}

export async function serve(config: Config, log: (line: string) => void = (l) => console.error(l)): Promise<Running> {
  const data = await resolveDataDir({ dataDir: config.dataDir }, log)
  const mounted = await openDomains(config, data, allDomains, log)
  const quota = memoryQuotaStore()
  const app = createApp(config, { data, domains: allDomains, authenticator: createAuthenticator(config), quota, log }, mounted)
  const server = Bun.serve({ port: config.port, hostname: config.host, fetch: (req) => app.handle(req), maxRequestBodySize: config.bodyLimit })
  // Handlers read the TCP peer through Elysia's `server` (server.requestIP); app.handle alone leaves it null.
  ;(app as unknown as { server: unknown }).server = server
  const url = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${server.port}`
  log(JSON.stringify({ level: 'info', msg: 'listening', url }))
  return {
    server,
    url,
    async stop() {
      await server.stop(false)
      for (const m of mounted) if (m.service !== undefined) await m.domain.close?.(m.service)
      await quota.close()
    },
  }
}
