/**
 * The SQL side of the work budget (lib/work-budget.ts): `work_unit(units, column)` in a WHERE clause spends for
 * each row SQLite examines, counted here against the rows of an in-memory table, in a plain scan and in a join.
 */
import { Database } from 'bun:sqlite'
import { describe, expect, test } from 'bun:test'
import { WorkBudget, WorkMeter } from '../../src/lib/work-budget.ts'

function table(rows: number): Database {
  const db = new Database(':memory:')
  db.exec('CREATE TABLE t (x INTEGER)')
  const insert = db.prepare('INSERT INTO t (x) VALUES (?)')
  for (let x = 1; x <= rows; x++) insert.run(x)
  return db
}

/** Units `sql` spends under an unlimited budget. */
function spent(db: Database, sql: string): number {
  const budget = new WorkBudget(1e9, () => new Error('over'))
  WorkMeter.of(db).run(budget, () => db.query(sql).all())
  return budget.spent
}

describe('work_unit', () => {
  test('a scan spends a unit a row examined, matched or not, and a quarter with work_unit(0.25, column)', () => {
    const db = table(1000)
    expect(spent(db, 'SELECT x FROM t WHERE work_unit(1, x) AND x > 900')).toBe(1000)
    expect(spent(db, 'SELECT x FROM t WHERE work_unit(0.25, x) AND x > 900')).toBe(250)
  })

  test('in a join, work_unit(units, column) spends for each row of the inner table; a column of the outer one would not', () => {
    const db = table(1000)
    const join = (term: string) => `SELECT t.x FROM json_each('[100, 400, 700]') j CROSS JOIN t ON t.x > j.value WHERE ${term}`
    // 900 + 600 + 300 rows read in the three inner scans.
    expect(spent(db, join('work_unit(1, t.x)'))).toBe(3000)
    // SQLite evaluates a term naming no column of the inner table once per outer row: why the column is there.
    expect(spent(db, join('work_unit(1, j.value)'))).toBe(3)
  })

  test('outside a metered call work_unit() is free, and a budget throws its own error when spent', () => {
    const db = table(100)
    WorkMeter.of(db)
    expect(db.query('SELECT COUNT(*) AS n FROM t WHERE work_unit(1, x)').get()).toEqual({ n: 100 })
    const budget = new WorkBudget(50, () => new Error('over the budget'))
    expect(() => WorkMeter.of(db).run(budget, () => db.query('SELECT x FROM t WHERE work_unit(1, x)').all())).toThrow('over the budget')
  })
})
