/**
 * The operator API, `/admin/v1/`: keys (list, create, update, rotate, revoke), customers, plans, the usage
 * ledger, the audit log, datasets and the process's metrics, for scripts and for the console (/console).
 * Authenticated by an operator credential (operator-auth.ts), never a customer's key; outside /api/v1, so
 * it is neither counted nor metered, and every answer is `Cache-Control: no-store`. Each change goes to the
 * key store with the operator as its actor, so the audit log says who did it. Described by its own OpenAPI
 * document (`/admin/openapi.json`, openapi.ts); the response schemas here are the contract.
 */
import { Elysia, t } from 'elysia'
import type { Config } from '../config.ts'
import { AlmanacError, badRequest, invalid, notFound, unavailable } from '../lib/errors.ts'
import type { UsageMeter } from '../http/edge/usage-meter.ts'
import { type DatasetInfo, DatasetSchema } from '../http/endpoints/meta.ts'
import type { Answer } from '../stores/quota.ts'
import { type KeyStore, KeyStoreError } from '../stores/keys.ts'
import { outcomeTotals, parseSince, report } from '../stores/usage-report.ts'
import { periodOf } from '../stores/usage.ts'
import { operatorAuthenticator } from './operator-auth.ts'
import { AuditEntrySchema, CustomerInput, CustomerSchema, KeyInput, KeySchema, PlanSchema, UsageLineSchema } from './schemas.ts'

export const ADMIN_PREFIX = '/admin/v1'

export interface AdminDeps {
  keys?: KeyStore
  usage?: UsageMeter
  /** The datasets as /api/v1/meta/datasets reports them. */
  datasets: () => DatasetInfo[]
  /** The process's Prometheus text (/metrics). */
  metrics: () => string
  /** Domain names a key's scopes may name. */
  domains: readonly string[]
  clock: () => number
}

/** A key store's refusal as the problem it is: unknown → 404, taken or revoked → 409, the rest → 422. */
function storeProblem(e: unknown): never {
  if (!(e instanceof KeyStoreError)) throw e
  // The store words its checks for the CLI (`--plan …`); here they are body members.
  const detail = e.message.replace(/--([a-z]+)/g, '$1')
  if (/^no (key|customer) has/.test(e.message)) throw notFound(detail)
  if (/already|was revoked/.test(e.message)) throw new AlmanacError('conflict', detail)
  throw new AlmanacError('invalid', detail)
}

const stored = async <T>(answer: () => Answer<T>): Promise<T> => {
  try {
    return await answer()
  } catch (e) {
    return storeProblem(e)
  }
}

/** An Elysia instance of the operator API whose routes need the operator credential: `actor` names who calls. */
function guarded(name: string, authenticate: (request: Request) => { name: string }) {
  return new Elysia({ name, prefix: ADMIN_PREFIX }).resolve(({ request, set }) => {
    set.headers['cache-control'] = 'no-store'
    return { actor: `admin:${authenticate(request).name}` }
  })
}
type Guarded = ReturnType<typeof guarded>

/** What a key's or a customer's body is checked against beyond its schema: the plans, the domains, the clock. */
function inputChecks(config: Config, deps: AdminDeps) {
  const known = (plan: string | null | undefined) => {
    if (plan != null && !config.plans.has(plan))
      throw invalid('plan', `plan ${JSON.stringify(plan)} is not offered (plans: ${[...config.plans.keys()].join(', ')})`)
  }
  const checkKey = (body: { plan?: string | null; scopes?: string[] | null; expires?: string | null }) => {
    known(body.plan)
    const unknown = body.scopes?.find((s) => !deps.domains.includes(s))
    if (unknown !== undefined) throw invalid('scopes', `${JSON.stringify(unknown)} is not a domain (domains: ${deps.domains.join(', ')})`)
    if (body.expires != null) {
      const at = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(body.expires) ? `${body.expires}T00:00:00Z` : body.expires)
      if (Number.isNaN(at)) throw invalid('expires', `${JSON.stringify(body.expires)} is not an ISO 8601 time or date`)
      if (at <= deps.clock()) throw invalid('expires', `${body.expires} has passed`)
      body.expires = new Date(at).toISOString()
    }
  }
  return { known, checkKey }
}

export function adminRoutes(config: Config, deps: AdminDeps) {
  const authenticate = operatorAuthenticator(config.adminTokens)
  const keyStore = () => deps.keys ?? (unavailable('This server has no key store open.') as never)
  const checks = inputChecks(config, deps)
  return new Elysia({ name: 'almanac:admin' })
    .use(keyRoutes(guarded('almanac:admin-keys', authenticate), keyStore, checks))
    .use(customerRoutes(guarded('almanac:admin-customers', authenticate), keyStore, checks))
    .use(readRoutes(guarded('almanac:admin-reads', authenticate), config, deps, keyStore))
}

type Checks = ReturnType<typeof inputChecks>

/** Keys: list, issue, read, change, rotate, revoke. */
function keyRoutes(app: Guarded, keyStore: () => KeyStore, { checkKey }: Checks) {
  return app
    .get('/keys', async () => ({ keys: await stored(() => keyStore().list()) }), {
      response: t.Object({ keys: t.Array(KeySchema) }),
      detail: { summary: 'Every key, revoked ones included (never a secret)', tags: ['keys'] },
    })
    .post(
      '/keys',
      async ({ body, actor, set }) => {
        checkKey(body)
        const made = await stored(() => keyStore().create({ ...body, plan: body.plan ?? null }, actor))
        set.status = 201
        return made
      },
      {
        body: t.Object({ name: KeyInput.name, ...optional(KeyInput, 'plan', 'scopes', 'expires', 'customer') }, closed),
        response: { 201: t.Object({ key: t.String({ description: 'The secret, shown this once.' }), record: KeySchema }) },
        detail: { summary: 'Issue a key; its secret is in this answer only', tags: ['keys'] },
      },
    )
    .get(
      '/keys/:id',
      async ({ params }) => {
        const found = (await stored(() => keyStore().list())).find((k) => k.id === params.id)
        if (!found) throw notFound(`No key has the id ${JSON.stringify(params.id)}.`)
        return found
      },
      { response: KeySchema, detail: { summary: 'One key', tags: ['keys'] } },
    )
    .patch(
      '/keys/:id',
      async ({ params, body, actor }) => {
        checkKey(body)
        return stored(() => keyStore().update(params.id, body, actor))
      },
      {
        body: t.Object(optional(KeyInput, 'name', 'plan', 'scopes', 'expires', 'customer'), { ...closed, minProperties: 1 }),
        response: KeySchema,
        detail: {
          summary: 'Change a key without a new secret',
          description: 'A member left out stays as it is; null clears it (plan: the default plan, scopes: every domain).',
          tags: ['keys'],
        },
      },
    )
    .post(
      '/keys/:id/rotate',
      async ({ params, body, actor }) => {
        const rotated = await stored(() => keyStore().rotate(params.id, { graceSeconds: body?.grace_seconds ?? 86_400 }, actor))
        return { key: rotated.key, record: rotated.record, previous_until: rotated.previousUntil }
      },
      {
        body: t.Optional(t.Object({ grace_seconds: t.Optional(t.Integer({ minimum: 0, maximum: 90 * 86_400 })) }, closed)),
        response: t.Object({
          key: t.String({ description: 'The new secret, shown this once.' }),
          record: KeySchema,
          previous_until: t.String({ description: 'Until when the previous secret is still accepted (ISO 8601 UTC).' }),
        }),
        detail: { summary: 'A new secret; the old one works for `grace_seconds` more (default a day)', tags: ['keys'] },
      },
    )
    .post('/keys/:id/revoke', async ({ params, actor }) => stored(() => keyStore().revoke(params.id, actor)), {
      response: KeySchema,
      detail: { summary: 'Refuse the key from now on', tags: ['keys'] },
    })
}

/** Customers: list, create, change. */
function customerRoutes(app: Guarded, keyStore: () => KeyStore, { known }: Checks) {
  return app
    .get('/customers', async () => ({ customers: await stored(() => keyStore().listCustomers()) }), {
      response: t.Object({ customers: t.Array(CustomerSchema) }),
      detail: { summary: 'Every customer', tags: ['customers'] },
    })
    .post(
      '/customers',
      async ({ body, actor, set }) => {
        known(body.plan)
        const made = await stored(() => keyStore().createCustomer({ name: body.name, plan: body.plan ?? null }, actor))
        set.status = 201
        return made
      },
      {
        body: t.Object({ name: CustomerInput.name, plan: t.Optional(CustomerInput.plan) }, closed),
        response: { 201: CustomerSchema },
        detail: { summary: 'Create a customer: its keys share one plan and one credit pool', tags: ['customers'] },
      },
    )
    .patch(
      '/customers/:id',
      async ({ params, body, actor }) => {
        known(body.plan)
        return stored(() => keyStore().updateCustomer(params.id, body, actor))
      },
      {
        body: t.Object(optional(CustomerInput, 'name', 'plan'), { ...closed, minProperties: 1 }),
        response: CustomerSchema,
        detail: { summary: 'Rename a customer or change its plan (every key of it follows)', tags: ['customers'] },
      },
    )
}

/** What an operator reads: who they are, the plans, the ledger, the audit log, datasets, metrics. */
function readRoutes(app: Guarded, config: Config, deps: AdminDeps, keyStore: () => KeyStore) {
  return app
    .get('/whoami', ({ actor }) => ({ operator: actor.slice('admin:'.length) }), {
      response: t.Object({ operator: t.String({ description: "The credential's name." }) }),
      detail: { summary: 'Who the credential names', tags: ['operator'] },
    })
    .get(
      '/plans',
      () => ({
        default_plan: config.defaultPlan,
        plans: [...config.plans.values()].map((p) => ({
          name: p.name,
          credits: p.credits,
          window_seconds: p.windowSeconds,
          calendar: p.calendar ?? null,
        })),
      }),
      {
        response: t.Object({ default_plan: t.String(), plans: t.Array(PlanSchema) }),
        detail: { summary: 'The plans this server offers (ALMANAC_PLANS)', tags: ['plans'] },
      },
    )
    .get(
      '/usage',
      async ({ query }) => {
        if (!deps.usage) throw unavailable('The usage ledger is off on this server (ALMANAC_USAGE_LEDGER=false).')
        const by = query.by ?? 'day'
        const now = deps.clock()
        const since = parseSince(query.since ?? '30d', now, 'since')
        const until = query.until === undefined ? undefined : parseSince(query.until, now, 'until')
        for (const bad of [since, until]) if (typeof bad === 'string') throw badRequest(bad)
        const grain = by === 'hour' ? 'hour' : 'day'
        const rows = await deps.usage.read({
          grain,
          since: periodOf(grain, since as number),
          until: until as number | undefined,
          caller: query.key === undefined ? undefined : query.key.includes(':') ? query.key : `key:${query.key}`,
          customer: query.customer,
        })
        return { rows: report(rows, by), outcomes: outcomeTotals(rows) }
      },
      {
        query: t.Object(
          {
            by: t.Optional(t.Union([t.Literal('hour'), t.Literal('day'), t.Literal('month')], { description: 'Default day.' })),
            since: t.Optional(t.String({ maxLength: 20, description: '`30d`, `48h` or a UTC date; default 30d.' })),
            until: t.Optional(t.String({ maxLength: 20, description: 'A UTC date (not included).' })),
            key: t.Optional(t.String({ maxLength: 300, description: 'A key id (`key_…`) or a caller (`jwt:<sub>`).' })),
            customer: t.Optional(t.String({ maxLength: 100, description: 'A customer id (`cus_…`).' })),
          },
          closed,
        ),
        response: t.Object({
          rows: t.Array(UsageLineSchema),
          outcomes: t.Array(t.Object({ outcome: t.String({ examples: ['429:quota'] }), requests: t.Integer({ minimum: 0 }) }), {
            description: 'Requests per outcome over the whole range, most first: refusals and failures by reason.',
          }),
        }),
        detail: { summary: 'The usage ledger by period, key and route (as `almanac usage`)', tags: ['usage'] },
      },
    )
    .get('/audit', async ({ query }) => ({ entries: await stored(() => keyStore().audit({ limit: query.limit ?? 100 })) }), {
      query: t.Object({ limit: t.Optional(t.Integer({ minimum: 1, maximum: 10_000 })) }, closed),
      response: t.Object({ entries: t.Array(AuditEntrySchema) }),
      detail: { summary: 'Operator actions on keys and customers, newest first', tags: ['audit'] },
    })
    .get('/datasets', () => ({ datasets: deps.datasets() }), {
      response: t.Object({ datasets: t.Array(DatasetSchema) }),
      detail: { summary: 'Datasets: status, version, age and staleness', tags: ['operator'] },
    })
    .get(
      '/metrics',
      ({ set }) => {
        set.headers['content-type'] = 'text/plain; version=0.0.4; charset=utf-8'
        return deps.metrics()
      },
      { response: t.String(), detail: { summary: "The process's Prometheus metrics (as /metrics)", tags: ['operator'] } },
    )
}

/** Bodies are closed: an unknown member is a 422 naming it, never silently dropped. */
const closed = { additionalProperties: false } as const

/** The named members of `shape`, each optional. */
function optional<S extends Record<string, any>, K extends keyof S & string>(shape: S, ...names: K[]) {
  return Object.fromEntries(names.map((n) => [n, t.Optional(shape[n])])) as { [P in K]: ReturnType<typeof t.Optional<S[P]>> }
}
