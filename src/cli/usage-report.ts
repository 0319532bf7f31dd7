/**
 * `almanac usage`: the usage ledger (docs/usage.md) for billing exports and support, read from the store
 * the server writes it to (the state dir's usage.sqlite, or Redis). Rows are grouped by period, key and
 * route, outcomes folded into columns (answered, client errors, refused, server errors), with the credits,
 * bytes and latency quantiles of each group. Table for a person, CSV for a spreadsheet, JSON for a script.
 */
import { loadConfig, settingOptions, type Config } from '../config.ts'
import { didYouMean } from '../lib/did-you-mean.ts'
import { createKeyStore, createUsageStore } from '../stores/index.ts'
import { periodOf } from '../stores/usage.ts'
import { parseSince, REPORT_GRAINS, report, type ReportRow } from '../stores/usage-report.ts'
import { parseCommand, UsageError } from './args.ts'
import { storeCommandFailed } from './keys.ts'

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

const FORMATS = ['table', 'csv', 'json'] as const

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
  const by = oneOf('by', flag('by'), REPORT_GRAINS, 'day')
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
    return storeCommandFailed(e, log)
  }
}
