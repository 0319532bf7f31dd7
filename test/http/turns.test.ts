/**
 * Turns of the event loop shared between callers (src/http/admission/turns.ts), through the real app: requests sent
 * in one go, their answers' order observed (no clock). A caller with a backlog starts one request a turn;
 * another caller's request, arriving behind that backlog, is answered in the first turn. Nothing waiting
 * is lost; past what one caller may have waiting, a 429 whose credit is given back. Through the app the
 * slice is 0 (the count alone rules: a turn's length is the machine's); the slice itself is tested on
 * `callerTurns` with a clock the test moves.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { callerTurns, heavyStepTurns, inSteps } from '../../src/http/admission/turns.ts'
import { testApp, TEST_KEY, type TestApp } from '../support/app.ts'
import { turnCounter } from '../support/turns.ts'

const OTHER_KEY = 'other-caller-key-0002'
const env = { ALMANAC_PLANS: 'test:1000000/1d', ALMANAC_API_KEYS: `${TEST_KEY},${OTHER_KEY}`, ALMANAC_TURN_SLICE_US: '0' }
const get = (app: TestApp, key: string, path = '/api/v1/countries/FR') =>
  app.handle(new Request(`http://localhost${path}`, { headers: { 'x-api-key': key, 'x-response-form': 'bare' } }))

describe('one request a turn per caller (the default)', () => {
  let app: TestApp
  beforeAll(async () => {
    app = await testApp({ env })
  })
  afterAll(() => app.close())

  test("another caller's request is answered before the backlog of a busy one", async () => {
    const order: string[] = []
    const sent = Array.from({ length: 20 }, (_, i) => get(app, TEST_KEY).then((r) => (order.push(`a${i}`), r)))
    sent.push(get(app, OTHER_KEY).then((r) => (order.push('b'), r)))
    const answers = await Promise.all(sent)
    expect(answers.map((r) => r.status)).toEqual(Array(21).fill(200))
    // a0 started in the turn it arrived in, as did b; a1..a19 waited for later turns, one a turn.
    expect(order.indexOf('b')).toBeLessThanOrEqual(1)
    expect(order.filter((o) => o !== 'b')).toEqual(Array.from({ length: 20 }, (_, i) => `a${i}`))
  })

  test('without turns (0) the busy caller is answered first, in arrival order', async () => {
    const open = await testApp({ env: { ...env, ALMANAC_REQUESTS_PER_TURN: '0' } })
    try {
      const order: string[] = []
      const sent = Array.from({ length: 20 }, (_, i) => get(open, TEST_KEY).then(() => order.push(`a${i}`)))
      sent.push(get(open, OTHER_KEY).then(() => order.push('b')))
      await Promise.all(sent)
      expect(order.indexOf('b')).toBeGreaterThan(1)
    } finally {
      await open.close()
    }
  })
})

describe('what one caller may have waiting', () => {
  let app: TestApp
  beforeAll(async () => {
    app = await testApp({ env: { ...env, ALMANAC_REQUESTS_WAITING_PER_CALLER: '3' } })
  })
  afterAll(() => app.close())

  test('past the count: 429 with Retry-After, and its credit given back', async () => {
    const before = Number((await get(app, TEST_KEY)).headers.get('x-quota-remaining'))
    await new Promise((next) => setImmediate(next)) // a new turn: that request counted in the last one
    const answers = await Promise.all(Array.from({ length: 10 }, () => get(app, TEST_KEY)))
    // One starts in this turn, three wait for theirs, six are refused.
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 429, 429, 429, 429, 429, 429])
    const refused = (await answers[9]!.json()) as { type: string; detail: string }
    expect(refused.type).toBe('urn:almanac:problem:too-many')
    expect(refused.detail).toContain('waiting for their turn')
    expect(answers[9]!.headers.get('retry-after')).toBe('1')
    const after = Number((await get(app, TEST_KEY)).headers.get('x-quota-remaining'))
    expect(before - after).toBe(5) // four answered and this one: the refused six cost nothing
  })

  test('past the bytes their bodies may hold: 429', async () => {
    const small = await testApp({ env: { ...env, ALMANAC_REQUEST_BYTES_WAITING_PER_CALLER: '1000' } })
    try {
      const body = JSON.stringify({ input: 'x'.repeat(580) })
      const post = () =>
        small.handle(
          new Request('http://localhost/api/v1/hash/sha256', {
            method: 'POST',
            headers: { 'x-api-key': TEST_KEY, 'content-type': 'application/json', 'content-length': String(body.length) },
            body,
          }),
        )
      const answers = await Promise.all([post(), post(), post()])
      // One starts; one waits holding ~600 bytes; a second ~600 would pass 1000.
      expect(answers.map((r) => r.status)).toEqual([200, 200, 429])
    } finally {
      await small.close()
    }
  })
})

describe('a turn not yet busy (the slice)', () => {
  /** Turns over a clock the test sets; `started` lists requests as they start, by name. */
  const turnsAt = (sliceMs: number) => {
    const clock = { ms: 0 }
    const turns = callerTurns({ perTurn: 1, maxWaiting: 64, maxWaitingBytes: 1 << 20, sliceMs, now: () => clock.ms })
    const started: string[] = []
    const send = (caller: string, name: string) => {
      const turn = turns.take(caller, 0)
      if (turn) void turn.then(() => started.push(name))
      else started.push(name)
    }
    return { clock, turns, started, send }
  }
  const nextTurn = () => new Promise((next) => setImmediate(next))

  test('under the slice a caller starts past its one request a turn; past it, the rest wait', async () => {
    const { clock, started, send } = turnsAt(0.25)
    await nextTurn()
    send('a', 'a0')
    clock.ms = 0.1
    send('a', 'a1')
    clock.ms = 0.24
    send('a', 'a2')
    clock.ms = 0.25 // the turn has now run for its slice
    send('a', 'a3')
    send('b', 'b0') // another caller still gets its one start
    send('a', 'a4')
    expect(started).toEqual(['a0', 'a1', 'a2', 'b0'])
    await nextTurn()
    // The next turn starts one waiting request a caller, in order.
    expect(started).toEqual(['a0', 'a1', 'a2', 'b0', 'a3'])
  })

  test('a caller with requests waiting, in a turn with room: its oldest starts first', async () => {
    const { clock, turns, started, send } = turnsAt(0.25)
    await nextTurn()
    const first = Array.from({ length: 10 }, (_, i) => `a${i}`)
    for (const name of first) send('a', name)
    clock.ms = 0.3 // busy (ten starts in 0.3 ms: 0.03 ms a start): these wait
    send('a', 'w1')
    send('a', 'w2')
    expect(turns.waiting()).toBe(2)
    await nextTurn() // the new turn began at 0.3 ms; w1 starts
    await Promise.resolve()
    expect(started).toEqual([...first, 'w1'])
    // The turn has room: w2, the oldest, is let go, and a10 with it since none other waits (a10 runs on at
    // once, w2 at the next microtask).
    send('a', 'a10')
    expect(turns.waiting()).toBe(0)
    await Promise.resolve()
    expect(started).toEqual([...first, 'w1', 'a10', 'w2'])
  })

  test('a turn is busy once its starts, at what a start cost in the last turn, would run for the slice', async () => {
    const { clock, turns, started, send } = turnsAt(1)
    await nextTurn()
    for (const name of ['a0', 'a1', 'a2', 'a3']) send('a', name)
    clock.ms = 2 // the turn ran 2 ms: 0.5 ms a start
    await nextTurn()
    // The clock does not move, as when a turn's arrivals all start before any of their work runs: two starts
    // are 1 ms of work to come, the slice, so the third waits.
    send('a', 'b0')
    send('a', 'b1')
    send('a', 'b2')
    expect(started).toEqual(['a0', 'a1', 'a2', 'a3', 'b0', 'b1'])
    expect(turns.waiting()).toBe(1)
    await nextTurn()
    expect(started).toEqual(['a0', 'a1', 'a2', 'a3', 'b0', 'b1', 'b2'])
  })

  test('slice 0: one start a turn, whatever the clock says', async () => {
    const { started, send } = turnsAt(0)
    await nextTurn()
    for (let i = 0; i < 4; i++) send('a', `a${i}`)
    expect(started).toEqual(['a0'])
    await nextTurn()
    expect(started).toEqual(['a0', 'a1'])
  })
})

describe('one heavy step a turn, callers in rotation (heavyStepTurns)', () => {
  test("steps that arrive together go one a turn, each caller in turn, each caller's own in order", async () => {
    const turns = heavyStepTurns()
    const clock = turnCounter()
    await new Promise((next) => setImmediate(next))
    const went: { body: string; tick: number }[] = []
    const all: Promise<void>[] = []
    for (const [caller, body] of [
      ['a', 'a1'],
      ['a', 'a2'],
      ['a', 'a3'],
      ['b', 'b1'],
      ['b', 'b2'],
      ['c', 'c1'],
    ] as const) {
      const turn = turns.take(caller, 1_000_000, 10_000_000)
      const go = () => void went.push({ body, tick: clock.now() })
      all.push(turn ? turn.then(go) : Promise.resolve(go()))
    }
    expect(turns.waiting()).toBe(5)
    await Promise.all(all)
    clock.stop()
    // a1 went at once; then a, b and c in rotation (a went first, so it waits behind b and c).
    expect(went.map((w) => w.body)).toEqual(['a1', 'a2', 'b1', 'c1', 'a3', 'b2'])
    expect(new Set(went.map((w) => w.tick)).size).toBe(went.length)
    expect(turns.waiting()).toBe(0)
  })

  test('a step in a later turn goes at once; past the bytes one caller may have waiting, a 429', async () => {
    const turns = heavyStepTurns()
    const MAX = 2_500_000
    await new Promise((next) => setImmediate(next))
    expect(turns.take('a', 1_000_000, MAX)).toBeUndefined()
    const waiting = [turns.take('a', 1_000_000, MAX), turns.take('a', 1_000_000, MAX)]
    expect(waiting.every((w) => w instanceof Promise)).toBe(true)
    expect(() => turns.take('a', 1_000_000, MAX)).toThrow(/waiting/)
    // Another caller's bytes are its own.
    expect(turns.take('b', 1_000_000, MAX)).toBeInstanceOf(Promise)
    await Promise.all(waiting)
    await new Promise((next) => setImmediate(next))
    await new Promise((next) => setImmediate(next))
    expect(turns.waiting()).toBe(0)
    await new Promise((next) => setImmediate(next))
    expect(turns.take('a', 1_000_000, MAX)).toBeUndefined()
  })

  test("inSteps: two callers' bulks in slices, one slice a turn, alternating, results in order", async () => {
    const turn = turnCounter()
    await new Promise((next) => setImmediate(next))
    const slices: string[] = []
    const ticks: number[] = []
    const work = (name: string) => (slice: readonly number[], from: number) => {
      slices.push(`${name}@${from}`)
      ticks.push(turn.now())
      return slice.map((x, i) => `${name}${from + i}:${x * 2}`)
    }
    const items = Array.from({ length: 25 }, (_, i) => i)
    const [a, b] = await Promise.all([inSteps('a', items, 10, work('a')), inSteps('b', items, 10, work('b'))])
    turn.stop()
    expect(a).toEqual(items.map((x) => `a${x}:${x * 2}`))
    expect(b).toEqual(items.map((x) => `b${x}:${x * 2}`))
    // a's first slice takes the turn and a queues its second before b asks; then they alternate.
    expect(slices).toEqual(['a@0', 'a@10', 'b@0', 'a@20', 'b@10', 'b@20'])
    expect(new Set(ticks).size).toBe(6)
  })
})
