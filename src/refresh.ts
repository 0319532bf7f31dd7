/**
 * Data refresh without downtime. The server answers through a LiveApp: one generation (data directory,
 * opened domains, the app built on them) at a time. `activate(dir)` opens a new directory beside the
 * running one, checks every artifact against its manifest (sizes, then sha256), opens the domains on it,
 * builds a new app and swaps it in with one assignment: a request already running keeps the generation it
 * started on, the next one gets the new. When the last request on the old generation has finished, its
 * domains are closed (their files and databases released). A directory that fails any check is refused
 * with a log line and the old generation stays. The same directory again opens only the domains whose
 * files outside it changed (an operator's own database: mount.ts reopenChanged), the same way.
 */
import { hasManifest } from './data/activation.ts'
import { resolve } from 'node:path'
import type { Server } from 'bun'
import type { AnyElysia } from 'elysia'
import type { Config } from './config.ts'
import type { Domain, MountedDomain } from './domains/types.ts'
import type { Observability } from './http/edge/observability.ts'
import { type AppDeps, createApp } from './server.ts'
import { changedOutside, openDomains, reopenChanged, warmUp } from './domains/mount.ts'
import { datasetMetrics, domainMetrics } from './http/endpoints/dataset-metrics.ts'
import { attachServer } from './http/routing/elysia-routes.ts'
import { contentMismatch, sizeMismatch } from './data/integrity.ts'
import { openDataDir } from './data/open.ts'
import type { DataDir } from './data/types.ts'
import { asLogger, logger } from './lib/logger.ts'

/** One data generation: what a request is answered from, from start to end. */
export interface Generation {
  data: DataDir
  mounted: MountedDomain[]
  app: AnyElysia
  /** Requests started on this generation and not finished yet. */
  inflight: number
  /** Called when inflight drops to 0 after the generation was retired. */
  drained?: () => void
}

export type Activation = { ok: true; dir: string; retired: Promise<void>; unchanged?: boolean } | { ok: false; reason: string }

export interface LiveApp {
  handle(request: Request): Response | Promise<Response>
  readonly current: Generation
  /** Opens, checks and swaps in the data directory `dir`; one activation at a time. */
  activate(dir: string): Promise<Activation>
  /**
   * Serves the same data with one domain's state replaced (a domain that finished opening, or failed to):
   * a new app on the same generation's data, swapped in like an activation; nothing is closed.
   */
  remount(next: MountedDomain): void
  /** Bun's server (for the TCP peer address) on every generation's app, now and later, and in the access log. */
  attach(server: Server<unknown>): void
  /** Closes the current generation's domains (at shutdown). */
  close(): Promise<void>
}

// The state dir's record of `almanac data activate`, read by the server at start and on SIGHUP.

/** Why `data` cannot replace the running data for `domains`, or null when every artifact matches. */
export async function refusal(data: DataDir, domains: Domain[], open: Set<string>): Promise<string | null> {
  if (!Object.keys(data.manifest.datasets).length) return `${data.dir} holds no datasets (no or an empty manifest.json)`
  for (const domain of domains)
    for (const id of domain.datasets) {
      // A dataset a running domain needs must be there; one nobody serves now may stay missing.
      if (!data.manifest.datasets[id]) {
        if (open.has(domain.name)) return `dataset ${id} (domain ${domain.name}) is missing`
        continue
      }
      const why = sizeMismatch(data, id) ?? (await contentMismatch(data, id))
      if (why) return why
    }
  return null
}

export function liveApp(
  config: Config,
  deps: Omit<AppDeps, 'data'> & { observability: Observability },
  data: DataDir,
  mounted: MountedDomain[],
): LiveApp {
  const log = asLogger(deps.log ?? logger)
  const clock = deps.clock ?? Date.now
  let server: Server<unknown> | undefined
  const build = (data: DataDir, mounted: MountedDomain[]): Generation => {
    const app = createApp(config, { ...deps, data }, mounted)
    if (server) attachServer(app, server)
    return { data, mounted, app, inflight: 0 }
  }
  let current = build(data, mounted)
  // One collector for every generation: the metrics describe the data being served now.
  deps.observability.addCollector(() => datasetMetrics(current.data, current.mounted, clock()))
  deps.observability.addCollector(() => domainMetrics(current.mounted))
  let busy = false

  const finished = (g: Generation) => {
    if (--g.inflight === 0) g.drained?.()
  }

  /** Closes the old generation's domains once its last request ended, but those the new one serves on (`keep`). */
  const retire = async (old: Generation, keep: readonly MountedDomain[] = []) => {
    if (old.inflight > 0) await new Promise<void>((resolve) => (old.drained = resolve))
    for (const m of old.mounted)
      if (m.service !== undefined && !keep.includes(m))
        try {
          await m.domain.close?.(m.service)
        } catch (e) {
          log({ level: 'warn', msg: `closing the old ${m.domain.name} datasets failed`, error: String(e) })
        }
  }

  const refuse = (dir: string, reason: string): Activation => {
    log({ level: 'error', msg: `data directory refused, still serving ${current.data.dir}: ${reason}`, dir })
    return { ok: false, reason }
  }

  return {
    get current() {
      return current
    },
    handle(request) {
      const g = current
      g.inflight++
      let answer: Response | Promise<Response>
      try {
        answer = g.app.handle(request) as Response | Promise<Response>
      } catch (e) {
        finished(g)
        throw e
      }
      if (!(answer instanceof Promise)) {
        finished(g)
        return answer
      }
      return answer.then(
        (response) => {
          finished(g)
          return response
        },
        (e) => {
          finished(g)
          throw e
        },
      )
    },
    async activate(dir) {
      dir = resolve(dir)
      if (busy) return refuse(dir, 'another data directory is being activated')
      if (current.mounted.some((m) => m.state === 'opening')) return refuse(dir, 'the datasets of the first start are still opening')
      busy = true
      try {
        if (!hasManifest(dir)) return refuse(dir, `${dir} holds no manifest.json`)
        let next: DataDir
        try {
          next = openDataDir(dir)
        } catch (e) {
          return refuse(dir, (e as Error).message)
        }
        // SIGHUP also reloads operator list files (ip, email): the same directory with the same manifest is
        // not opened and hashed again; only the domains whose files outside it changed (an operator's own
        // database) are opened again.
        if (dir === resolve(current.data.dir) && JSON.stringify(next.manifest) === JSON.stringify(current.data.manifest)) {
          const changed = await changedOutside(current.mounted)
          if (changed.length) {
            const next = await reopenChanged(config, current.data, current.mounted, changed, log)
            if (!next.ok) return next
            const old = current
            current = build(old.data, next.mounted)
            warmUp(next.reopened, log)
            const domains = next.reopened.map((m) => m.domain.name).join(', ')
            log({ level: 'info', msg: `${next.settings.join(', ')} changed: the ${domains} domain reopened`, settings: next.settings })
            return { ok: true, dir, retired: retire(old, next.mounted) }
          }
          log({ level: 'info', msg: 'datasets unchanged, nothing to activate', dir })
          return { ok: true, dir, retired: Promise.resolve(), unchanged: true }
        }
        const open = new Set(current.mounted.filter((m) => m.state === 'open').map((m) => m.domain.name))
        const why = await refusal(next, deps.domains, open)
        if (why) return refuse(dir, why)
        // refusal() hashed every artifact, small and large, before anything of the new generation opens.
        const opened = await openDomains(config, next, deps.domains, log, { hashed: true })
        const lost = opened.find((m) => m.state === 'disabled' && open.has(m.domain.name))
        if (lost) {
          for (const m of opened) if (m.service !== undefined) await m.domain.close?.(m.service)
          return refuse(dir, lost.problem!)
        }
        const old = current
        current = build(next, opened)
        warmUp(opened, log)
        log({
          level: 'info',
          msg: 'datasets activated',
          dir,
          previous: old.data.dir,
          datasets: Object.fromEntries(Object.values(next.manifest.datasets).map((e) => [e.id, e.version])),
        })
        return { ok: true, dir, retired: retire(old) }
      } finally {
        busy = false
      }
    },
    remount(next) {
      const mounted = current.mounted.map((m) => (m.domain === next.domain ? next : m))
      // Requests running on the previous app finish there; the services are the same objects.
      current = build(current.data, mounted)
    },
    attach(s) {
      server = s
      attachServer(current.app, s)
      deps.observability.attach(s)
    },
    async close() {
      for (const m of current.mounted) if (m.service !== undefined) await m.domain.close?.(m.service)
    },
  }
}
