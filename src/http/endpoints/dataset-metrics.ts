/**
 * The Prometheus text of the data being served: each dataset's age, build time, version and missing
 * optional sources, each domain's readiness, and the domains' own metrics. Collectors made at each scrape;
 * a LiveApp (data/refresh.ts) registers one pair for all its generations, reading the current one.
 */
import { ageSeconds } from '../../data/freshness.ts'
import type { DataDir } from '../../data/types.ts'
import { type MountedDomain, servedEntry } from '../../domains/types.ts'
import { labels } from '../edge/observability.ts'

/**
 * Per dataset: age of its upstream data in seconds (from the newest source's date), when it was built,
 * how many optional sources it lacks; per domain: whether it answers. Made at each scrape (a few lines).
 */
export function datasetMetrics(data: DataDir, mounted: MountedDomain[], now: number): string {
  // As served: a database the operator supplied (ALMANAC_IP_CITY_MMDB) reports its own date, not the bundled one's.
  const entries = Object.values(data.manifest.datasets)
    .map((e) => servedEntry(e, mounted))
    .sort((a, b) => a.id.localeCompare(b.id))
  const out = [
    "# HELP almanac_dataset_age_seconds Seconds since the upstream date of the dataset's newest source (how stale the data is).",
    '# TYPE almanac_dataset_age_seconds gauge',
  ]
  for (const e of entries) {
    const age = ageSeconds(e, now)
    if (age !== null) out.push(`almanac_dataset_age_seconds${labels({ dataset: e.id })} ${age}`)
  }
  out.push(
    '# HELP almanac_dataset_built_timestamp_seconds When the dataset was built, in Unix seconds.',
    '# TYPE almanac_dataset_built_timestamp_seconds gauge',
  )
  for (const e of entries) {
    const built = Date.parse(e.built)
    if (Number.isFinite(built)) out.push(`almanac_dataset_built_timestamp_seconds${labels({ dataset: e.id })} ${Math.floor(built / 1000)}`)
  }
  out.push(
    "# HELP almanac_dataset_info The dataset's version, upstream date and build date (value 1).",
    '# TYPE almanac_dataset_info gauge',
  )
  for (const e of entries)
    out.push(`almanac_dataset_info${labels({ dataset: e.id, version: e.version, date: e.date ?? '', built: e.built.slice(0, 10) })} 1`)
  out.push(
    '# HELP almanac_dataset_unavailable_sources Optional sources the dataset was built without (signals it cannot give).',
    '# TYPE almanac_dataset_unavailable_sources gauge',
  )
  for (const e of entries) out.push(`almanac_dataset_unavailable_sources${labels({ dataset: e.id })} ${e.unavailable?.length ?? 0}`)
  out.push('# HELP almanac_domain_ready Whether the domain answers (1) or is disabled (0).', '# TYPE almanac_domain_ready gauge')
  for (const m of mounted) out.push(`almanac_domain_ready${labels({ domain: m.domain.name })} ${m.state === 'open' ? 1 : 0}`)
  return out.join('\n')
}

/** The metrics of each open domain that has some (one collector for all, so a rebuilt app adds none). */
export const domainMetrics = (mounted: MountedDomain[]): string =>
  mounted
    .filter((m) => m.state === 'open' && m.domain.metrics)
    .map((m) => m.domain.metrics!(m.service))
    .join('\n')
