/**
 * Starts the HTTP server: config -> datasets -> domains -> app -> listen, and stops gracefully on SIGTERM.
 */
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Server } from 'bun'
import type { Extraction } from './data/extract.ts'
import { artifactsOf, openServedData, reloadDir } from './data/open.ts'
import type { DataDir } from './data/types.ts'
import type { Domain } from './domains/types.ts'
import { domains as allDomains } from './domains/index.ts'
import { startTogether } from './http/edge/arrivals.ts'
import { createAuthenticator } from './http/admission/auth.ts'
import { serverBodyCeiling } from './http/admission/request-guards.ts'
import { createObservability } from './http/edge/observability.ts'
import { createUsageMeter } from './http/edge/usage-meter.ts'
import type { Config } from './config.ts'
import { type LiveApp, liveApp } from './refresh.ts'
import { openDomain, openDomains, verifyDatasets, warmUp } from './domains/mount.ts'
import type { MountedDomain } from './domains/types.ts'
import { createKeyStore, createQuotaStore, createUsageStore } from './stores/index.ts'
import { openKeyStore, type KeyStore, type StoredKey } from './stores/keys.ts'
import { StateError } from './stores/sqlite.ts'
import { logger, asLogger, type LogSink } from './lib/logger.ts'

export interface Running {
  server: Server<unknown>
  url: string
  /**
   * /readyz turns 503 at once; the listener keeps accepting and answering for `delaySeconds` (orchestrators
   * take a moment to stop routing here, and connections already queued by the kernel must not be refused),
   * then closes, and in-flight requests get up to the grace period. `almanac serve` passes the configured
   * delay on SIGTERM; in-process callers stop at once.
   */
  stop(delaySeconds?: number): Promise<void>
}

export interface ServeOptions {
  /** Share the port with sibling worker processes (SO_REUSEPORT); set by the `--workers` supervisor. */
  reusePort?: boolean
}

export async function serve(config: Config, sink: LogSink = logger, options: ServeOptions = {}): Promise<Running> {
  const log = asLogger(sink)
  // The state dir first: an unwritable one stops the start at once, before datasets are opened.
  const keys = openKeys(config, log)
  // Workers start as sharers of the SQLite counters rather than each first taking them alone.
  const quota = createQuotaStore(config, log, { shared: options.reusePort })
  // A directory chosen by `almanac data activate` outlives restarts (data/open.ts dataSource: the one rule).
  const { data, extraction } = await openServedData({ dataDir: config.dataDir, stateDir: config.stateDir }, log)
  // First start of the executable: listen at once, every domain "opening" (503 with Retry-After) until its
  // own artifacts are extracted and it has opened; otherwise every domain opens before the server listens.
  const mounted: MountedDomain[] = extraction
    ? allDomains.map((domain): MountedDomain => ({ state: 'opening', domain }))
    : await openDomains(config, data, allDomains, log)
  if (options.reusePort && config.stores.quota.kind === 'memory')
    log({
      level: 'warn',
      msg:
        'quota store is memory: each worker counts its own credits; use ALMANAC_QUOTA_STORE=sqlite (the default) ' +
        'or a redis:// URL to share them',
    })
  const usage = config.usageLedger
    ? createUsageMeter(createUsageStore(config, log), { retentionDays: config.usageRetentionDays, log })
    : undefined
  const observability = createObservability(config, { usage })
  const authenticator = createAuthenticator(config, { keys, log })
  // A server that can accept no one would otherwise start silently and answer 401 to everything.
  const unconfigured = await authenticator.unconfigured?.()
  if (unconfigured) log({ level: 'warn', msg: unconfigured })
  // Nor would keys on a plan this server does not offer: each of their calls would be a 403.
  for (const w of (await authenticator.unknownPlans?.()) ?? []) log({ level: 'warn', msg: w.problem })
  let stopping = false
  const live = liveApp(
    config,
    {
      domains: allDomains,
      authenticator,
      quota,
      usage,
      keys,
      log,
      observability,
      stopping: () => stopping,
    },
    data,
    mounted,
  )
  const handle = (req: Request) => live.handle(req)
  const server = Bun.serve({
    port: config.port,
    hostname: config.host,
    fetch: config.startTogether ? startTogether(handle) : handle,
    // The app answers bodies over config.bodyLimit with a 413 problem; Bun's ceiling is only a backstop.
    maxRequestBodySize: serverBodyCeiling(config.bodyLimit),
    reusePort: options.reusePort ?? false,
    development: false,
  })
  // Handlers read the TCP peer through Elysia's `server` (server.requestIP); app.handle alone leaves it null.
  live.attach(server)
  const url = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${server.port}`
  // `address` is what the socket is bound to (port 0 becomes the port the system chose); `url` is where a local client reaches it.
  log({
    time: new Date().toISOString(),
    level: 'info',
    msg: 'listening',
    url,
    address: `${server.hostname}:${server.port}`,
    pid: process.pid,
  })
  const opened = extraction ? openWhileExtracting(config, data, extraction, live, log) : Promise.resolve(mounted)
  // Sizes, and the hashes of small artifacts, were checked before opening; the large ones are hashed while
  // serving, except those the extraction has just hashed as it wrote them.
  opened
    .then((all) => {
      // The domains' one-off first-use work, in steps, now that the server listens (mount.ts warmUp).
      warmUp(all, log)
      return verifyDatasets(config, data, all, log, extraction?.verified)
    })
    .catch((e) => log({ level: 'error', msg: 'dataset integrity check failed to run', error: String(e) }))
  // SIGHUP (systemctl reload, `almanac data activate | rollback`): serve the directory the start would
  // choose now (data/open.ts dataSource), else the current one read again (the operator replaced its
  // files). A refusal is logged.
  const reload = () => {
    reloadDir({ dataDir: config.dataDir, stateDir: config.stateDir }, log)
      .then((dir) => live.activate(dir ?? live.current.data.dir))
      .catch((e) => log({ level: 'error', msg: 'data activation failed', error: String(e) }))
  }
  process.on('SIGHUP', reload)
  // `almanac data activate` signals the pid in this file (under --workers the supervisor writes it).
  if (!options.reusePort) writePid(config.stateDir, log)
  return {
    server,
    url,
    async stop(delaySeconds = 0) {
      stopping = true
      process.off('SIGHUP', reload)
      if (delaySeconds > 0) await Bun.sleep(delaySeconds * 1000)
      // Stop accepting; let in-flight requests finish for up to the grace period, then cut them off.
      const drained = server.stop(false).then(() => true)
      const grace = Bun.sleep(config.shutdownGraceSeconds * 1000).then(() => false)
      if (!(await Promise.race([drained, grace]))) {
        log({ level: 'warn', msg: `in-flight requests still running after ${config.shutdownGraceSeconds}s; closing them` })
        await server.stop(true)
      }
      observability.flush()
      // Every request is answered: what the ledger still holds is written before the stores close.
      await usage?.close()
      await live.close()
      await quota.close()
      keys.close()
    },
  }
}

/**
 * First start: each domain opens as soon as its own artifacts are extracted and is swapped into the app
 * at once (the others keep answering 503 "opening"). Logs when each became ready, from the start.
 */
async function openWhileExtracting(
  config: Config,
  data: DataDir,
  extraction: Extraction,
  live: LiveApp,
  sink: LogSink,
): Promise<MountedDomain[]> {
  const log = asLogger(sink)
  const ready = (domain: Domain) => Promise.all(artifactsOf(data, domain.datasets).map((name) => extraction.artifact(name))).then(() => {})
  const seconds = () => Number((performance.now() / 1000).toFixed(2))
  const all = await Promise.all(
    allDomains.map(async (domain) => {
      const m = await openDomain(config, data, domain, log, { verified: extraction.verified, ready })
      live.remount(m)
      if (!m.problem) log({ level: 'info', msg: `The ${domain.name} domain is open`, seconds_since_start: seconds() })
      return m
    }),
  )
  // The folder is finished (manifest written) before the start is said to be complete.
  await extraction.done.catch(() => {})
  log({ level: 'info', msg: 'every domain has opened', seconds_since_start: seconds() })
  return all
}

/**
 * With the quota store on Redis and ALMANAC_KEY_STORE unset, keys are read from Redis. A server upgraded
 * from when keys always lived in the state dir would refuse them all without a word: say so, with a count.
 */
function warnUnusedSqliteKeys(config: Config, sink: LogSink) {
  const log = asLogger(sink)
  let active = 0
  if (existsSync(join(config.stateDir, 'keys.sqlite'))) {
    try {
      const old = openKeyStore(config.stateDir)
      active = (old.list() as StoredKey[]).filter((k) => !k.revoked).length
      old.close()
    } catch {
      // Unreadable: nothing to count; the line below still says where keys are read from.
    }
  }
  const why = "set ALMANAC_KEY_STORE=sqlite to keep using the state dir's keys.sqlite"
  log(
    active
      ? {
          level: 'warn',
          msg:
            `API keys are read from the quota store's Redis (ALMANAC_KEY_STORE unset): the ${active} active key(s) in keys.sqlite ` +
            `are not accepted; ${why}, or issue them again with almanac keys create`,
        }
      : { level: 'info', msg: `API keys are read from the quota store's Redis (ALMANAC_KEY_STORE unset); ${why}` },
  )
}

/**
 * The key store; a state dir that cannot be written stops the start with one line naming it. Redis is
 * dialled on the first request that needs it, as the quota store is.
 */
function openKeys(config: Config, sink: LogSink): KeyStore {
  const log = asLogger(sink)
  try {
    if (config.stores.keys.kind === 'redis' && config.keyStore === undefined) warnUnusedSqliteKeys(config, log)
    return createKeyStore(config, log)
  } catch (e) {
    if (e instanceof StateError) throw e
    throw new StateError(`ALMANAC_STATE_DIR: cannot open the key database in ${config.stateDir}: ${(e as Error).message}`)
  }
}

/** The file holding the serving process's pid, for `almanac data activate`. */
export const pidFile = (stateDir: string) => join(stateDir, 'almanac.pid')

/** Records this process as the one `almanac data activate` signals (the supervisor under --workers). */
export function writePid(stateDir: string, sink: LogSink) {
  const log = asLogger(sink)
  try {
    writeFileSync(pidFile(stateDir), `${process.pid}\n`)
  } catch (e) {
    log({ level: 'warn', msg: `cannot write ${pidFile(stateDir)}: ${(e as Error).message}` })
  }
}
