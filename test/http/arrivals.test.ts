/**
 * Requests that arrive in one turn start together (src/http/edge/arrivals.ts): none starts while the loop is
 * still reading arrivals, each stage runs for all of them before the next (breadth-first), every request
 * gets its own answer, a fault in one is that one's alone, and one with a large body is not held back.
 * Then over real sockets: many requests in flight at once, each answered with its own body.
 */
import { expect, test } from 'bun:test'
import { QUEUED_BODY_MAX, startTogether } from '../../src/http/edge/arrivals.ts'

const nextTurn = () => new Promise((next) => setImmediate(next))

/** A handler of three stages (as a request hook, a handler and a reply are), logging each by request. */
function stagedHandler(log: string[]) {
  return async (request: Request) => {
    const name = new URL(request.url).pathname.slice(1)
    log.push(`hook ${name}`)
    await null
    log.push(`handler ${name}`)
    await null
    log.push(`reply ${name}`)
    return new Response(name)
  }
}

const requestsFor = (names: string[]) => names.map((n) => new Request(`http://localhost/${n}`))

test('arrivals of one turn start after it, together, each stage for all of them before the next', async () => {
  const log: string[] = []
  const fetch = startTogether(stagedHandler(log))
  const answers = requestsFor(['a', 'b', 'c']).map(fetch)
  expect(log).toEqual([]) // the loop is still reading arrivals
  const bodies = await Promise.all(answers.map(async (a) => (await a).text()))
  expect(bodies).toEqual(['a', 'b', 'c'])
  expect(log).toEqual(['hook a', 'hook b', 'hook c', 'handler a', 'handler b', 'handler c', 'reply a', 'reply b', 'reply c'])
})

test('a request arriving in a later turn starts in that turn, with those that arrive with it', async () => {
  const log: string[] = []
  const fetch = startTogether(stagedHandler(log))
  const first = fetch(new Request('http://localhost/a'))
  await nextTurn()
  expect(log[0]).toBe('hook a')
  const later = requestsFor(['b', 'c']).map(fetch)
  expect(log).not.toContain('hook b')
  await Promise.all([first, ...later])
  expect(log.filter((l) => !l.endsWith(' a'))).toEqual(['hook b', 'hook c', 'handler b', 'handler c', 'reply b', 'reply c'])
})

test('a request with a large or chunked body starts at once, before the queue: its refusal must not wait for the body', async () => {
  const log: string[] = []
  const fetch = startTogether(stagedHandler(log))
  const post = (name: string, headers: Record<string, string>) =>
    new Request(`http://localhost/${name}`, { method: 'POST', headers, body: 'x' })
  const answers = [
    fetch(post('small', { 'content-length': String(QUEUED_BODY_MAX) })),
    fetch(post('large', { 'content-length': String(QUEUED_BODY_MAX + 1) })),
    fetch(post('chunked', { 'transfer-encoding': 'chunked' })),
  ]
  expect(log).toEqual(['hook large', 'hook chunked'])
  await Promise.all(answers)
  expect(log).toContain('reply small')
})

test("a fault in one request's first stage is its own: the others of the turn are answered", async () => {
  const fetch = startTogether((request) => {
    if (request.url.endsWith('/bad')) throw new Error('broken hook')
    return new Response('ok')
  })
  const [good, bad, alsoGood] = requestsFor(['good', 'bad', 'also-good']).map(fetch)
  await expect(bad!).rejects.toThrow('broken hook')
  expect(await (await good!).text()).toBe('ok')
  expect(await (await alsoGood!).text()).toBe('ok')
})

test('over real sockets, 64 requests in flight at once each get their own answer', async () => {
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: startTogether(async (request) => {
      await null
      return new Response(new URL(request.url).searchParams.get('n'))
    }),
  })
  try {
    const ns = Array.from({ length: 64 }, (_, i) => String(i))
    const bodies = await Promise.all(ns.map(async (n) => (await fetch(`http://127.0.0.1:${server.port}/?n=${n}`)).text()))
    expect(bodies).toEqual(ns)
  } finally {
    server.stop(true)
  }
})
