/**
 * The operator surface as the app mounts it: the operator API, its OpenAPI document and the console when
 * ALMANAC_ADMIN_TOKENS names a credential; otherwise a 404 under /admin and /console that says how to turn
 * them on (a silent 404 would leave an operator guessing).
 */
import { Elysia } from 'elysia'
import type { Config } from '../config.ts'
import type { StaleAfterDays } from '../data/freshness.ts'
import type { DataDir } from '../data/types.ts'
import type { MountedDomain } from '../domains/types.ts'
import { datasetInfos } from '../http/endpoints/meta.ts'
import type { UsageMeter } from '../http/edge/usage-meter.ts'
import { notFound } from '../lib/errors.ts'
import type { KeyStore } from '../stores/keys.ts'
import { consoleRoutes } from './console.ts'
import { adminDocument, adminDocumentRoute } from './openapi.ts'
import { adminRoutes } from './routes.ts'

const OFF =
  'The operator API and console are off on this server: set ALMANAC_ADMIN_TOKENS (name:token, a token of 32+ characters) ' +
  'to turn them on (docs/admin.md).'

export function operatorRoutes(
  config: Config,
  deps: { data: DataDir; keys?: KeyStore; usage?: UsageMeter },
  app: { mounted: MountedDomain[]; limits: StaleAfterDays; clock: () => number; metrics: () => string },
) {
  if (!config.adminTokens.length)
    return new Elysia({ name: 'almanac:admin-off' })
      .all(
        '/admin/*',
        () => {
          throw notFound(OFF)
        },
        { detail: { hide: true } },
      )
      .get(
        '/console',
        () => {
          throw notFound(OFF)
        },
        { detail: { hide: true } },
      )
  const admin = adminRoutes(config, {
    keys: deps.keys,
    usage: deps.usage,
    datasets: () => datasetInfos(deps.data, app.mounted, app.limits, app.clock()),
    metrics: app.metrics,
    domains: app.mounted.map((m) => m.domain.name),
    clock: app.clock,
  })
  let document: Record<string, unknown> | undefined
  return new Elysia({ name: 'almanac:operator' })
    .use(admin)
    .use(adminDocumentRoute(() => (document ??= adminDocument(admin))))
    .use(consoleRoutes())
}
