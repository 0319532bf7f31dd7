/**
 * Quota counters in `<stateDir>/quota.sqlite`: they survive a restart, and processes sharing the file
 * (`--workers`, several servers on one host) share the counters. The default store, so it must cost what
 * the memory store costs while keeping the counts.
 *
 * Two ways of counting, and a lock that says which one holds:
 * - **Owner** (the file's only user, the usual single server): counters live in memory and are decided
 *   there, as the memory store does; what was spent is added to the file (`used = used + delta`, one
 *   transaction for all) every `flushMs / 2` by a timer and, should the timer run late, before the next
 *   consume once `flushMs` have passed. Nothing in the file can disagree with memory: nobody else writes it.
 * - **Shared** (several processes): each consume is one IMMEDIATE transaction (read, decide, write under
 *   SQLite's write lock), so consumers of every process are serialised and exact.
 *
 * Which one: `quota.lock`, an SQLite file used only for its OS locks (fcntl, released by the kernel when a
 * process dies, SIGKILL included, and also between connections of one process). The owner holds an
 * EXCLUSIVE lock on it, each sharer a SHARED one, so there is an owner or sharers, never both. A store
 * opening: EXCLUSIVE if nobody holds anything (owner), else SHARED (sharer), else an owner exists: it sets
 * `quota_handover.wanted` in quota.sqlite and its requests wait (a promise, as Redis answers) while it polls.
 * The owner reads `wanted` on each timer tick, adds what it holds to the file in the same transaction,
 * drops its memory and its EXCLUSIVE lock and takes a SHARED one; the newcomer then shares too. So a second
 * server on the same dir waits at most a tick (≤ `flushMs / 2`) for its first answer and never over-spends:
 * no request is decided from the file while another process holds unwritten spending. An owner that never
 * answers (stuck, not dead: a dead one's lock is gone) makes the newcomer's requests fail (503, or uncounted
 * with fail-open) after `handoverMs` rather than over-spend. `--workers` start as sharers (`shared`), so no
 * worker waits for a hand-over at start. A sharer that finds itself alone (the others stopped) becomes the
 * owner again on a tick. Hand-overs and upgrades only ever pass through moments where nobody decides.
 *
 * How much a crash can lose: an owner killed outright loses the spending not yet added: at most `flushMs`
 * (1 s) of it. The next owner starts from the file, so after a crash a caller may spend again what it spent
 * in that last second, never more. A clean close adds everything first: nothing is lost. A sharer loses
 * nothing (each consume is committed before it is answered).
 *
 * Requires the processes to be on one host (fcntl locks on a local file system, as SQLite's WAL does).
 */
import { Database } from 'bun:sqlite'
import { chmodSync } from 'node:fs'
import { join } from 'node:path'
import type { Plan } from '../config.ts'
import { openStateDatabase } from './sqlite.ts'
import { CounterTable, giveBack, quotaState, quotaWindow, spend, windowKey, type Counter, type QuotaStore } from './quota.ts'

const SCHEMA = [
  // window_seconds: the plan's window key (quota.ts `windowKey`: its length, 0 for a calendar month).
  `CREATE TABLE quota_counters (
     plan TEXT NOT NULL,
     window_seconds INTEGER NOT NULL,
     subject TEXT NOT NULL,
     window_start INTEGER NOT NULL,
     used INTEGER NOT NULL,
     PRIMARY KEY (plan, window_seconds, subject)
   ) STRICT, WITHOUT ROWID;
   CREATE INDEX quota_counters_window ON quota_counters(window_start);`,
  `CREATE TABLE quota_handover (id INTEGER PRIMARY KEY CHECK (id = 1), wanted INTEGER NOT NULL) STRICT;
   INSERT INTO quota_handover VALUES (1, 0);`,
]

/** The longest window (a 31-day month): rows older than their window by this are swept. */
const MONTH_BOUND = 31 * 86400

export interface SqliteQuotaOptions {
  /** Longest spending stays only in this process's memory while it owns the file (ms). */
  flushMs?: number
  /** Start as a sharer (`--workers`: siblings open the same file at once). */
  shared?: boolean
  /** How long requests wait for another process to hand the file over before failing (ms). */
  handoverMs?: number
  /** The time flushes and hand-overs are counted in (ms); windows use each call's `now`. */
  clock?: () => number
}

export type QuotaRole = 'owner' | 'shared' | 'waiting' | 'closed'

export interface SqliteQuotaStore extends QuotaStore {
  /**
   * What the timer does every `flushMs / 2`: an owner adds what it holds to the file (and hands the file over
   * if asked); a sharer left alone becomes the owner. Tests call it rather than wait for the timer.
   */
  tick(): void
  role(): QuotaRole
}

export function sqliteQuotaStore(stateDir: string, options: SqliteQuotaOptions = {}): SqliteQuotaStore {
  const { flushMs = 1000, handoverMs = 10_000, clock = Date.now } = options
  const db = openStateDatabase(stateDir, 'quota.sqlite', SCHEMA)
  const file = fileCounters(db)
  const lock = ownerLock(stateDir)
  const counters = new CounterTable(file.used)
  const dirty = new Set<Counter>()
  let role: QuotaRole = 'waiting'
  let flushedAt = clock()
  let lastSweep = 0
  /** The latest `now` a request brought. */
  let latest = 0
  let waiting: Promise<void> | undefined
  // A function, so a check after an await is not narrowed away by the one before it.
  const isClosed = () => role === 'closed'

  /** Takes the lock as owner, else as sharer; false when another process owns the file. */
  const enter = (preferShared: boolean) => {
    if (!preferShared && lock.own()) role = 'owner'
    else if (lock.share()) role = 'shared'
    else if (lock.own()) role = 'owner'
    else return false
    flushedAt = clock()
    return true
  }

  /** The owner's spending added to the file; then, if another process asked, the file handed over. */
  const flush = () => {
    if (role !== 'owner') return
    // Rows are swept by the requests' time, as a sharer sweeps (not the clock, which only paces the flushes).
    const sweep = latest - lastSweep > 3_600_000
    if (sweep) lastSweep = latest
    const wanted = file.flush(dirty, sweep ? Math.floor(latest / 1000) : undefined)
    dirty.clear()
    flushedAt = clock()
    if (!wanted) return
    counters.clear()
    lock.release()
    if (!enter(true)) {
      role = 'waiting'
      file.want()
    }
  }

  /** A sharer alone again (the others stopped) takes the file back as its owner; only when nobody holds it. */
  const upgrade = () => {
    lock.release()
    if (!enter(false)) role = 'waiting'
  }

  const tick = () => {
    if (role === 'owner') flush()
    else if (role === 'shared') upgrade()
  }
  const timer = setInterval(
    () => {
      try {
        tick()
      } catch {
        // The file is busy or full: the spending stays pending, and the next consume retries (and fails loudly).
      }
    },
    Math.max(1, flushMs / 2),
  )
  timer.unref()

  /** Resolves once this store owns or shares the file; rejects when the owner does not hand it over in time. */
  const handover = () =>
    (waiting ??= (async () => {
      const since = clock()
      file.want()
      while (!enter(true)) {
        if (clock() - since > handoverMs)
          throw new Error(`another process holds ${join(stateDir, 'quota.sqlite')} and did not hand it over within ${handoverMs} ms`)
        await Bun.sleep(20)
        if (isClosed()) throw new Error('the quota store is closed')
        file.want()
      }
    })().finally(() => (waiting = undefined)))

  const owned = (subject: string, plan: Plan, cost: number, now: number) => {
    const window = quotaWindow(plan, now).start
    if (now > latest) latest = now
    counters.sweep(now)
    const counter = counters.get(subject, plan, window)
    const allowed = spend(counter, plan, cost)
    if (counter.pending !== 0) dirty.add(counter)
    return quotaState(plan, window, counter.used, allowed)
  }

  const shared = (subject: string, plan: Plan, cost: number, now: number) => {
    const window = quotaWindow(plan, now).start
    if (cost === 0) return quotaState(plan, window, file.used(subject, plan, window), true)
    if (now - lastSweep > 3_600_000) {
      lastSweep = now
      file.sweep(Math.floor(now / 1000))
    }
    return file.consume(subject, plan, cost, window)
  }

  /** Runs `owner` or `sharer` as the role says, after a hand-over if one is under way. */
  const decide = <T>(owner: () => T, sharer: () => T): T | Promise<T> => {
    // The timer may be late: spending is never held longer than flushMs.
    if (role === 'owner' && clock() - flushedAt >= flushMs) flush()
    if (role === 'owner') return owner()
    if (role === 'shared') return sharer()
    if (role === 'closed') throw new Error('the quota store is closed')
    return handover().then(() => decide(owner, sharer))
  }

  const store: SqliteQuotaStore = {
    consume: (subject, plan, cost, now = Date.now()) =>
      decide(
        () => owned(subject, plan, cost, now),
        () => shared(subject, plan, cost, now),
      ),
    refund: (subject, plan, credits, now = Date.now()) =>
      decide(
        () => {
          const window = quotaWindow(plan, now).start
          const counter = counters.get(subject, plan, window)
          // A counter already moved on to a later window holds none of these credits.
          if (counter.window !== window) return quotaState(plan, window, 0, true)
          giveBack(counter, credits)
          if (counter.pending !== 0) dirty.add(counter)
          return quotaState(plan, window, counter.used, true)
        },
        () => {
          const window = quotaWindow(plan, now).start
          return quotaState(plan, window, file.refund(subject, plan, credits, window), true)
        },
      ),
    peek: (subject, plan, now = Date.now()) => store.consume(subject, plan, 0, now),
    tick,
    role: () => role,
    close() {
      clearInterval(timer)
      try {
        if (role === 'owner') flush()
      } finally {
        role = 'closed'
        lock.close()
        db.close()
      }
    },
  }
  if (!enter(options.shared ?? false)) file.want()
  return store
}

/** The statements on quota.sqlite. */
function fileCounters(db: Database) {
  const read = db.query<{ window_start: number; used: number }, [string, number, string]>(
    'SELECT window_start, used FROM quota_counters WHERE plan = ? AND window_seconds = ? AND subject = ?',
  )
  const write = db.query(
    `INSERT INTO quota_counters (plan, window_seconds, subject, window_start, used) VALUES (?1, ?2, ?3, ?4, ?5)
     ON CONFLICT (plan, window_seconds, subject) DO UPDATE SET window_start = excluded.window_start, used = excluded.used`,
  )
  // The owner's spending since its last flush (negative after refunds), added to whatever the row holds
  // for that window; a row of an earlier window starts again from it, a row of a later one is left alone.
  const add = db.query(
    `INSERT INTO quota_counters (plan, window_seconds, subject, window_start, used) VALUES (?1, ?2, ?3, ?4, max(0, ?5))
     ON CONFLICT (plan, window_seconds, subject) DO UPDATE SET
       used = CASE WHEN window_start = excluded.window_start THEN max(0, used + ?5)
                   WHEN window_start < excluded.window_start THEN excluded.used ELSE used END,
       window_start = max(window_start, excluded.window_start)`,
  )
  // One statement, so atomic on its own: only the window the credits were taken in, never below zero.
  const giveBack = db.query<{ used: number }, [string, number, string, number, number]>(
    `UPDATE quota_counters SET used = max(0, used - ?4)
     WHERE plan = ?1 AND window_seconds = ?2 AND subject = ?3 AND window_start = ?5 RETURNING used`,
  )
  // Rows of windows long gone: removed now and then so the table holds only active subjects.
  const sweep = db.query(`DELETE FROM quota_counters WHERE window_start + iif(window_seconds = 0, ${MONTH_BOUND}, window_seconds) < ?`)
  const wanted = db.query<{ wanted: number }, []>('SELECT wanted FROM quota_handover WHERE id = 1')
  const setWanted = db.query<unknown, [number]>('UPDATE quota_handover SET wanted = ? WHERE id = 1')

  const used = (subject: string, plan: Plan, window: number) => {
    const row = read.get(plan.name, windowKey(plan), subject)
    return row && row.window_start === window ? row.used : 0
  }
  const consume = db.transaction((subject: string, plan: Plan, cost: number, window: number) => {
    const before = used(subject, plan, window)
    if (before + cost > plan.credits) return quotaState(plan, window, before, false)
    write.run(plan.name, windowKey(plan), subject, window, before + cost)
    return quotaState(plan, window, before + cost, true)
  })
  /** Adds the counters' pending spending in one transaction; returns whether another process asked for the file. */
  const flush = db.transaction((counters: Set<Counter>, sweepBefore: number | undefined) => {
    for (const c of counters) {
      if (c.pending !== 0) add.run(c.plan, c.key, c.subject, c.window, c.pending)
      c.pending = 0
    }
    if (sweepBefore !== undefined) sweep.run(sweepBefore)
    const asked = wanted.get()?.wanted === 1
    if (asked) setWanted.run(0)
    return asked
  })
  return {
    used,
    consume: (subject: string, plan: Plan, cost: number, window: number) => consume.immediate(subject, plan, cost, window),
    refund: (subject: string, plan: Plan, credits: number, window: number) =>
      giveBack.get(plan.name, windowKey(plan), subject, credits, window)?.used ?? 0,
    flush: (counters: Set<Counter>, sweepBefore?: number) => flush.immediate(counters, sweepBefore),
    sweep: (before: number) => sweep.run(before),
    /** Asks the owner to hand the file over at its next tick (written only when not asked already). */
    want: () => {
      if (wanted.get()?.wanted !== 1) setWanted.run(1)
    },
  }
}

/**
 * `quota.lock`: an SQLite file in rollback-journal mode, used for its locks alone. EXCLUSIVE excludes every
 * other holder, SHARED only an EXCLUSIVE one; attempts never wait (busy_timeout 0).
 */
function ownerLock(stateDir: string) {
  const path = join(stateDir, 'quota.lock')
  const db = new Database(path, { create: true })
  chmodSync(path, 0o600)
  db.exec('PRAGMA busy_timeout = 0')
  const attempt = (step: () => void) => {
    try {
      step()
      return true
    } catch (e) {
      if (db.inTransaction) db.exec('ROLLBACK')
      if ((e as { code?: string }).code === 'SQLITE_BUSY') return false
      throw e
    }
  }
  const release = () => {
    if (db.inTransaction) db.exec('ROLLBACK')
  }
  return {
    own: () => attempt(() => db.exec('BEGIN EXCLUSIVE')),
    // A read inside an open transaction keeps the SHARED lock until it ends. Prepared each time: preparing
    // reads the schema, which is itself refused while another connection holds EXCLUSIVE.
    share: () =>
      attempt(() => {
        db.exec('BEGIN')
        const probe = db.prepare('SELECT count(*) FROM sqlite_master')
        try {
          probe.get()
        } finally {
          probe.finalize()
        }
      }),
    release,
    close() {
      release()
      db.close()
    },
  }
}
