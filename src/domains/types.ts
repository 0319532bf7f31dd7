/**
 * A domain is routes + a pure service over its opened datasets, described in one place: its folder's
 * `index.ts` names its routes, OpenAPI tag, datasets and their builders (with how old each may grow),
 * upstream sources (NOTICE.md, the datasets endpoint), docs page and probes. The central lists are derived
 * from these descriptors (the OpenAPI tags, the staleness table, the probes the executable test sends), and
 * `test/domains/descriptors.test.ts` fails when a registered domain lacks one of them. `server.ts` mounts
 * every domain in `domains/index.ts`; one whose datasets are missing is mounted as "unavailable" (503
 * naming the dataset).
 */
import type { AnyElysia } from 'elysia'
import type { Config } from '../config.ts'
import type { DataDir, DatasetBuilder, ManifestEntry, Source } from '../data/types.ts'
import type { Logger } from '../lib/logger.ts'
import type { Schema } from '../lib/settings.ts'

/** A tag of the OpenAPI document: a domain's (declared here, `Domain.tag`) or the server's own (http/endpoints/openapi.ts). */
export interface ApiTag {
  name: string
  description: string
}

/**
 * What a domain is opened with. `log` is the app's logger (serve.ts hands it down; tests pass their own to
 * read the lines): a domain and the pools it makes log through it, never through a module-level logger.
 */
export interface OpenContext {
  config: Config
  data: DataDir
  log: Logger
}

export interface DomainContext<S> extends OpenContext {
  service: S
}

export interface Domain<S = unknown> {
  name: string
  /**
   * The OpenAPI tag its routes name in `detail.tags` (lower case, the domain's name), with one or two
   * sentences on what the domain answers. Optional only for test fixtures: every registered domain has one.
   */
  tag?: ApiTag
  /**
   * Its settings (`settings.ts` in its folder), under `<name>.*` in the config file and `Config`: src/config.ts
   * composes them (config sits below the domains, so it imports the settings modules, not the registry), and
   * test/settings-table.test.ts fails when the two disagree.
   */
  settings?: Schema
  /** Path prefixes under /api/v1 that this domain answers (e.g. `/countries`, `/subdivisions`). */
  prefixes: string[]
  /** Dataset ids (manifest keys) that must be present. */
  datasets: string[]
  /** Opens the datasets; throwing disables the domain with the message logged at start. */
  open(ctx: OpenContext): S | Promise<S>
  /** The routes, as an Elysia plugin whose paths are relative to /api/v1. */
  routes(ctx: DomainContext<S>): AnyElysia
  /** Routes outside /api/v1 (absolute paths; no API key, no quota), e.g. signed download links. */
  publicRoutes?(ctx: DomainContext<S>): AnyElysia
  /** Date of the definitions database, sent as `X-Definitions-Updated` (SPEC shared behaviour 4). */
  definitionsUpdated?(ctx: { data: DataDir; service: S }): string
  /** Prometheus text (exposition format) made at each `/metrics` scrape, e.g. the hashing pool's memory. */
  metrics?(service: S): string
  /** Releases what `open` took (workers, file handles). */
  close?(service: S): void | Promise<void>
  /**
   * Files the service read from outside the data directory (an operator's own database) that hold other
   * bytes now than when it opened them: resolves with the settings naming them, empty when none changed. A
   * reload of an unchanged data directory (SIGHUP, `almanac data activate`) opens such a domain again, alone,
   * and swaps it in like a new data directory; one that fails to open is refused and the old one serves on.
   */
  changedFiles?(service: S): Promise<string[]>
  /**
   * A dataset's manifest entry as the service serves it, where part of it comes from elsewhere (an operator's
   * own database in place of a built artifact); absent, or `entry` returned: the manifest is the truth. What
   * /api/v1/meta/datasets and /readyz describe.
   */
  served?(service: S, entry: ManifestEntry): ServedEntry
  /**
   * One-off first-use work (structures built lazily, code compiled on first call) as steps of at most a few
   * tens of ms, which every domain's opening leaves to be run one heavy step a turn of the event loop
   * (mount.ts `warmUp`): readiness never waits for them and none blocks the loop for long, while the first
   * callers' requests no longer pay for them.
   */
  warmUp?(service: S): (() => void)[]
  builders?: DatasetBuilder[]
  /** The upstreams its builders read (`sources.ts` in the domain folder). */
  sources?: Source[]
  /** The operator and API-user page for the domain, relative to the repository root. */
  docs?: string
  /**
   * The module, relative to the repository root, exporting `probes`: the requests the executable test sends
   * this domain, with answers known from outside this project (`test/build/probes.ts`).
   */
  probes?: string
}

export const defineDomain = <S>(domain: Domain<S>) => domain as Domain<unknown>

/**
 * A domain as mounted, in one of three states:
 * - `open`: its service answers;
 * - `opening`: its datasets are still being extracted or opened (first start): its routes answer 503 with
 *   Retry-After and /readyz lists it, while the other domains serve;
 * - `disabled`: it cannot serve, and `problem` says why. That text is shown to callers (the 503 of its routes,
 *   /readyz, the datasets endpoint), so it names datasets, never file paths; the log has the whole story.
 * An open domain is disabled in place when the background integrity check finds a corrupt artifact
 * (`disable`): whoever holds it sees the change on its next request; it keeps its service until closed.
 */
export type MountedDomain = OpenDomain | OpeningDomain | DisabledDomain

export interface OpenDomain {
  readonly state: 'open'
  readonly domain: Domain
  readonly service: unknown
  readonly problem?: undefined
}

export interface OpeningDomain {
  readonly state: 'opening'
  readonly domain: Domain
  readonly service?: undefined
  readonly problem?: undefined
}

export interface DisabledDomain {
  readonly state: 'disabled'
  readonly domain: Domain
  /** What it opened before it was disabled (closed with the generation). */
  readonly service?: unknown
  readonly problem: string
}

/** A source of a served dataset: the manifest's, or one the operator supplied. */
export type ServedSource = ManifestEntry['sources'][number] & {
  /** Who supplied it when it is not the build's, e.g. `operator-supplied (ALMANAC_IP_CITY_MMDB)`. */
  origin?: string
  /** What a MaxMind DB file says of itself (its metadata). */
  database?: { type: string; build_epoch: number; built: string; languages: string[]; description: string | null }
}

/** A manifest entry as a domain serves it (`Domain.served`). */
export interface ServedEntry extends ManifestEntry {
  sources: ServedSource[]
  /** Set when part of the dataset is served from elsewhere than its built artifacts: who supplied it. */
  served_from?: string
}

/** `entry` as the open domain declaring its dataset serves it (`Domain.served`), else as the manifest says. */
export function servedEntry(entry: ManifestEntry, mounted: readonly MountedDomain[]): ServedEntry {
  const m = mounted.find((m) => m.domain.datasets.includes(entry.id))
  return m?.state === 'open' && m.domain.served ? m.domain.served(m.service, entry) : entry
}

/** Disables a mounted domain in place: its routes answer 503 with `problem` from its next request on. */
export function disable(m: MountedDomain, problem: string): void {
  Object.assign(m, { state: 'disabled', problem })
}
