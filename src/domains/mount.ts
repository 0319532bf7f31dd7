/**
 * The lifecycle of a domain's datasets up to serving: open (its artifacts in place, sizes and small
 * artifacts' sha256 checked, its service made), then verify (the large artifacts hashed in the background).
 * A domain that fails either is kept, disabled, with the reason its routes, /readyz and /meta/datasets
 * give. Swapping a new data directory in and closing the old one is refresh.ts (a LiveApp).
 */
import type { Config } from '../config.ts'
import { type ArtifactSizes, contentMismatch, sizeMismatch } from '../data/integrity.ts'
import type { DataDir } from '../data/types.ts'
import { inSteps } from '../http/admission/turns.ts'
import { asLogger, logger, type LogSink } from '../lib/logger.ts'
import { redactPaths } from '../lib/redact.ts'
import { disable, type Domain, type MountedDomain, type OpenDomain } from './types.ts'

export interface OpenOptions {
  /** The caller already hashed every artifact (a data refresh does, before it opens anything). */
  hashed?: boolean
  /** Artifacts whose sha256 was checked moments ago (while extracting them): not hashed again. */
  verified?: ReadonlySet<string>
  /** Resolves once the domain's artifacts are in place (extraction); a rejection disables the domain with its message. */
  ready?: (domain: Domain) => Promise<void>
}

/**
 * Opens each domain's datasets, all at once; a domain that cannot open is kept, disabled, with the reason.
 * Sizes and the sha256 of small artifacts are checked first (data/integrity.ts), unless `hashed` says the
 * caller already hashed every artifact. The result is in the order of `domains`.
 */
export async function openDomains(
  config: Config,
  data: DataDir,
  domains: Domain[],
  log: (l: string) => void = logger,
  options: OpenOptions = {},
): Promise<MountedDomain[]> {
  return Promise.all(domains.map((domain) => openDomain(config, data, domain, log, options)))
}

/**
 * Starts the open domains' warm-up steps (Domain.warmUp), one heavy step a turn (http/admission/turns.ts), and returns at
 * once: serve.ts calls it once the server listens, refresh.ts once a new generation serves.
 */
export function warmUp(mounted: MountedDomain[], log: (l: string) => void = logger): void {
  for (const { domain, service } of mounted) {
    const steps = service === undefined ? undefined : domain.warmUp?.(service)
    if (!steps?.length) continue
    inSteps(`almanac:warm-up:${domain.name}`, steps, 1, (step) => step.map((run) => run())).catch((e) =>
      asLogger(log).warn(`the ${domain.name} warm-up failed; the first requests do its work`, { domain: domain.name, error: String(e) }),
    )
  }
}

/** Opens one domain (see openDomains): its service, or the reason it is disabled. */
export async function openDomain(
  config: Config,
  data: DataDir,
  domain: Domain,
  sink: LogSink = logger,
  { hashed = false, verified, ready }: OpenOptions = {},
): Promise<MountedDomain> {
  const log = asLogger(sink)
  const disabled = (problem: string, logged = problem): MountedDomain => {
    log({ level: 'error', msg: `The ${domain.name} domain is disabled: ${logged}`, domain: domain.name })
    return { state: 'disabled', domain, problem: `The ${domain.name} domain is disabled: ${problem}` }
  }
  const missing = domain.datasets.filter((id) => !data.manifest.datasets[id])
  if (missing.length) {
    const fix = Bun.isStandaloneExecutable
      ? `this executable was compiled without it: run \`bun run data && bun run compile\` in a checkout, or point ALMANAC_DATA_DIR at a ` +
        `datasets/out that has it`
      : `run \`almanac data build --only ${domain.name}\``
    return disabled(`dataset ${missing.join(', ')} is not built (${fix}).`)
  }
  if (ready)
    try {
      await ready(domain)
    } catch (e) {
      return disabled(redactPaths((e as Error).message), (e as Error).message)
    }
  const damaged = domain.datasets.map((id) => sizeMismatch(data, id)).find(Boolean)
  if (damaged) return disabled(`${damaged}; rebuild or re-extract the datasets.`)
  // A small artifact is hashed before its domain answers anything: wrong bytes of the right size would
  // otherwise be served until the background check reached them.
  const corrupt = hashed ? null : await firstMismatch(data, domain.datasets, { small: config.dataHashBeforeServeMaxBytes }, verified)
  if (corrupt)
    return disabled(`${corrupt}; rebuild or re-extract the datasets.`, `${corrupt} (in ${data.dir}); rebuild or re-extract the datasets.`)
  let service: unknown
  try {
    service = await domain.open({ config, data, log: asLogger(log) })
  } catch (e) {
    return disabled(redactPaths((e as Error).message), (e as Error).message)
  }
  // Open, but built without an optional source: say which signal it cannot give.
  for (const id of domain.datasets) {
    const missing = data.manifest.datasets[id]?.unavailable
    if (missing?.length)
      log({
        level: 'warn',
        msg:
          `The ${domain.name} domain serves without ${missing.map((u) => u.id).join(', ')}: dataset ${id} was built without them ` +
          `(rebuild with the sources available to add them)`,
        domain: domain.name,
        dataset: id,
      })
  }
  return { state: 'open', domain, service }
}

/** An open domain whose files outside the data directory changed (Domain.changedFiles), with the settings naming them. */
export interface ChangedOutside {
  mounted: OpenDomain
  changed: string[]
}

/** The open domains of `mounted` whose files outside the data directory changed since they opened. */
export async function changedOutside(mounted: readonly MountedDomain[]): Promise<ChangedOutside[]> {
  const found = await Promise.all(
    mounted.map(async (m) =>
      m.state === 'open' && m.domain.changedFiles ? { mounted: m, changed: await m.domain.changedFiles(m.service) } : null,
    ),
  )
  return found.filter((c): c is ChangedOutside => c !== null && c.changed.length > 0)
}

/** What reopening the domains whose outside files changed came to: the domains to serve now, or why not. */
export type Reopened = { ok: true; mounted: MountedDomain[]; reopened: OpenDomain[]; settings: string[] } | { ok: false; reason: string }

/**
 * Opens the domains of `changed` again over the same data (their files outside the data directory changed;
 * the artifacts did not, and were checked when they first opened): `mounted` with those replaced by the new
 * ones, the others the same objects. If one cannot open, those opened are closed and the refusal is logged
 * with the whole message: the caller serves on with what it had, which nothing disables.
 */
export async function reopenChanged(
  config: Config,
  data: DataDir,
  mounted: readonly MountedDomain[],
  changed: ChangedOutside[],
  sink: LogSink = logger,
): Promise<Reopened> {
  const log = asLogger(sink)
  const settings = changed.flatMap((c) => c.changed)
  const opened = await Promise.all(
    changed.map(async ({ mounted: { domain } }): Promise<OpenDomain | Error> => {
      try {
        return { state: 'open', domain, service: await domain.open({ config, data, log }) }
      } catch (e) {
        return e instanceof Error ? e : new Error(String(e))
      }
    }),
  )
  const failed = opened.find((o) => o instanceof Error)
  if (failed) {
    for (const o of opened) if (!(o instanceof Error)) await o.domain.close?.(o.service)
    const reason = `${settings.join(', ')} changed but cannot be served: ${failed.message}`
    const domains = changed.map((c) => c.mounted.domain.name).join(', ')
    log({ level: 'error', msg: `${reason}; the ${domains} domain keeps serving what it had`, settings })
    return { ok: false, reason }
  }
  const reopened = opened as OpenDomain[]
  return { ok: true, mounted: mounted.map((m) => reopened.find((r) => r.domain === m.domain) ?? m), reopened, settings }
}

/** The first content mismatch among `datasets` (the `which` of their artifacts), or null. */
async function firstMismatch(
  data: DataDir,
  datasets: string[],
  which: ArtifactSizes,
  verified?: ReadonlySet<string>,
): Promise<string | null> {
  for (const id of datasets) {
    const mismatch = await contentMismatch(data, id, which, verified)
    if (mismatch) return mismatch
  }
  return null
}

/**
 * Hashes the large artifacts of every open domain in the background (the small ones were hashed before the
 * domain opened) and disables a domain whose artifacts do not match the manifest (its routes answer 503
 * from then on, /readyz says not ready). Those in `verified` were hashed while being extracted. Resolves when done.
 */
export async function verifyDatasets(
  config: Config,
  data: DataDir,
  mounted: MountedDomain[],
  sink: LogSink = logger,
  verified?: ReadonlySet<string>,
): Promise<void> {
  const log = asLogger(sink)
  for (const m of mounted) {
    if (m.state !== 'open') continue
    const mismatch = await firstMismatch(data, m.domain.datasets, { large: config.dataHashBeforeServeMaxBytes }, verified)
    if (!mismatch) continue
    const problem = `The ${m.domain.name} domain is disabled: ${mismatch}; rebuild or re-extract the datasets.`
    disable(m, problem)
    log({ level: 'error', msg: problem, dir: data.dir })
  }
}
