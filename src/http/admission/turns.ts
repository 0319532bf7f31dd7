/**
 * Turns of the event loop, shared between callers. One process answers everyone on one thread, and in
 * each turn of its loop it starts every request that has arrived; a caller holding 64 connections would
 * have 64 requests started before a second caller's one, every turn, and that caller's latency would be
 * the other's whole backlog. So a caller may start at most `perTurn` requests in one turn: the rest wait,
 * in arrival order and unread, for the next turns (a `setImmediate`, which runs after the loop has taken
 * in new arrivals), where each waiting caller gets `perTurn` more. Another caller's request starts in the
 * turn it arrives in, after at most `perTurn` requests of each busy caller once the turn is busy (below).
 *
 * Waiting is not free: a request that waits answers through a promise in a later turn, and over HTTP that
 * cost ~20-25 µs a request (measured with one key on 32 connections: one start a turn kept a queue that
 * never drained, so every request waited). So a turn that has so far run for less than `sliceMs` is not
 * busy: a caller past its `perTurn` starts still starts now, and lets its oldest waiting request go with
 * it. What a newcomer waits for is then bounded by time, not by how many connections a caller holds: the
 * `perTurn` starts of each busy caller, plus what the turn ran before it while under the slice, plus the
 * two requests let go just under it. A caller alone with cheap requests never waits.
 *
 * A turn's length is known only once it has run, and the server starts a turn's arrivals together before
 * any of their work runs (arrivals.ts). So a turn is busy once its time so far, or its starts times what a
 * start cost in the last turns (their length over their starts), reaches the slice.
 *
 * What waits is bounded (`maxWaiting` per caller, a 429 beyond it). Nothing here is per request but a Map
 * lookup and a clock read; the turn marker (one setImmediate) is set only in turns where requests start.
 */
import { AlmanacError } from '../../lib/errors.ts'

/**
 * Each caller's waiting starts in arrival order, with the body bytes they hold, for both schedulers below.
 * Callers are kept in the order they began waiting (a Map's insertion order).
 */
class WaitingStarts {
  private readonly byCaller = new Map<string, { starts: (() => void)[]; bytes: number[]; held: number }>()
  /** Starts waiting, all callers. */
  count = 0

  has(caller: string): boolean {
    return this.byCaller.has(caller)
  }

  /** Callers with starts waiting, in the order they began waiting (or were sent to the back). */
  callers(): IterableIterator<string> {
    return this.byCaller.keys()
  }

  /** Runs up to `n` of `caller`'s oldest starts; `toBack`: a caller with more left goes behind the others. */
  release(caller: string, n: number, toBack = false): number {
    const queue = this.byCaller.get(caller)
    if (!queue) return 0
    const go = queue.starts.splice(0, n)
    for (const b of queue.bytes.splice(0, go.length)) queue.held -= b
    this.count -= go.length
    if (!queue.starts.length || toBack) this.byCaller.delete(caller)
    if (queue.starts.length && toBack) this.byCaller.set(caller, queue)
    for (const start of go) start()
    return go.length
  }

  /**
   * A promise of `caller`'s start, holding `bytes`; a 429 (`too_many`, its credits given back) when the caller
   * already has `maxCount` waiting or they would hold more than `maxBytes`. `what`: the 429's words for them.
   */
  add(caller: string, bytes: number, maxCount: number, maxBytes: number, what: (count: number, held: number) => string): Promise<void> {
    let queue = this.byCaller.get(caller)
    if (queue && (queue.starts.length >= maxCount || queue.held + bytes > maxBytes))
      throw new AlmanacError(
        'too_many',
        `This key has ${what(queue.starts.length, queue.held)}, the most one caller may: send the next when one is answered.`,
        { headers: { 'Retry-After': '1' } },
      )
    if (!queue) this.byCaller.set(caller, (queue = { starts: [], bytes: [], held: 0 }))
    const waiting = queue
    this.count++
    waiting.held += bytes
    waiting.bytes.push(bytes)
    return new Promise<void>((resolve) => waiting.starts.push(resolve))
  }
}

export interface Turns {
  /**
   * Counts one request of `caller` in this turn: undefined to start it now, or a promise of its turn.
   * `bytes`: what its unread body may hold while it waits (its Content-Length, or its route's limit).
   */
  take(caller: string, bytes: number): Promise<void> | undefined
  /** Requests waiting for a turn, for /metrics. */
  waiting(): number
}

export interface TurnLimits {
  /** Requests one caller may start in one turn (0: no limit). */
  perTurn: number
  /** Requests one caller may have waiting. */
  maxWaiting: number
  /** Body bytes one caller's waiting requests may hold (the server buffers a body as it arrives). */
  maxWaitingBytes: number
  /** A turn that has run for less than this (ms) lets a caller start past `perTurn` (0: never). */
  sliceMs: number
  /** Milliseconds, monotonic (tests pass their own). */
  now?: () => number
}

export function callerTurns({ perTurn, maxWaiting, maxWaitingBytes, sliceMs, now = performance.now.bind(performance) }: TurnLimits): Turns {
  /** Requests each caller started in this turn. */
  const started = new Map<string, number>()
  /** Each caller's waiting requests, and the body bytes they may hold. */
  const waiting = new WaitingStarts()
  let marked = false
  /** When this turn began: its marker's run, or its first start when no marker was pending. */
  let turnStarted = 0
  /** Requests started in this turn, all callers. */
  let starts = 0
  /** What a start has cost lately (ms): the last turns' length over their starts, a moving average. */
  let costPerStart = 0

  const nextTurn = () => {
    const t = now()
    if (starts > 0) {
      const cost = (t - turnStarted) / starts
      costPerStart = costPerStart === 0 ? cost : costPerStart * 0.75 + cost * 0.25
    }
    marked = false
    turnStarted = t
    started.clear()
    starts = 0
    for (const caller of waiting.callers()) {
      const released = waiting.release(caller, perTurn)
      started.set(caller, released)
      starts += released
    }
    if (started.size) mark()
  }
  const mark = () => {
    if (marked) return
    marked = true
    setImmediate(nextTurn)
  }

  return {
    take(caller, bytes) {
      if (perTurn <= 0) return undefined
      const t = now()
      if (!marked) turnStarted = t
      const n = started.get(caller) ?? 0
      // How long the turn will have run: requests started together (arrivals.ts) all start before any of their
      // work runs, so the clock alone would call every turn short; what its starts cost lately says more.
      const roomy = sliceMs > 0 && Math.max(t - turnStarted, starts * costPerStart) < sliceMs
      if (roomy || (!waiting.has(caller) && n < perTurn)) {
        // With room in the turn, a caller that has requests waiting starts this one and lets its oldest go
        // with it: the queue drains while the turn has room, so none waits for long behind newer ones.
        const going = 1 + waiting.release(caller, 1)
        started.set(caller, n + going)
        starts += going
        mark()
        return undefined
      }
      const turn = waiting.add(
        caller,
        bytes,
        maxWaiting,
        maxWaitingBytes,
        (count, held) => `${count} requests (${held} bytes of bodies) waiting for their turn`,
      )
      mark()
      return turn
    },
    waiting: () => waiting.count,
  }
}

export interface HeavySteps {
  /**
   * Called before each heavy step of `caller`'s work (a large body's scan, its parse: request-guards.ts; a slice of
   * a bulk: `inSteps`): undefined to go on now, or a promise of a turn of its own. `bytes`: what the step's input
   * holds in memory while it waits; a 429 when the caller's waiting steps would hold more than `maxWaitingBytes`.
   */
  take(caller: string, bytes?: number, maxWaitingBytes?: number): Promise<void> | undefined
  /** Steps waiting for their turn. */
  waiting(): number
}

/**
 * One heavy step a turn of the event loop, whoever it is for. Some work is milliseconds on the main thread for
 * one request: a body over the default limit (a bulk list, a polygon, a hash input) costs ~5-8 ms a MB to scan
 * and parse, for one credit, and a bulk of 100 user agents 4-8 ms of parsing. `callerTurns` never sees it: a
 * request's turn is taken before its body is read. Four callers each keeping such a request in flight made
 * every turn hold four of them, and a victim's cheap lookups queued behind 30 ms turns, turn after turn
 * (bench/fairness.ts, invalid-bulk and ua-bulk: p99 1-5 s, hundreds of 429s). So such work goes in steps of
 * ~1-3 ms, each waiting for a turn of its own: one step a turn, callers in rotation (each caller's own in
 * order), the next in a later turn (a `setImmediate`, after the loop has taken in new arrivals). What any
 * request waits behind is then one step, not every heavy request that arrived together.
 */
export function heavyStepTurns(): HeavySteps {
  /** Callers with steps waiting; a caller just served goes behind the others. */
  const waiting = new WaitingStarts()
  /** A step has gone in this turn (the marker that ends the turn is set). */
  let taken = false

  const nextTurn = () => {
    const first = waiting.callers().next()
    if (first.done) {
      taken = false
      return
    }
    setImmediate(nextTurn)
    waiting.release(first.value, 1, true)
  }

  return {
    take(caller, bytes = 0, maxWaitingBytes = Infinity) {
      if (!taken) {
        taken = true
        setImmediate(nextTurn)
        return undefined
      }
      return waiting.add(
        caller,
        bytes,
        Infinity,
        maxWaitingBytes,
        (count, held) => `${count} large request bodies (${held} bytes) waiting to be parsed`,
      )
    },
    waiting: () => waiting.count,
  }
}

/** The process's one: the event loop is the process's, whichever app a step is for (a data swap runs two). */
export const heavySteps = heavyStepTurns()

/**
 * `work` over `items` in slices of `size`, each slice a heavy step with a turn of its own (`heavySteps`), its
 * results in order. `from`: the index of the slice's first item.
 */
export async function inSteps<T, R>(
  caller: string,
  items: readonly T[],
  size: number,
  work: (slice: readonly T[], from: number) => R[],
): Promise<R[]> {
  const out: R[] = []
  for (let from = 0; from < items.length; from += size) {
    const turn = heavySteps.take(caller)
    if (turn) await turn
    for (const r of work(items.slice(from, from + size), from)) out.push(r)
  }
  return out
}
