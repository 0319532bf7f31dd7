/**
 * Response headers come from kept templates (http/reply/response-headers.ts): the part that repeats (plan, window,
 * definitions date, Cache-Control) is copied, the rest set per answer. Callers on different plans, routes of
 * every kind and a clock that crosses windows are interleaved, and each answer's headers are checked against
 * what its own caller's plan and window say, worked out here from the plan and the clock. A template keyed
 * on too little, or changed in place, hands one answer's values to another and fails this.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { testApp, type TestApp } from '../support/app.ts'

const KEYS = { a: 'alpha-key-0123456789', b: 'beta-key-0123456789', c: 'gamma-key-0123456789' }
// gamma differs from alpha by its name alone: its RateLimit policy.
const PLANS = { alpha: { credits: 1000, window: 86_400 }, beta: { credits: 500, window: 3_600 }, gamma: { credits: 1000, window: 86_400 } }
const PLAN_OF = { a: 'alpha', b: 'beta', c: 'gamma' } as const

let now = Date.UTC(2026, 10, 23, 12, 30, 0)
let app: TestApp
beforeAll(async () => {
  app = await testApp({
    env: {
      ALMANAC_PLANS: 'alpha:1000/1d,beta:500/1h,gamma:1000/1d',
      ALMANAC_API_KEYS: `${KEYS.a}:alpha,${KEYS.b}:beta,${KEYS.c}:gamma`,
      ALMANAC_DEFAULT_PLAN: 'alpha',
    },
    clock: () => now,
  })
})
afterAll(() => app.close())

/** Routes of each kind: cacheable reference data, a `current` answer, an uncached one, a problem. */
const ROUTES = [
  { path: '/api/v1/countries/FR', status: 200, control: 'private, max-age=3600', dated: true },
  { path: '/api/v1/timezones/Europe/Paris', status: 200, control: 'private, no-cache', dated: false },
  { path: '/api/v1/meta/datasets/countries', status: 200, control: null, dated: false },
  { path: '/api/v1/countries/XX', status: 404, control: null, dated: true },
]

/** Credits each caller spent in the window it is in, by window start. */
const spent = new Map<string, number>()

async function check(who: keyof typeof KEYS, route: (typeof ROUTES)[number], ifNoneMatch?: string) {
  const plan = PLANS[PLAN_OF[who]]
  const start = Math.floor(now / 1000 / plan.window) * plan.window
  const reset = start + plan.window
  const used = (spent.get(`${who}@${start}`) ?? 0) + 1
  spent.set(`${who}@${start}`, used)
  const headers: Record<string, string> = { 'x-api-key': KEYS[who], 'x-request-id': `${who}-${used}-${start}` }
  if (ifNoneMatch) headers['if-none-match'] = ifNoneMatch
  const res = await app.request('GET', route.path, { headers })
  const h = res.headers
  const remaining = plan.credits - used
  expect({ who, path: route.path, status: res.status, headers: Object.fromEntries(h) }).toMatchObject({
    who,
    path: route.path,
    status: ifNoneMatch ? 304 : route.status,
    headers: {
      'x-quota-limit': String(plan.credits),
      'x-quota-remaining': String(remaining),
      'x-quota-reset': String(reset),
      'ratelimit-policy': `"${PLAN_OF[who]}";q=${plan.credits};w=${plan.window}`,
      ratelimit: `"${PLAN_OF[who]}";r=${remaining};t=${reset - Math.floor(now / 1000)}`,
      'x-request-id': headers['x-request-id'],
      vary: 'X-Response-Form, Accept-Encoding',
    },
  })
  expect(h.get('content-type')).toBe(ifNoneMatch ? null : 'application/json')
  expect(h.get('cache-control')).toBe(route.control)
  expect(h.has('etag')).toBe(route.control !== null)
  expect(h.get('x-definitions-updated')).toEqual(route.dated ? expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/) : null)
  await res.arrayBuffer()
  return h.get('etag')
}

test('interleaved callers, routes and windows each get their own headers', async () => {
  /** The reference route's ETag each caller saw on its last 200 there (none after a 304: the next asks in full). */
  const etags = new Map<string, string | null>()
  for (let step = 0; step < 120; step++) {
    // Seven minutes a step: the hourly plan's window turns every eight or nine steps, the daily one once.
    now += 7 * 60_000
    const who = (['a', 'b', 'c'] as const)[step % 3]!
    const route = ROUTES[(step * 7) % ROUTES.length]!
    // Reference data's ETag holds while the data does: sent back, it gets a 304. A 200 and a 304 alternate on
    // one template, so a 304 that changed the template would show on the next 200.
    if (route !== ROUTES[0]) await check(who, route)
    else {
      const sent = etags.get(who) ?? undefined
      const etag = await check(who, route, sent)
      etags.set(who, sent ? null : etag)
    }
  }
})

test('past the templates kept, a window seen before and a new one still answer right', async () => {
  // 300 hourly windows for the hourly caller, more than the templates kept, then an earlier route again.
  for (let hour = 0; hour < 300; hour++) {
    now += 3_600_000
    await check('b', ROUTES[hour % 3]!)
  }
  await check('a', ROUTES[0]!)
  await check('b', ROUTES[0]!)
})
