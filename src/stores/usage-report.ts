/**
 * The usage ledger's rows as people read them, for `almanac usage` and the operator API alike: grouped by
 * period, caller, domain and route, outcomes folded into columns (answered, client errors, refused, server
 * errors), with credits, bytes and latency quantiles; and the totals per outcome (refusals by reason).
 */
import { addCounts, emptyCounts, periodOf, quantile, type UsageCounts, type UsageRow } from './usage.ts'

export const REPORT_GRAINS = ['hour', 'day', 'month'] as const
export type ReportGrain = (typeof REPORT_GRAINS)[number]

/** `30d`, `48h` before `now`, or a UTC date: Unix seconds; else why not. */
export function parseSince(raw: string, now: number, flag: string): number | string {
  const relative = /^(\d{1,5})([dh])$/.exec(raw)
  if (relative) return Math.floor(now / 1000) - Number(relative[1]) * (relative[2] === 'd' ? 86_400 : 3600)
  const date = /^\d{4}-\d{2}-\d{2}$/.test(raw) ? Date.parse(`${raw}T00:00:00Z`) : NaN
  if (Number.isNaN(date)) return `${flag} ${JSON.stringify(raw)}: expected 30d, 48h or a date such as 2026-11-01`
  return date / 1000
}

/** One line of the report. */
export interface ReportRow {
  period: string
  key: string
  customer: string
  domain: string
  route: string
  requests: number
  answered: number
  client_errors: number
  refused: number
  server_errors: number
  credits: number
  refunded: number
  bytes: number
  p50_ms: number | null
  p95_ms: number | null
  p99_ms: number | null
}

const periodText = (by: ReportGrain, seconds: number) => {
  const iso = new Date(seconds * 1000).toISOString()
  return by === 'hour' ? `${iso.slice(0, 13)}:00Z` : by === 'day' ? iso.slice(0, 10) : iso.slice(0, 7)
}

/** The ledger's rows folded into report lines: outcomes into columns, days into months for `--by month`. */
export function report(rows: readonly UsageRow[], by: ReportGrain): ReportRow[] {
  const groups = new Map<string, { row: ReportRow; counts: UsageCounts }>()
  for (const r of rows) {
    const period = periodText(by, by === 'hour' ? periodOf('hour', r.period) : r.period)
    const id = `${period}\t${r.caller}\t${r.customer}\t${r.domain}\t${r.route}`
    let group = groups.get(id)
    if (!group) {
      const row: ReportRow = {
        ...{ period, key: r.caller, customer: r.customer, domain: r.domain, route: r.route },
        ...{ requests: 0, answered: 0, client_errors: 0, refused: 0, server_errors: 0, credits: 0, refunded: 0, bytes: 0 },
        ...{ p50_ms: null, p95_ms: null, p99_ms: null },
      }
      groups.set(id, (group = { row, counts: emptyCounts() }))
    }
    addCounts(group.counts, r)
    const kind = r.outcome.slice(0, 3)
    const column = kind === '429' ? 'refused' : kind === '4xx' ? 'client_errors' : kind === '5xx' ? 'server_errors' : 'answered'
    group.row[column] += r.requests
  }
  const byKey = (a: ReportRow, b: ReportRow) =>
    a.period.localeCompare(b.period) || a.key.localeCompare(b.key) || a.domain.localeCompare(b.domain) || a.route.localeCompare(b.route)
  const lines = [...groups.values()].map(({ row, counts }) => ({
    ...row,
    requests: counts.requests,
    credits: counts.credits,
    refunded: counts.refunded,
    bytes: counts.bytes,
    p50_ms: quantile(counts.latency, 0.5),
    p95_ms: quantile(counts.latency, 0.95),
    p99_ms: quantile(counts.latency, 0.99),
  }))
  return lines.sort(byKey)
}

/** Requests per outcome over `rows` (`2xx`, `429:quota` …), most first: refusals and failures by reason. */
export function outcomeTotals(rows: readonly UsageRow[]): { outcome: string; requests: number }[] {
  const totals = new Map<string, number>()
  for (const r of rows) totals.set(r.outcome, (totals.get(r.outcome) ?? 0) + r.requests)
  return [...totals]
    .map(([outcome, requests]) => ({ outcome, requests }))
    .sort((a, b) => b.requests - a.requests || (a.outcome < b.outcome ? -1 : 1))
}
