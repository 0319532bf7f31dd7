/**
 * How the mounted domains show over HTTP: each domain's routes, or a stand-in answering 503 for a domain
 * disabled or still opening; the 503 of a domain the background integrity check disabled after its routes
 * were mounted; the `x-definitions-updated` header of the domain a path belongs to (SPEC: reference-data
 * endpoints), on every response under its prefixes, problems included.
 */
import { Elysia, type AnyElysia } from 'elysia'
import type { Config } from '../config.ts'
import { OPENING_RETRY_SECONDS, openingProblem } from '../data/opening.ts'
import type { DataDir } from '../data/types.ts'
import type { MountedDomain } from '../domains/types.ts'
import { AlmanacError, unavailable } from '../lib/errors.ts'
import type { Logger } from '../lib/logger.ts'
import { API_PREFIX } from './paths.ts'

/**
 * A domain's routes, or a stand-in that answers 503 (with Retry-After while the domain is opening). `log` is
 * the app's logger, handed to the domain's routes.
 */
export function domainRoutes(config: Config, data: DataDir, m: MountedDomain, log: Logger): AnyElysia {
  const { domain } = m
  if (!m.problem && !m.opening) return domain.routes({ service: m.service, config, data, log })
  const plugin = new Elysia({ name: `almanac:unavailable:${domain.name}` })
  const fail = () => {
    if (m.opening)
      throw new AlmanacError('unavailable', openingProblem(domain), {
        extra: { domain: domain.name, datasets: domain.datasets, opening: true },
        headers: { 'Retry-After': String(OPENING_RETRY_SECONDS) },
      })
    throw unavailable(m.problem!, { domain: domain.name, datasets: domain.datasets })
  }
  for (const prefix of domain.prefixes)
    plugin.all(prefix, fail, { detail: { hide: true } }).all(`${prefix}/*`, fail, { detail: { hide: true } })
  return plugin
}

/**
 * `find` answered once per route pattern: server.ts asks with the app's patterns, a bounded set, so the
 * prefix scans behind these answers run once each rather than per request.
 */
function perRoute<T>(find: (route: string) => T): (route: string) => T {
  const answers = new Map<string, T>()
  return (route) => {
    if (!answers.has(route)) answers.set(route, find(route))
    return answers.get(route) as T
  }
}

/**
 * Throws the 503 of a domain open at start that the background integrity check has since disabled, when
 * `route` (a route pattern) is one of its: its routes stay mounted, so the check is made per request.
 */
export function disabledAfterStart(mounted: MountedDomain[]): (route: string) => void {
  const openAtStart = mounted
    .filter((m) => !m.problem && !m.opening)
    .flatMap((m) => m.domain.prefixes.map((prefix) => ({ mounted: m, base: API_PREFIX + prefix })))
  // The owner of each route pattern is found once; its `problem` is read on every request, as the check may
  // set it at any time.
  const ownerOf = perRoute((route) => openAtStart.find(({ base }) => route === base || route.startsWith(base + '/'))?.mounted)
  return (route) => {
    const m = ownerOf(route)
    if (m?.problem) throw unavailable(m.problem, { domain: m.domain.name, datasets: m.domain.datasets })
  }
}

/**
 * The definitions date (X-Definitions-Updated) of the domain a path or route pattern belongs to, if it has
 * one (open domains only). A handful of prefixes: a scan.
 */
export function definitionsOf(
  data: DataDir,
  mounted: MountedDomain[],
): ((path: string) => string | undefined) & { ofRoute(route: string): string | undefined } {
  const definitions = mounted.flatMap(({ domain, service, problem, opening }) => {
    const date = problem || opening ? undefined : domain.definitionsUpdated?.({ data, service })
    if (!date) return []
    // `/countries` covers `/api/v1/countries` and `/api/v1/countries/...`, not `/api/v1/countriesx`.
    return domain.prefixes.map((prefix) => ({ base: API_PREFIX + prefix, prefix: `${API_PREFIX}${prefix}/`, date }))
  })
  const find = (path: string) => definitions.find((d) => path.startsWith(d.prefix) || path === d.base)?.date
  // Raw paths (problem responses) are scanned; route patterns (server.ts) once each.
  return Object.assign(find, { ofRoute: perRoute(find) })
}
