/**
 * `almanac usage` over a real ledger in a temp state dir (SQLite, as a server on the default store writes
 * it): periods, keys and customers chosen by name, outcomes folded into columns, months summed from days;
 * the CSV read back by Python's csv module (an independent reader of RFC 4180), the JSON by JSON.parse.
 */
import { describe, expect, test } from 'bun:test'
import { usageCommand } from '../../src/cli/usage-report.ts'
import { openKeyStore } from '../../src/stores/keys.ts'
import { LATENCY_BUCKETS, type UsageRow } from '../../src/stores/usage.ts'
import { sqliteUsageStore } from '../../src/stores/usage-sqlite.ts'
import { pythonJson } from '../support/python.ts'
import { tempDirs } from '../support/temp.ts'

const tempDir = tempDirs('almanac-usage-cli-')
/** 2026-11-29 12:00 UTC: `--since 30d` reaches back to 2026-10-30. */
const NOW = Date.UTC(2026, 10, 29, 12)
const hour = (day: number, h: number) => Date.UTC(2026, 10, day, h) / 1000

const row = (period: number, caller: string, over: Partial<UsageRow> = {}): UsageRow => ({
  period,
  caller,
  customer: '',
  domain: 'ip',
  route: 'POST /api/v1/ip/bulk',
  outcome: '2xx',
  requests: 1,
  credits: 3,
  refunded: 0,
  bytes: 400,
  latency: Array.from({ length: LATENCY_BUCKETS }, (_, i) => (i === 2 ? 1 : 0)),
  ...over,
})

/** A state dir with two keys (one of a customer) and a ledger of their requests over two months. */
async function ledger() {
  const dir = tempDir()
  const keys = openKeyStore(dir)
  const customer = await keys.createCustomer({ name: 'acme', plan: null }, 'cli:test')
  const a = (await keys.create({ name: 'acme-prod', plan: null, customer: customer.id }, 'cli:test')).record
  const b = (await keys.create({ name: 'solo', plan: null }, 'cli:test')).record
  keys.close()
  const usage = sqliteUsageStore(dir)
  await usage.write({
    id: '1',
    rows: [
      row(hour(29, 9), `key:${a.id}`, { customer: customer.id, requests: 4, credits: 12 }),
      row(hour(29, 10), `key:${a.id}`, { customer: customer.id, outcome: '429:quota', credits: 0 }),
      row(hour(29, 10), `key:${a.id}`, { customer: customer.id, outcome: '4xx:invalid', credits: 1, route: 'POST /api/v1/ip/bulk' }),
      row(hour(28, 23), `key:${b.id}`, { domain: 'countries', route: 'GET /api/v1/countries/:code', credits: 1, bytes: 300 }),
      row(hour(2, 8), `key:${b.id}`, { outcome: '5xx:unavailable', credits: 0, refunded: 1 }),
    ],
  })
  await usage.close()
  return { env: { ALMANAC_QUOTA_STORE: 'sqlite', ALMANAC_STATE_DIR: dir }, a, b, customer }
}

async function run(args: string[], env: Record<string, string>) {
  const out: string[] = []
  const err: string[] = []
  const code = await usageCommand(
    args,
    env,
    (t) => out.push(t),
    (l) => err.push(l),
    NOW,
  )
  return { code, out: out.join('\n'), err: err.join('\n') }
}

describe('almanac usage', () => {
  test('--key by name, --by day, JSON: one line per day and route, outcomes folded into columns', async () => {
    const { env, a } = await ledger()
    const { code, out } = await run(['--key', 'acme-prod', '--format', 'json'], env)
    expect(code).toBe(0)
    const lines = JSON.parse(out)
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({
      period: '2026-11-29',
      key: `key:${a.id}`,
      domain: 'ip',
      route: 'POST /api/v1/ip/bulk',
      requests: 6,
      answered: 4,
      client_errors: 1,
      refused: 1,
      server_errors: 0,
      credits: 13,
      bytes: 1200,
      p50_ms: 5,
      p99_ms: 5,
    })
  })

  test('--customer, --by hour: the customer keys only, hour by hour', async () => {
    const { env } = await ledger()
    const { code, out } = await run(['--customer', 'acme', '--by', 'hour', '--format', 'json'], env)
    expect(code).toBe(0)
    expect(JSON.parse(out).map((l: any) => [l.period, l.requests])).toEqual([
      ['2026-11-29T09:00Z', 4],
      ['2026-11-29T10:00Z', 2],
    ])
  })

  test('--by month --since a date: the days of each month summed; CSV as Python reads it', async () => {
    const { env, b } = await ledger()
    const { code, out } = await run(['--key', b.id, '--by', 'month', '--since', '2026-11-01', '--format', 'csv'], env)
    expect(code).toBe(0)
    const parsed = pythonJson<any[]>(
      'import csv, io, json, sys\nprint(json.dumps(list(csv.DictReader(io.StringIO(json.load(sys.stdin))))))',
      out,
    )
    expect(parsed.map((r: any) => [r.period, r.domain, r.requests, r.answered, r.server_errors, r.refunded])).toEqual([
      ['2026-11', 'countries', '1', '1', '0', '0'],
      ['2026-11', 'ip', '1', '0', '1', '1'],
    ])
  })

  test('the default window is the last 30 days; the table is aligned columns', async () => {
    const { env } = await ledger()
    const { code, out } = await run([], env)
    expect(code).toBe(0)
    const lines = out.split('\n')
    expect(lines[0]).toMatch(/^PERIOD\s+KEY\s+CUSTOMER\s+DOMAIN\s+ROUTE\s+REQUESTS/)
    // Three groups: a's day of bulks (three rows folded), b's lookup on the 28th, b's 503 on the 2nd.
    expect(lines.length).toBe(4)
    // Every line's ROUTE column starts where the header's does.
    const at = lines[0]!.indexOf('ROUTE')
    expect(lines.slice(1).map((l) => /^(GET|POST) /.test(l.slice(at)))).toEqual([true, true, true])
  })

  test('clear refusals: an unknown key, a bad --since, --by week, the memory store', async () => {
    const { env } = await ledger()
    await expect(run(['--key', 'nope'], env)).rejects.toThrow(/--key "nope": no key has that id or name/)
    await expect(run(['--since', 'yesterday'], env)).rejects.toThrow(/expected 30d, 48h or a date/)
    await expect(run(['--by', 'week'], env)).rejects.toThrow(/--by "week": expected hour, day, month/)
    const memory = await run([], { ALMANAC_QUOTA_STORE: 'memory' })
    expect([memory.code, memory.err]).toEqual([2, expect.stringContaining('GET /api/v1/usage')])
  })
})
