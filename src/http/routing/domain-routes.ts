/**
 * How the mounted domains show over HTTP: each domain's routes, or a stand-in answering 503 for a domain
 * disabled or still opening; the 503 of a domain the background integrity check disabled after its routes
 * were mounted.
 */
import { Elysia, type AnyElysia } from 'elysia'
import type { Config } from '../../config.ts'
import { OPENING_RETRY_SECONDS, openingProblem } from '../../data/opening.ts'
import type { DataDir } from '../../data/types.ts'
import type { MountedDomain } from '../../domains/types.ts'
import { AlmanacError, unavailable } from '../../lib/errors.ts'
import type { Logger } from '../../lib/logger.ts'

/**
 * A domain's routes, or a stand-in that answers 503 (with Retry-After while the domain is opening). `log` is
 * the app's logger, handed to the domain's routes.
 */
export function domainRoutes(config: Config, data: DataDir, m: MountedDomain, log: Logger): AnyElysia {
  const { domain } = m
  if (m.state === 'open') return domain.routes({ service: m.service, config, data, log })
  const plugin = new Elysia({ name: `almanac:unavailable:${domain.name}` })
  const fail = () => {
    if (m.state === 'opening')
      throw new AlmanacError('unavailable', openingProblem(domain), {
        extra: { domain: domain.name, datasets: domain.datasets, opening: true },
        headers: { 'Retry-After': String(OPENING_RETRY_SECONDS) },
      })
    throw unavailable(m.problem, { domain: domain.name, datasets: domain.datasets })
  }
  for (const prefix of domain.prefixes)
    plugin.all(prefix, fail, { detail: { hide: true } }).all(`${prefix}/*`, fail, { detail: { hide: true } })
  return plugin
}

/**
 * The 503 of a domain open at start that the background integrity check has since disabled: its routes stay
 * mounted, so the check is made at each request's admission, on the owner its route resolved to.
 */
export function checkOpen(owner: MountedDomain | undefined): void {
  if (owner?.state === 'disabled') throw unavailable(owner.problem, { domain: owner.domain.name, datasets: owner.domain.datasets })
}
