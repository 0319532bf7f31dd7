/**
 * `GET /api/v1/usage`: a caller's own usage, for its dashboard or a script watching its spend: the state of
 * its credit window now (its customer's pool when its key has one) and its daily totals per domain for the
 * last `days` days, from the usage ledger (http/edge/usage-meter.ts). Costs no credit; the window is the
 * one admission already read for the quota headers, so the route asks the quota store nothing more.
 */
import { Elysia, type Static, t } from 'elysia'
import type { Config } from '../../config.ts'
import { unavailable } from '../../lib/errors.ts'
import { periodOf, type UsageRow } from '../../stores/usage.ts'
import { existingExchange } from '../edge/exchange.ts'
import type { UsageMeter } from '../edge/usage-meter.ts'
import { requestContext } from '../routing/context.ts'
import { fieldsQuery, namedInteger } from '../routing/paging.ts'
import { routeDetail } from '../routing/route-facts.ts'
import { one } from '../reply/reply.ts'
import { nullable } from '../reply/schemas.ts'

const MAX_DAYS = 90
const count = (description: string) => t.Integer({ minimum: 0, description })
const totals = {
  requests: count('Requests answered.'),
  credits: count('Credits spent (a bulk of 3 items: 3).'),
  refunded: count('Credits given back (answers the server declined to serve now: 503, a per-caller 429).'),
  refused: count('Requests refused with 429.'),
}

export const UsageSchema = t.Object({
  caller: t.String({ description: 'Who is asking: `key:<key id>` or `jwt:<sub>`.', examples: ['key:key_3fJ9aQ2mXbT'] }),
  customer: nullable(t.String(), 'The customer (account) the key belongs to, whose credit pool it spends; null when it has none.'),
  plan: t.String({ description: 'The plan whose window is shown.' }),
  window: t.Object({
    limit: count('Credits in the window.'),
    remaining: count('Credits left in the window.'),
    used: count('Credits spent in the window (by every key of the pool).'),
    reset: t.Integer({ description: 'Unix time (seconds) when the window ends.' }),
    window_seconds: t.Integer({ minimum: 1, description: 'Length of the window.' }),
  }),
  days: t.Array(
    t.Object({
      date: t.String({ description: 'UTC day, YYYY-MM-DD.', examples: ['2026-11-29'] }),
      ...totals,
      domains: t.Array(t.Object({ domain: t.String({ description: "Domain name; '' for routes of none." }), ...totals })),
    }),
    { description: 'Daily totals of this caller, oldest first; a day without requests has zeros.' },
  ),
})
type Usage = Static<typeof UsageSchema>
type Totals = { requests: number; credits: number; refunded: number; refused: number }

const zero = (): Totals => ({ requests: 0, credits: 0, refunded: 0, refused: 0 })
const add = (into: Totals, row: UsageRow) => {
  into.requests += row.requests
  into.credits += row.credits
  into.refunded += row.refunded
  if (row.outcome.startsWith('429')) into.refused += row.requests
}

/** The ledger's daily rows as one entry per day of the last `days` (today included), each split by domain. */
export function dailyTotals(rows: readonly UsageRow[], today: number, days: number): Usage['days'] {
  const out: Usage['days'] = []
  for (let i = days - 1; i >= 0; i--) {
    const period = today - i * 86_400
    const day = { date: new Date(period * 1000).toISOString().slice(0, 10), ...zero(), domains: [] as (Totals & { domain: string })[] }
    const byDomain = new Map<string, Totals & { domain: string }>()
    for (const row of rows) {
      if (row.period !== period) continue
      add(day, row)
      let d = byDomain.get(row.domain)
      if (!d) byDomain.set(row.domain, (d = { domain: row.domain, ...zero() }))
      add(d, row)
    }
    day.domains = [...byDomain.values()].sort((a, b) => (a.domain < b.domain ? -1 : 1))
    out.push(day)
  }
  return out
}

export const usageRoutes = (config: Config, meter: UsageMeter | undefined, clock: () => number) =>
  new Elysia({ name: 'almanac:usage' }).use(requestContext(config.responseForm)).get(
    '/usage',
    async ({ request, query }) => {
      if (!meter) throw unavailable('The usage ledger is off on this server (ALMANAC_USAGE_LEDGER=false).')
      const exchange = existingExchange(request)!
      const principal = exchange.principal!
      const state = exchange.quota!.state
      const days = query.days ?? 30
      const today = periodOf('day', Math.floor(clock() / 1000))
      const rows = await meter.read({ grain: 'day', since: today - (days - 1) * 86_400, caller: principal.caller })
      const usage: Usage = {
        caller: principal.caller,
        customer: principal.customer ?? null,
        plan: principal.plan.name,
        window: {
          limit: state.limit,
          remaining: state.remaining,
          used: state.limit - state.remaining,
          reset: state.reset,
          window_seconds: state.windowSeconds,
        },
        days: dailyTotals(rows, today, days),
      }
      return one(usage)
    },
    {
      query: t.Object({
        ...fieldsQuery,
        days: t.Optional(namedInteger('days', 1, MAX_DAYS, `Days of daily totals, today included (1-${MAX_DAYS}, default 30).`, 30)),
      }),
      detail: routeDetail({
        summary: "The caller's own usage: its credit window now and its daily totals per domain",
        description:
          "Costs no credit and writes nothing. Daily totals come from the usage ledger, with this server's counts not yet " +
          'written added in, so its own answers are in; other instances write theirs once a second.',
        free: true,
        response: { name: 'Usage', enveloped: UsageSchema },
      }),
    },
  )
