/**
 * `almanac usage`: the usage ledger (docs/usage.md) for billing exports and support, read from the store
 * the server writes it to (the state dir's usage.sqlite, or Redis). Rows are grouped by period, key and
 * route, outcomes folded into columns (answered, client errors, refused, server errors), with the credits,
 * bytes and latency quantiles of each group. Table for a person, CSV for a spreadsheet, JSON for a script.
 */
import { ConfigError, loadConfig, settingOptions, type Config } from '../config.ts'
import { didYouMean } from '../lib/did-you-mean.ts'
import { createKeyStore, createUsageStore } from '../stores/index.ts'
import { KeyStoreError } from '../stores/keys.ts'
import { StateError } from '../stores/sqlite.ts'
import { addCounts, emptyCounts, periodOf, quantile, type UsageCounts, type UsageRow } from '../stores/usage.ts'
import { parseCommand, UsageError } from './args.ts'

export const USAGE_REPORT_USAGE = `usage: almanac usage [--key ID|NAME] [--customer ID|NAME] [--since 30d] [--until DATE]
                     [--by hour|day|month] [--format table|csv|json]
  the usage ledger, grouped by period, key, domain and route: requests answered, client errors (4xx),
  refused (429), server errors (5xx), credits spent and given back, bytes sent, p50/p95/p99 latency (ms)
  --key       one key (its id, or the name of a key; key:… or jwt:… names a caller as the ledger does)
  --customer  every key of one customer (its id or name)
  --since     30d, 48h, or a UTC date (2026-11-01); default 30d. --until: a UTC date (not included)
  --by        hour (kept 35 days), day (default) or month (UTC calendar months)
Reads ALMANAC_QUOTA_STORE's ledger (sqlite: ALMANAC_STATE_DIR/usage.sqlite, or Redis). A server on the memory
store keeps its ledger in its own memory: ask it with GET /api/v1/usage instead.`

const GRAINS = ['hour', 'day', 'month'] as const
const FORMATS = ['table', 'csv', 'json'] as const
type By = (typeof GRAINS)[number]

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

const periodText = (by: By, seconds: number) => {
  const iso = new Date(seconds * 1000).toISOString()
  return by === 'hour' ? `${iso.slice(0, 13)}:00Z` : by === 'day' ? iso.slice(0, 10) : iso.slice(0, 7)
}

/** The ledger's rows folded into report lines: outcomes into columns, days into months for `--by month`. */
export function report(rows: readonly UsageRow[], by: By): ReportRow[] {
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

const COLUMNS: (keyof ReportRow)[] = [
  'period',
  'key',
  'customer',
  'domain',
  'route',
  'requests',
  'answered',
  'client_errors',
  'refused',
  'server_errors',
  'credits',
  'refunded',
  'bytes',
  'p50_ms',
  'p95_ms',
  'p99_ms',
]

const cell = (v: string | number | null) => (v === null ? '' : String(v))
/** RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled. */
const csvField = (v: string) => (/[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v)

export function formatReport(rows: ReportRow[], format: (typeof FORMATS)[number]): string {
  if (format === 'json') return JSON.stringify(rows, null, 2)
  const cells = rows.map((r) => COLUMNS.map((c) => cell(r[c])))
  if (format === 'csv') return [COLUMNS, ...cells].map((line) => line.map(csvField).join(',')).join('\n')
  if (!rows.length) return 'no usage in that period'
  const all = [COLUMNS.map((c) => c.toUpperCase()), ...cells]
  const widths = COLUMNS.map((_, i) => Math.max(...all.map((line) => line[i]!.length)))
  return all
    .map((line) =>
      line
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')
}

/** The caller `--key` names: `key:`/`jwt:` as given, else the key of that id or (active) name. */
async function callerOf(config: Config, raw: string): Promise<string> {
  if (/^(key|jwt):/.test(raw)) return raw
  const store = createKeyStore(config)
  try {
    const keys = await store.list()
    const found = keys.find((k) => k.id === raw) ?? keys.find((k) => k.name === raw && !k.revoked) ?? keys.find((k) => k.name === raw)
    if (!found)
      throw new UsageError(
        `--key ${JSON.stringify(raw)}: no key has that id or name${didYouMean(
          raw,
          keys.map((k) => k.name),
        )}`,
      )
    return `key:${found.id}`
  } finally {
    store.close()
  }
}

async function customerOf(config: Config, raw: string): Promise<string> {
  const store = createKeyStore(config)
  try {
    const customers = await store.listCustomers()
    const found = customers.find((c) => c.id === raw || c.name === raw)
    if (!found) throw new UsageError(`--customer ${JSON.stringify(raw)}: no customer has that id or name`)
    return found.id
  } finally {
    store.close()
  }
}

const oneOf = <T extends string>(flag: string, raw: string | undefined, allowed: readonly T[], fallback: T): T => {
  if (raw === undefined) return fallback
  if (allowed.includes(raw as T)) return raw as T
  throw new UsageError(`--${flag} ${JSON.stringify(raw)}: expected ${allowed.join(', ')}${didYouMean(raw, [...allowed])}`)
}

/** Runs `almanac usage`; returns the process exit code. */
export async function usageCommand(
  args: string[],
  env: Record<string, string | undefined> = process.env,
  out: (text: string) => void = (t) => console.log(t),
  log: (line: string) => void = (l) => console.error(l),
  now = Date.now(),
): Promise<number> {
  const text = { type: 'string' } as const
  const parsed = parseCommand(args, { ...settingOptions(), key: text, customer: text, since: text, until: text, by: text, format: text })
  if (parsed.help) {
    out(USAGE_REPORT_USAGE)
    return 0
  }
  const flag = (name: string) => parsed.values[name] as string | undefined
  const by = oneOf('by', flag('by'), GRAINS, 'day')
  const format = oneOf('format', flag('format'), FORMATS, 'table')
  const since = parseSince(flag('since') ?? '30d', now, '--since')
  const until = flag('until') === undefined ? undefined : parseSince(flag('until')!, now, '--until')
  for (const bad of [since, until]) if (typeof bad === 'string') throw new UsageError(bad)
  try {
    const config = loadConfig({ env, argv: args })
    if (config.stores.quota.kind === 'memory') {
      log('almanac: the quota store is memory, so the ledger is in the server process; ask it with GET /api/v1/usage')
      return 2
    }
    const caller = flag('key') === undefined ? undefined : await callerOf(config, flag('key')!)
    const customer = flag('customer') === undefined ? undefined : await customerOf(config, flag('customer')!)
    const store = createUsageStore(config)
    try {
      const grain = by === 'hour' ? 'hour' : 'day'
      const rows = await store.read({
        grain,
        since: periodOf(grain, since as number),
        until: until as number | undefined,
        caller,
        customer,
      })
      out(formatReport(report(rows, by), format))
      return 0
    } finally {
      await store.close()
    }
  } catch (e) {
    if (e instanceof ConfigError) {
      log(`almanac: configuration error: ${e.message}`)
      return 2
    }
    if (e instanceof KeyStoreError || e instanceof StateError || /^Redis at /.test((e as Error)?.message ?? '')) {
      log(`almanac: ${(e as Error).message}`)
      return 1
    }
    throw e
  }
}
