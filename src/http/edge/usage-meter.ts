/**
 * Counts every answered /api/v1 request of a known caller into the usage ledger (stores/usage.ts), off the
 * request path: a request adds to a row of this process's memory (one map lookup), and the rows are
 * written to the store in one batch a second. No store round trip is added to a request.
 *
 * A batch that cannot be written (Redis away, a locked file) is kept, with its id, and written again on
 * the next tick: the store applies an id once, so a retry never counts twice. What waits is bounded
 * (`maxPendingRows`): past it the oldest batch is dropped and said so in the log and in /metrics. A crash
 * loses what was not yet written: at most the last interval (a second); a clean stop writes everything.
 *
 * A read (GET /api/v1/usage) writes nothing: it adds this process's rows not yet written to what the store
 * answers, so a caller polling it sees its latest requests and costs the store one read, never a write.
 */
import { asLogger, type LogSink } from '../../lib/logger.ts'
import {
  addRow,
  emptyCounts,
  keyText,
  latencyBucket,
  matches,
  periodOf,
  sortRows,
  type UsageBatch,
  type UsageQuery,
  type UsageRow,
  type UsageStore,
} from '../../stores/usage.ts'
import type { Exchange } from './exchange.ts'

export interface UsageMeter {
  /** Counts one answered request (observability.ts, after the response is made). Callers unknown are not counted. */
  record(exchange: Exchange | undefined, method: string, status: number, seconds: number, bytes: number): void
  /** Writes what is pending now (tests, a reader that wants this process's latest counts, shutdown). */
  flush(): Promise<void>
  /** The ledger with this process's counts not yet written added in, as the store will add them; writes nothing. */
  read(query: UsageQuery): Promise<UsageRow[]>
  /** Prometheus lines: rows waiting to be written, batches dropped. */
  metrics(): string
  /** Stops the timer and writes everything left. */
  close(): Promise<void>
}

export interface UsageMeterOptions {
  /** Milliseconds between writes (default 1,000). */
  intervalMs?: number
  /** Days daily rows are kept (ALMANAC_USAGE_RETENTION_DAYS). */
  retentionDays?: number
  /** Rows that may wait for a store that does not answer before the oldest batch is dropped. */
  maxPendingRows?: number
  clock?: () => number
  log?: LogSink
}

/** `2xx`, `3xx`, or the status class and the problem's type: `4xx:not-found`, `429:quota`, `5xx:unavailable`. */
function outcomeOf(status: number, problem: string | undefined): string {
  if (status < 300) return '2xx'
  if (status < 400) return '3xx'
  const kind = status === 429 ? '429' : status < 500 ? '4xx' : '5xx'
  return problem ? `${kind}:${problem}` : kind
}

/** A process-unique prefix for batch ids: workers and instances never share one. */
const BATCH_PREFIX = crypto.getRandomValues(new Uint32Array(2)).reduce((s, n) => s + n.toString(36), '')

/**
 * Keeps the meter's writes and reads of the store apart. A batch being written may or may not be in what a
 * read answers, so no read overlaps a write: a read waits for the write under way (it never starts one), and
 * a write waits for the reads under way; reads asked while a write waits wait for it, so polling never
 * starves the writes. One write at a time, so batches go out in order.
 */
function storeGate() {
  let writing: Promise<void> | null = null
  let reading = 0
  let readsEnded: (() => void) | null = null
  return {
    async write(write: () => Promise<void>): Promise<void> {
      while (writing) await writing
      // Set before the reads end, so reads asked meanwhile wait for this write.
      writing = (async () => {
        while (reading) await new Promise<void>((wake) => (readsEnded = wake))
        await write()
      })().finally(() => (writing = null))
      await writing
    },
    async read<T>(read: () => Promise<T>): Promise<T> {
      while (writing) await writing
      reading++
      try {
        return await read()
      } finally {
        if (--reading === 0 && readsEnded) {
          readsEnded()
          readsEnded = null
        }
      }
    },
  }
}

/**
 * The store's rows with the meter's `unwritten` ones that answer `query` added in, as the store will add them
 * (addRow, the memory store's own sum). Taken while no write runs (storeGate), so each row counts exactly once;
 * but a batch Redis applied whose reply was lost is still kept, so it counts twice here until its retry (skipped).
 */
function withUnwritten(stored: UsageRow[], query: UsageQuery, unwritten: Iterable<UsageRow>): UsageRow[] {
  let merged: Map<string, UsageRow> | undefined
  for (const row of unwritten) {
    if (query.caller !== undefined && row.caller !== query.caller) continue
    if (!matches({ ...row, period: periodOf(query.grain, row.period) }, query)) continue
    merged ??= new Map(stored.map((r) => [keyText(r.period, r), r]))
    addRow(merged, query.grain, row)
  }
  return merged ? sortRows([...merged.values()]) : stored
}

export function createUsageMeter(store: UsageStore, options: UsageMeterOptions = {}): UsageMeter {
  const { intervalMs = 1000, retentionDays = 400, maxPendingRows = 100_000, clock = Date.now } = options
  const log = asLogger(options.log ?? (() => {}))
  /**
   * This interval's rows, by route (its table entry: no text made per request; `METHOD label` text when no route
   * ran or a HEAD reached a GET route), then caller, then outcome: three lookups, nothing built for a known row.
   */
  let rows = new Map<unknown, Map<string, Map<string, UsageRow>>>()
  let rowCount = 0
  /** The hour the rows count in; a new hour seals them first. */
  let hour = -1
  const waiting: UsageBatch[] = []
  let waitingRows = 0
  let batches = 0
  let dropped = 0
  let failing = false
  let prunedAt = 0
  const gate = storeGate()

  const newRow = (exchange: Exchange, method: string, caller: string, customer: string, outcome: string): UsageRow => {
    const route = exchange.route
    const owner = route?.owner ?? exchange.resolved?.owner
    const pattern = route?.pattern ?? exchange.resolved?.label ?? ''
    rowCount++
    return { period: hour, caller, customer, domain: owner?.domain.name ?? '', route: `${method} ${pattern}`, outcome, ...emptyCounts() }
  }

  const record: UsageMeter['record'] = (exchange, method, status, seconds, bytes) => {
    const principal = exchange?.principal
    if (!principal) return
    const now = Math.floor(clock() / 1000)
    const period = periodOf('hour', now)
    if (period !== hour) {
      seal()
      hour = period
    }
    const route = exchange.route
    const byRoute = route && route.method === method ? route : `${method} ${route?.pattern ?? exchange.resolved?.label ?? ''}`
    let callers = rows.get(byRoute)
    if (!callers) rows.set(byRoute, (callers = new Map()))
    const customer = principal.customer ?? ''
    const who = customer ? `${principal.caller}\t${customer}` : principal.caller
    let outcomes = callers.get(who)
    if (!outcomes) callers.set(who, (outcomes = new Map()))
    const outcome = outcomeOf(status, exchange.problem)
    let row = outcomes.get(outcome)
    if (!row) outcomes.set(outcome, (row = newRow(exchange, method, principal.caller, customer, outcome)))
    row.requests++
    row.credits += exchange.credits ?? 0
    row.refunded += exchange.refunded ?? 0
    row.bytes += bytes
    row.latency[latencyBucket(seconds * 1000)]!++
  }

  /** Moves the rows counted so far into a batch of their own. */
  const seal = () => {
    if (!rowCount) return
    const sealed: UsageRow[] = []
    for (const callers of rows.values()) for (const outcomes of callers.values()) for (const row of outcomes.values()) sealed.push(row)
    const batch: UsageBatch = { id: `${BATCH_PREFIX}-${++batches}`, rows: sealed }
    rows = new Map()
    rowCount = 0
    waiting.push(batch)
    waitingRows += batch.rows.length
    while (waitingRows > maxPendingRows && waiting.length > 1) {
      const lost = waiting.shift()!
      waitingRows -= lost.rows.length
      dropped++
      log({ level: 'error', msg: 'usage ledger: a batch was dropped, the store has not answered', rows: lost.rows.length })
    }
  }

  /** Writes the waiting batches in order; stops at the first that fails (kept for the next tick). */
  const drain = async () => {
    while (waiting.length) {
      try {
        await store.write(waiting[0]!)
      } catch (e) {
        if (!failing) log({ level: 'error', msg: 'usage ledger: cannot write, will retry', error: (e as Error).message })
        failing = true
        return
      }
      if (failing) log({ level: 'info', msg: 'usage ledger: writing again' })
      failing = false
      waitingRows -= waiting.shift()!.rows.length
    }
    const now = clock()
    if (now - prunedAt > 3_600_000) {
      prunedAt = now
      try {
        await store.prune(now, retentionDays)
      } catch {}
    }
  }

  const flush = async () => {
    seal()
    await gate.write(drain)
  }

  /** This process's rows not yet written: the waiting batches (the first may be being written) and the open rows. */
  const unwritten = function* () {
    for (const batch of waiting) yield* batch.rows
    for (const callers of rows.values()) for (const outcomes of callers.values()) yield* outcomes.values()
  }
  const read = (query: UsageQuery) => gate.read(async () => withUnwritten(await store.read(query), query, unwritten()))

  const timer = setInterval(() => void flush(), intervalMs)
  timer.unref()

  return {
    record,
    flush,
    read,
    metrics: () =>
      [
        '# HELP almanac_usage_pending_rows Usage ledger rows counted and not yet written to the store.',
        '# TYPE almanac_usage_pending_rows gauge',
        `almanac_usage_pending_rows ${waitingRows + rowCount}`,
        '# HELP almanac_usage_dropped_batches_total Usage ledger batches dropped because the store did not answer for too long.',
        '# TYPE almanac_usage_dropped_batches_total counter',
        `almanac_usage_dropped_batches_total ${dropped}`,
      ].join('\n'),
    async close() {
      clearInterval(timer)
      await flush()
    },
  }
}
