/**
 * A real app over the real built datasets (`datasets/out`), driven through `app.handle` — no port, no
 * stubs. Tests choose the form per request with `X-Response-Form`, or per app with `responseForm`.
 */
import { loadConfig, type Config } from '../../src/config.ts'
import { openDataDir } from '../../src/data/open.ts'
import { domains as allDomains } from '../../src/domains/index.ts'
import type { Domain } from '../../src/domains/types.ts'
import { createAuthenticator } from '../../src/http/admission/auth.ts'
import { createObservability } from '../../src/http/edge/observability.ts'
import { liveApp } from '../../src/refresh.ts'
import { openDomains } from '../../src/domains/mount.ts'
import { createQuotaStore } from '../../src/stores/index.ts'
import { openKeyStore } from '../../src/stores/keys.ts'
import type { QuotaStore } from '../../src/stores/quota.ts'
import { createUsageMeter, type UsageMeter } from '../../src/http/edge/usage-meter.ts'
import { memoryUsageStore } from '../../src/stores/usage.ts'

export const TEST_KEY = 'test-key-0123456789'

/** The tests' config: TEST_KEY on a plan that never runs out, access log off; `env` and `overrides` on top. */
export const testConfig = (env: Record<string, string> = {}, overrides: Partial<Config> = {}): Config =>
  loadConfig(
    {
      env: {
        ALMANAC_API_KEYS: `${TEST_KEY}:test`,
        ALMANAC_PLANS: 'test:1000000/1d',
        ALMANAC_DEFAULT_PLAN: 'test',
        ALMANAC_ACCESS_LOG: 'false',
        // Counters of this run only (the default, sqlite, would keep them in the checkout's state dir across runs).
        ALMANAC_QUOTA_STORE: 'memory',
        ...env,
      },
    },
    overrides,
  )

export interface TestApp {
  config: Config
  /** Sends a request; `body` objects are sent as JSON; the API key is added unless `headers` has auth. */
  request(
    method: string,
    path: string,
    init?: { body?: unknown; headers?: Record<string, string>; form?: 'enveloped' | 'bare'; key?: string | null },
  ): Promise<Response>
  /** `request` + parsed JSON body. */
  json<T = any>(
    method: string,
    path: string,
    init?: Parameters<TestApp['request']>[2],
  ): Promise<{ status: number; body: T; headers: Headers }>
  /** The app's own handler, for requests a test builds itself (streamed bodies, raw headers). */
  handle(request: Request): Promise<Response>
  /** What a domain's `open` returned (its service, pools), by domain name. */
  opened<S = any>(domain: string): S
  close(): Promise<void>
}

export async function testApp(
  /**
   * `quota`: a store the test made (and closes itself), else the one `ALMANAC_QUOTA_STORE` names.
   * The key database under the state dir is opened only when the test names a state dir. `clock` fixes
   * the time quota windows are counted in. `log` receives the app's and the domains' log lines (default:
   * none from opening the domains, the rest to stderr).
   */
  options: {
    env?: Record<string, string>
    config?: Partial<Config>
    domains?: Domain[]
    quota?: QuotaStore
    /** The usage ledger's meter (the test makes it over a store it chose, and closes both). */
    usage?: UsageMeter
    clock?: () => number
    log?: (line: string) => void
  } = {},
): Promise<TestApp> {
  const config = testConfig(options.env, options.config)
  const data = openDataDir(config.dataDir)
  const domains = options.domains ?? allDomains
  const mounted = await openDomains(config, data, domains, options.log ?? (() => {}))
  const quota = options.quota ?? createQuotaStore(config)
  // The ledger is on by default, as in serve.ts: in this process's memory unless the test brings its own.
  const usage = options.usage ?? createUsageMeter(memoryUsageStore(), { intervalMs: 3_600_000 })
  const keys = options.env?.ALMANAC_STATE_DIR || options.config?.stateDir ? openKeyStore(config.stateDir) : undefined
  // Served as serve.ts serves: through a LiveApp, which also collects the datasets' and domains' metrics.
  const app = liveApp(
    config,
    {
      domains,
      authenticator: createAuthenticator(config, { keys }),
      quota,
      keys,
      usage,
      clock: options.clock,
      log: options.log,
      observability: createObservability(config, { usage }),
    },
    data,
    mounted,
  )
  const request: TestApp['request'] = (method, path, init = {}) => {
    const headers: Record<string, string> = { ...init.headers }
    if (init.key !== null && !headers.authorization && !headers['x-api-key']) headers['x-api-key'] = init.key ?? TEST_KEY
    if (init.form) headers['x-response-form'] = init.form
    let body: string | undefined
    if (init.body !== undefined) {
      body = typeof init.body === 'string' ? init.body : JSON.stringify(init.body)
      headers['content-type'] ??= 'application/json'
    }
    return Promise.resolve(app.handle(new Request(`http://localhost${path}`, { method, headers, body })))
  }
  return {
    config,
    request,
    handle: async (r) => app.handle(r),
    opened: (name) => mounted.find((m) => m.domain.name === name)!.service as any,
    async json(method, path, init) {
      const res = await request(method, path, init)
      const text = await res.text()
      let body: any
      try {
        body = JSON.parse(text)
      } catch {
        throw new Error(`${method} ${path}: response is not JSON (${res.status}): ${text.slice(0, 200)}`)
      }
      return { status: res.status, body, headers: res.headers }
    },
    async close() {
      for (const m of mounted) if (m.service !== undefined) await m.domain.close?.(m.service)
      if (!options.quota) await quota.close()
      if (!options.usage) await usage.close()
      keys?.close()
    },
  }
}

/** The problem in an answer's body: the body itself in Form B, its `error` member in Form A. */
export const problemIn = (body: any, form: 'enveloped' | 'bare') => (form === 'bare' ? body : body.error)
