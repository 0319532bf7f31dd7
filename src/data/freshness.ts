/**
 * How old a dataset's upstream data is, and whether that is past the age its licence or its nature
 * allows (docs/datasets.md, "Freshness"). The age counts from the upstream date of the dataset's newest
 * source (`ManifestEntry.date`), not from the build: rebuilding old inputs does not make data fresh.
 */
import type { DatasetBuilder, ManifestEntry } from './types.ts'

const DAY_MS = 86_400_000

/**
 * Days after which each dataset is reported `stale`, from its builder's `staleAfterDays` (the reason for
 * each number is written beside it, in the domain's `build.ts`). Datasets whose builder names none
 * (countries, postal codes, Bible texts, email lists, device rules) have no threshold: never stale.
 */
export type StaleAfterDays = ReadonlyMap<string, number>

export const staleAfterDays = (builders: readonly DatasetBuilder[]): StaleAfterDays =>
  new Map(builders.flatMap((b) => (b.staleAfterDays === undefined ? [] : [[b.id, b.staleAfterDays] as const])))

/** Milliseconds since the epoch of the upstream date, or NaN when the manifest has none. */
const upstreamMs = (entry: ManifestEntry | undefined): number => (entry?.date ? Date.parse(`${entry.date.slice(0, 10)}T00:00:00Z`) : NaN)

/** Seconds since the upstream date (0 for a date in the future), or null when unknown. */
export function ageSeconds(entry: ManifestEntry | undefined, now: number): number | null {
  const date = upstreamMs(entry)
  return Number.isFinite(date) ? Math.max(0, Math.floor((now - date) / 1000)) : null
}

export interface Freshness {
  /** Whole days since the upstream date; null when the manifest has no date. */
  age_days: number | null
  /** Past `stale_after_days`. */
  stale: boolean
  /** The threshold, null when the dataset has none. */
  stale_after_days: number | null
}

export function freshness(id: string, entry: ManifestEntry | undefined, now: number, limits: StaleAfterDays): Freshness {
  const seconds = ageSeconds(entry, now)
  const age = seconds === null ? null : Math.floor((seconds * 1000) / DAY_MS)
  const limit = limits.get(id) ?? null
  return { age_days: age, stale: age !== null && limit !== null && age > limit, stale_after_days: limit }
}

/** The day number of a clock reading: what the memoized freshness answers are keyed by. */
export const dayOf = (now: number) => Math.floor(now / DAY_MS)
