/**
 * The usage ledger in `<stateDir>/usage.sqlite`, beside the quota counters: one table per grain, a row per
 * period, caller, operation and outcome. A batch is one transaction of upserts that add to what is there
 * (`requests = requests + excluded.requests` …), so processes sharing the file (`--workers`) each add their
 * own counts and none is counted twice; a batch that fails is rolled back whole and retried by the meter.
 */
import type { Database } from 'bun:sqlite'
import { openStateDatabase } from './sqlite.ts'
import { type Grain, HOURLY_DAYS, LATENCY_BUCKETS, periodOf, type UsageQuery, type UsageRow, type UsageStore } from './usage.ts'

const BUCKET_COLUMNS = Array.from({ length: LATENCY_BUCKETS }, (_, i) => `l${i}`)
const COUNT_COLUMNS = ['requests', 'credits', 'refunded', 'bytes', ...BUCKET_COLUMNS]
const KEY_COLUMNS = ['period', 'caller', 'customer', 'domain', 'route', 'outcome']

const table = (grain: Grain) => `usage_${grain}`
const tableSql = (grain: Grain) =>
  `CREATE TABLE ${table(grain)} (
     period INTEGER NOT NULL, caller TEXT NOT NULL, customer TEXT NOT NULL, domain TEXT NOT NULL, route TEXT NOT NULL,
     outcome TEXT NOT NULL, ${COUNT_COLUMNS.map((c) => `${c} INTEGER NOT NULL`).join(', ')},
     PRIMARY KEY (${KEY_COLUMNS.join(', ')})
   ) STRICT, WITHOUT ROWID;
   CREATE INDEX ${table(grain)}_caller ON ${table(grain)}(caller, period);
   CREATE INDEX ${table(grain)}_customer ON ${table(grain)}(customer, period);`

const SCHEMA = [`${tableSql('hour')}\n${tableSql('day')}`]

type Row = Record<string, string | number>

const rowOf = (r: Row): UsageRow => ({
  period: r.period as number,
  caller: r.caller as string,
  customer: r.customer as string,
  domain: r.domain as string,
  route: r.route as string,
  outcome: r.outcome as string,
  requests: r.requests as number,
  credits: r.credits as number,
  refunded: r.refunded as number,
  bytes: r.bytes as number,
  latency: BUCKET_COLUMNS.map((c) => r[c] as number),
})

export function sqliteUsageStore(stateDir: string): UsageStore {
  const db: Database = openStateDatabase(stateDir, 'usage.sqlite', SCHEMA)
  const columns = [...KEY_COLUMNS, ...COUNT_COLUMNS]
  const upsert = (grain: Grain) =>
    db.query(
      `INSERT INTO ${table(grain)} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})
       ON CONFLICT (${KEY_COLUMNS.join(', ')}) DO UPDATE SET ${COUNT_COLUMNS.map((c) => `${c} = ${c} + excluded.${c}`).join(', ')}`,
    )
  const upserts = { hour: upsert('hour'), day: upsert('day') }
  const write = db.transaction((rows: readonly UsageRow[]) => {
    for (const row of rows)
      for (const grain of ['hour', 'day'] as const)
        upserts[grain].run(
          periodOf(grain, row.period),
          row.caller,
          row.customer,
          row.domain,
          row.route,
          row.outcome,
          row.requests,
          row.credits,
          row.refunded,
          row.bytes,
          ...row.latency,
        )
  })
  const prune = { hour: db.query('DELETE FROM usage_hour WHERE period < ?'), day: db.query('DELETE FROM usage_day WHERE period < ?') }

  return {
    write: (batch) => write.immediate(batch.rows),
    read(q: UsageQuery) {
      const where = ['period >= ?']
      const args: (string | number)[] = [q.since]
      if (q.until !== undefined) where.push('period < ?'), args.push(q.until)
      if (q.caller !== undefined) where.push('caller = ?'), args.push(q.caller)
      if (q.customer !== undefined) where.push('customer = ?'), args.push(q.customer)
      const sql = `SELECT * FROM ${table(q.grain)} WHERE ${where.join(' AND ')} ORDER BY period, caller, domain, route, outcome, customer`
      return db
        .query<Row, (string | number)[]>(sql)
        .all(...args)
        .map(rowOf)
    },
    prune(now, retentionDays) {
      prune.hour.run(Math.floor(now / 1000) - HOURLY_DAYS * 86_400)
      prune.day.run(Math.floor(now / 1000) - retentionDays * 86_400)
    },
    close: () => db.close(),
  }
}
