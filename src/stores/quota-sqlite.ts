/**
 * Quota counters in `<stateDir>/quota.sqlite`: they survive a restart, and processes sharing the file
 * (`--workers`, several servers on one host) share the counters. Each consume is one IMMEDIATE
 * transaction (read, decide, write under SQLite's write lock), so concurrent consumers from any process
 * are serialised and a request takes all its credits or none. A refund is one UPDATE (atomic by itself).
 */
import type { Plan } from '../config.ts'
import { openStateDatabase } from './sqlite.ts'
import { quotaState, windowStart, type QuotaStore } from './quota.ts'

const SCHEMA = [
  `CREATE TABLE quota_counters (
     plan TEXT NOT NULL,
     window_seconds INTEGER NOT NULL,
     subject TEXT NOT NULL,
     window_start INTEGER NOT NULL,
     used INTEGER NOT NULL,
     PRIMARY KEY (plan, window_seconds, subject)
   ) STRICT, WITHOUT ROWID;
   CREATE INDEX quota_counters_window ON quota_counters(window_start);`,
]

export function sqliteQuotaStore(stateDir: string): QuotaStore {
  const db = openStateDatabase(stateDir, 'quota.sqlite', SCHEMA)
  const read = db.query<{ window_start: number; used: number }, [string, number, string]>(
    'SELECT window_start, used FROM quota_counters WHERE plan = ? AND window_seconds = ? AND subject = ?',
  )
  const write = db.query(
    `INSERT INTO quota_counters (plan, window_seconds, subject, window_start, used) VALUES (?1, ?2, ?3, ?4, ?5)
     ON CONFLICT (plan, window_seconds, subject) DO UPDATE SET window_start = excluded.window_start, used = excluded.used`,
  )
  // One statement, so atomic on its own: only the window the credits were taken in, never below zero.
  const giveBack = db.query<{ used: number }, [string, number, string, number, number]>(
    `UPDATE quota_counters SET used = max(0, used - ?4)
     WHERE plan = ?1 AND window_seconds = ?2 AND subject = ?3 AND window_start = ?5 RETURNING used`,
  )
  // Rows of windows long gone: removed now and then so the table holds only active subjects.
  const sweep = db.query('DELETE FROM quota_counters WHERE window_start + window_seconds < ?')
  let lastSweep = 0

  const usedNow = (subject: string, plan: Plan, window: number) => {
    const row = read.get(plan.name, plan.windowSeconds, subject)
    return row && row.window_start === window ? row.used : 0
  }

  const consume = db.transaction((subject: string, plan: Plan, cost: number, window: number) => {
    const used = usedNow(subject, plan, window)
    if (used + cost > plan.credits) return quotaState(plan, window, used, false)
    write.run(plan.name, plan.windowSeconds, subject, window, used + cost)
    return quotaState(plan, window, used + cost, true)
  })

  return {
    consume(subject, plan, cost, now = Date.now()) {
      const window = windowStart(plan, now)
      if (cost === 0) return quotaState(plan, window, usedNow(subject, plan, window), true)
      if (now - lastSweep > 3_600_000) {
        lastSweep = now
        sweep.run(Math.floor(now / 1000))
      }
      return consume.immediate(subject, plan, cost, window)
    },
    refund(subject, plan, credits, now = Date.now()) {
      const window = windowStart(plan, now)
      const row = giveBack.get(plan.name, plan.windowSeconds, subject, credits, window)
      return quotaState(plan, window, row?.used ?? 0, true)
    },
    peek(subject, plan, now = Date.now()) {
      const window = windowStart(plan, now)
      return quotaState(plan, window, usedNow(subject, plan, window), true)
    },
    close: () => db.close(),
  }
}
