/**
 * The OpenAPI document of this source tree with the default settings, made in-process from the built
 * datasets (`bun run data`) without a server: what `generate.ts` turns into client types.
 */
import { loadConfig } from '../../src/config.ts'
import { openDataDir } from '../../src/data/open.ts'
import { domains } from '../../src/domains/index.ts'
import { createAuthenticator } from '../../src/http/admission/auth.ts'
import { OPENAPI_PATH } from '../../src/http/endpoints/openapi.ts'
import { openDomains } from '../../src/domains/mount.ts'
import { createApp } from '../../src/server.ts'
import { memoryQuotaStore } from '../../src/stores/quota.ts'

export async function openApiDocument(): Promise<Record<string, unknown>> {
  // Defaults only (no ALMANAC_* from the environment): the document, and so the types, do not depend on who runs this.
  const config = loadConfig({ env: { ALMANAC_ACCESS_LOG: 'false' } })
  const data = openDataDir()
  const mounted = await openDomains(config, data, domains, () => {})
  const quota = memoryQuotaStore()
  try {
    const app = createApp(config, { data, domains, authenticator: createAuthenticator(config), quota, log: () => {} }, mounted)
    const res = await app.handle(new Request(`http://localhost${OPENAPI_PATH}`))
    if (res.status !== 200) throw new Error(`${OPENAPI_PATH} answered ${res.status}`)
    return (await res.json()) as Record<string, unknown>
  } finally {
    for (const m of mounted) if (m.service !== undefined) await m.domain.close?.(m.service)
    await quota.close()
  }
}
