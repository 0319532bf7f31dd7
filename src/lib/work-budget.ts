/**
 * A work budget for one request's input-dependent queries. Work is counted where it happens, in units
 * of about one row read (rows SQLite examines, counted by an SQL function in the query's WHERE; loop
 * work in JS, spent by the loop), and the budget throws the moment it runs out, inside SQLite's own
 * step loop when that is where the work is. The count depends only on the input and the data, never on
 * the clock, so the same request always gets the same answer.
 */
import type { Database } from 'bun:sqlite'

export class WorkBudget {
  private left: number

  constructor(
    readonly limit: number,
    /** The error to throw when the budget runs out (a problem saying what to narrow). */
    private readonly over: () => Error,
  ) {
    this.left = limit
  }

  spend(units: number): void {
    this.left -= units
    if (this.left < 0) throw this.over()
  }

  get spent(): number {
    return this.limit - this.left
  }
}

const meters = new WeakMap<Database, WorkMeter>()

/**
 * The budget of the call running on one connection. Calls are synchronous, so one budget at a time is
 * current; outside a metered call `work_unit()` is free, so a query can be shared by metered and
 * unmetered callers.
 */
export class WorkMeter {
  private current: WorkBudget | null = null

  private constructor(db: Database) {
    // `WHERE work_unit(1, t.id) AND …` spends a unit per row of `t` the query examines; `work_unit(0.25, …)`
    // a quarter, for rows that cost less (an index-only count). The column keeps the call per row of its
    // table: in a join SQLite evaluates a term naming no column of the inner table once per row of the
    // outer loop (a radius count's edge statement, json_each × R*Tree, counted a unit per searched box
    // instead of one per point read). directOnly: only SQL this process passes can call it, never a view
    // or trigger of the file.
    db.function('work_unit', { directOnly: true }, (units: number, _row: unknown) => {
      this.current?.spend(units)
      return 1
    })
  }

  /** The meter of a connection, registering `work_unit()` on it the first time. */
  static of(db: Database): WorkMeter {
    let meter = meters.get(db)
    if (!meter) meters.set(db, (meter = new WorkMeter(db)))
    return meter
  }

  /** Runs `fn` with `budget` as the current budget. */
  run<T>(budget: WorkBudget, fn: () => T): T {
    const previous = this.current
    this.current = budget
    try {
      return fn()
    } finally {
      this.current = previous
    }
  }

  /** Spends loop work (in JS) from the current budget, if any. */
  spend(units: number): void {
    this.current?.spend(units)
  }

  /** Units spent so far by the current budget (0 outside a metered call). */
  get spent(): number {
    return this.current?.spent ?? 0
  }
}
