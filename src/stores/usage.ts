/**
 * The usage ledger: what each caller did, per hour and per day, kept for billing and support. A row counts
 * the requests of one caller (API key or token subject), in one period, on one operation (domain and
 * route), with one outcome (`2xx`, `3xx`, `4xx:<problem>`, `429:<problem>`, `5xx:<problem>`): requests,
 * credits spent, credits given back, bytes sent, and latencies in fixed buckets (enough for a day's p50, p95
 * and p99). Rows are written in batches off the request path (usage-meter.ts) and only ever added to, so
 * several processes and instances write the same rows without counting anything twice.
 *
 * Each batch is written at both grains: hourly rows are kept `HOURLY_DAYS`, daily rows the operator's
 * retention (ALMANAC_USAGE_RETENTION_DAYS, 400 by default). Older rows are pruned, so the ledger never grows
 * without bound. Stores: memory (this file; lost on restart, as memory quota counters are), SQLite
 * (`usage-sqlite.ts`), Redis (`usage-redis.ts`).
 */
import type { Answer } from './quota.ts'

/** Upper bounds (ms) of the latency buckets; one more bucket holds everything slower. */
export const LATENCY_BOUNDS_MS = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000] as const
export const LATENCY_BUCKETS = LATENCY_BOUNDS_MS.length + 1

/** How long hourly rows are kept; after that only the daily ones remain. */
export const HOURLY_DAYS = 35

export type Grain = 'hour' | 'day'
const GRAIN_SECONDS: Record<Grain, number> = { hour: 3600, day: 86_400 }

/** What a row counts (its key). */
export interface UsageKey {
  /** `key:<id>` or `jwt:<sub>`. */
  readonly caller: string
  /** The caller's customer id, or '' when it has none. */
  readonly customer: string
  /** The domain the route belongs to, or '' for routes of none (meta, usage). */
  readonly domain: string
  /** Method and route pattern: `POST /api/v1/ip/bulk`. */
  readonly route: string
  readonly outcome: string
}

/** What a row adds up. */
export interface UsageCounts {
  requests: number
  credits: number
  refunded: number
  bytes: number
  /** Requests per latency bucket (LATENCY_BOUNDS_MS). */
  latency: number[]
}

export interface UsageRow extends UsageKey, UsageCounts {
  /** Start of the period, Unix seconds (an hour or a UTC day). */
  readonly period: number
}

/** Rows of one flush, named so a retried write is applied once (the Redis store remembers the id). */
export interface UsageBatch {
  readonly id: string
  /** Hourly rows; the store adds each to its day as well. */
  readonly rows: readonly UsageRow[]
}

export interface UsageQuery {
  grain: Grain
  /** Unix seconds; rows whose period starts at or after it. */
  since: number
  /** Unix seconds; rows whose period starts before it (default: no end). */
  until?: number
  caller?: string
  customer?: string
}

export interface UsageStore {
  /** Adds a batch's rows (hour and day); a batch id already applied is skipped. Throws when the store is unreachable. */
  write(batch: UsageBatch): Answer<void>
  read(query: UsageQuery): Answer<UsageRow[]>
  /** Drops hourly rows older than HOURLY_DAYS and daily rows older than `retentionDays` (at `now`, ms). */
  prune(now: number, retentionDays: number): Answer<void>
  close(): Answer<void>
  /** For /readyz: null when the store answers, else why not (only stores that can be unreachable have it). */
  check?(): Promise<string | null>
}

/** Start of the period of `grain` holding `seconds` (Unix seconds). */
export const periodOf = (grain: Grain, seconds: number) => seconds - (seconds % GRAIN_SECONDS[grain])

/** The bucket a latency falls in. */
export function latencyBucket(ms: number): number {
  let i = 0
  while (i < LATENCY_BOUNDS_MS.length && ms > LATENCY_BOUNDS_MS[i]!) i++
  return i
}

export const emptyCounts = (): UsageCounts => ({
  requests: 0,
  credits: 0,
  refunded: 0,
  bytes: 0,
  latency: new Array(LATENCY_BUCKETS).fill(0),
})

export function addCounts(into: UsageCounts, from: UsageCounts): void {
  into.requests += from.requests
  into.credits += from.credits
  into.refunded += from.refunded
  into.bytes += from.bytes
  for (let i = 0; i < LATENCY_BUCKETS; i++) into.latency[i]! += from.latency[i] ?? 0
}

/**
 * The latency (ms) below which a share `q` of the requests fell: the upper bound of the bucket where the
 * count crosses it (the slowest bucket has none: its lower bound). null without requests.
 */
export function quantile(latency: readonly number[], q: number): number | null {
  const total = latency.reduce((s, n) => s + n, 0)
  if (!total) return null
  let seen = 0
  for (let i = 0; i < latency.length; i++) {
    seen += latency[i]!
    if (seen >= q * total) return LATENCY_BOUNDS_MS[i] ?? LATENCY_BOUNDS_MS[LATENCY_BOUNDS_MS.length - 1]!
  }
  return null
}

/** One text per key, for maps: fields joined by a tab, which no caller, route or outcome holds. */
export const keyText = (period: number, k: UsageKey) => `${period}\t${k.caller}\t${k.customer}\t${k.domain}\t${k.route}\t${k.outcome}`

/** Whether a row answers a query. */
export const matches = (row: UsageRow, q: UsageQuery) =>
  row.period >= q.since &&
  (q.until === undefined || row.period < q.until) &&
  (q.caller === undefined || row.caller === q.caller) &&
  (q.customer === undefined || row.customer === q.customer)

/** Rows sorted as every store answers them: by period, then caller, domain, route, outcome. */
export const sortRows = (rows: UsageRow[]) =>
  rows.sort(
    (a, b) =>
      a.period - b.period ||
      cmp(a.caller, b.caller) ||
      cmp(a.domain, b.domain) ||
      cmp(a.route, b.route) ||
      cmp(a.outcome, b.outcome) ||
      cmp(a.customer, b.customer),
  )
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/**
 * Adds an hourly `row` to its row of `grain` in `rows` (keyed by keyText), as the stores add a batch: the same
 * period and key make one row whose counts sum. The memory store and the meter's reads (usage-meter.ts) share it.
 */
export function addRow(rows: Map<string, UsageRow>, grain: Grain, row: UsageRow): void {
  const period = periodOf(grain, row.period)
  const key = keyText(period, row)
  let into = rows.get(key)
  if (!into) rows.set(key, (into = { ...row, period, ...emptyCounts() }))
  addCounts(into, row)
}

/** The ledger in this process's memory: for the memory quota store (nothing survives a restart there either). */
export function memoryUsageStore(): UsageStore {
  const grains: Record<Grain, Map<string, UsageRow>> = { hour: new Map(), day: new Map() }
  const applied = new Set<string>()
  const add = (grain: Grain, row: UsageRow) => addRow(grains[grain], grain, row)
  return {
    write(batch) {
      if (applied.has(batch.id)) return
      applied.add(batch.id)
      // Ids only matter while their batch may be retried: a few minutes' worth is plenty.
      if (applied.size > 10_000) applied.delete(applied.values().next().value!)
      for (const row of batch.rows) {
        add('hour', row)
        add('day', row)
      }
    },
    read: (q) => sortRows([...grains[q.grain].values()].filter((r) => matches(r, q)).map((r) => ({ ...r, latency: [...r.latency] }))),
    prune(now, retentionDays) {
      const cut = { hour: now / 1000 - HOURLY_DAYS * 86_400, day: now / 1000 - retentionDays * 86_400 }
      for (const grain of ['hour', 'day'] as const) for (const [k, r] of grains[grain]) if (r.period < cut[grain]) grains[grain].delete(k)
    },
    close() {
      grains.hour.clear()
      grains.day.clear()
    },
  }
}
