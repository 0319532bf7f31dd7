/**
 * GET /readyz: whether this instance should be sent traffic. Not ready while a domain is disabled or still
 * opening, the quota store is unreachable without fail-open, or the server is shutting down; dataset age
 * and missing optional sources are reported but never make it unready (old data still answers); so are
 * `warnings`: no credentials, stored keys on a plan not offered, a domain's own (its `readinessWarnings`).
 */
import type { Context } from 'elysia'
import type { Config } from '../../config.ts'
import { freshness, type staleAfterDays } from '../../data/freshness.ts'
import { OPENING_RETRY_SECONDS, openingProblem } from '../../data/opening.ts'
import type { DataDir } from '../../data/types.ts'
import { type MountedDomain, servedEntry } from '../../domains/types.ts'
import type { QuotaStore } from '../../stores/quota.ts'
import type { Authenticator } from '../admission/auth.ts'

export interface ReadinessDeps {
  data: DataDir
  authenticator: Authenticator
  quota: QuotaStore
  clock: () => number
  /** True once the server is shutting down (serve.ts). */
  stopping?: () => boolean
  /** Days after which each dataset is stale (freshness.ts `staleAfterDays`). */
  limits: ReturnType<typeof staleAfterDays>
}

/**
 * The /readyz answer over `mounted` (read at each request: the background check may disable a domain), given
 * the request's `set` (its status and headers).
 */
export function readiness(config: Config, deps: ReadinessDeps, mounted: MountedDomain[]) {
  const { authenticator, quota, clock, limits } = deps
  /** Per domain: its datasets built without an optional source (a signal it cannot give). */
  const degraded = unavailableSignals(deps.data, mounted)
  return async (set: Context['set']) => {
    const down: { domain?: string; component?: string; problem: string; opening?: true }[] = mounted.flatMap((m) =>
      m.state === 'opening'
        ? [{ domain: m.domain.name, problem: openingProblem(m.domain), opening: true as const }]
        : m.state === 'disabled'
          ? [{ domain: m.domain.name, problem: m.problem }]
          : [],
    )
    // Without fail-open, an unreachable quota store answers every /api/v1 request 503: not ready.
    const store = config.quotaFailOpen || !quota.check ? null : await quota.check()
    // Told first, so a load balancer stops sending here while the listener still accepts (serve.ts stop()).
    if (deps.stopping?.())
      down.unshift({ component: 'server', problem: 'The server is shutting down: it still answers, but send new requests elsewhere.' })
    // The store's address stays in the log: /readyz answers anyone.
    if (store)
      down.push({
        component: 'quota_store',
        problem: 'The quota store is unreachable, so /api/v1 requests are answered 503 (ALMANAC_QUOTA_FAIL_OPEN is off).',
      })
    if (down.length) set.status = 503
    const opening = mounted.filter((m) => m.state === 'opening').map((m) => m.domain.name)
    if (opening.length) set.headers['retry-after'] = String(OPENING_RETRY_SECONDS)
    // Said, never a reason to be unready: the server works as configured, and a load balancer taking it
    // out would hide the message from the operator reading it here.
    const noCredentials = await authenticator.unconfigured?.()
    const warnings: { domain?: string; component: string; problem: string }[] = [
      ...(noCredentials ? [{ component: 'auth', problem: noCredentials }] : []),
      ...((await authenticator.unknownPlans?.()) ?? []),
      ...mounted.flatMap(domainWarnings),
    ]
    return {
      status: down.length ? 'not_ready' : 'ready',
      // Domains whose datasets are still being extracted or opened (first start); the others already answer.
      ...(opening.length ? { opening } : {}),
      domains: mounted.map((m) => {
        if (m.state === 'opening') return { domain: m.domain.name, ready: false, opening: true }
        const missing = m.problem ? [] : degraded.get(m.domain.name)
        return { domain: m.domain.name, ready: !m.problem, ...(missing?.length ? { signals_unavailable: missing } : {}) }
      }),
      // Age and staleness are reported, never a reason to be unready: old data still answers. Of what is
      // served: an operator's own database is aged from its build date, and named.
      datasets: Object.values(deps.data.manifest.datasets)
        .sort((a, b) => a.id.localeCompare(b.id))
        .map((manifest) => {
          const e = servedEntry(manifest, mounted)
          return {
            dataset: e.id,
            ...freshness(e.id, e, clock(), limits),
            ...(e.served_from ? { served_from: e.served_from, date: e.date } : {}),
          }
        }),
      ...(down.length ? { problems: down } : {}),
      ...(warnings.length ? { warnings } : {}),
    }
  }
}

/**
 * What an open domain's state (what its `open` returned) may offer /readyz: warnings that leave it ready,
 * since it still answers (the email domain's DNS resolver answering none of the well-known names).
 */
export interface ReadinessWarnings {
  readinessWarnings(): { component: string; problem: string }[]
}

const domainWarnings = (m: MountedDomain) => {
  const state = m.state === 'open' ? (m.service as Partial<ReadinessWarnings> | null | undefined) : undefined
  return typeof state?.readinessWarnings === 'function' ? state.readinessWarnings().map((w) => ({ domain: m.domain.name, ...w })) : []
}

/** The optional sources each open domain's datasets were built without, by domain (for /readyz). */
export function unavailableSignals(data: DataDir, mounted: MountedDomain[]): Map<string, { dataset: string; sources: string[] }[]> {
  const out = new Map<string, { dataset: string; sources: string[] }[]>()
  for (const { domain } of mounted) {
    const list = domain.datasets.flatMap((id) => {
      const missing = data.manifest.datasets[id]?.unavailable ?? []
      return missing.length ? [{ dataset: id, sources: missing.map((u) => u.id) }] : []
    })
    if (list.length) out.set(domain.name, list)
  }
  return out
}
