/**
 * Turns of the event loop shared between callers (src/http/turns.ts), through the real app: requests sent
 * in one go, their answers' order observed (no clock). A caller with a backlog starts one request a turn;
 * another caller's request, arriving behind that backlog, is answered in the first turn. Nothing waiting
 * is lost; past what one caller may have waiting, a 429 whose credit is given back.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { testApp, TEST_KEY, type TestApp } from '../support/app.ts'

const OTHER_KEY = 'other-caller-key-0002'
const env = { ALMANAC_PLANS: 'test:1000000/1d', ALMANAC_API_KEYS: `${TEST_KEY},${OTHER_KEY}` }
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
