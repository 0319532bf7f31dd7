/** The operator API's records, as its OpenAPI document shows them and its responses are checked against. */
import { t } from 'elysia'
import { nullable } from '../http/reply/schemas.ts'

const iso = (description: string) => t.String({ description: `${description} (ISO 8601 UTC).` })
const count = (description: string) => t.Integer({ minimum: 0, description })

export const KeySchema = t.Object({
  id: t.String({ examples: ['key_3fJ9aQ2mXbT'] }),
  name: t.String(),
  plan: nullable(t.String(), "The key's plan; null: the default plan. Ignored while the key has a customer (the customer's counts)."),
  customer: nullable(t.String(), 'The customer (`cus_…`) whose credits and plan the key uses; null: its own.'),
  scopes: nullable(t.Array(t.String()), 'Domains the key may call; null: every domain.'),
  expires: nullable(t.String(), 'When the key is refused from (ISO 8601 UTC); null: never.'),
  created: iso('Created'),
  revoked: nullable(t.String(), 'When it was revoked; null: active.'),
  rotated: nullable(t.String(), 'When its secret was last rotated; null: never.'),
})

export const CustomerSchema = t.Object({
  id: t.String({ examples: ['cus_8ZkQ1pLmN0a'] }),
  name: t.String(),
  plan: nullable(t.String(), "The customer's plan, shared by all its keys; null: the default plan."),
  created: iso('Created'),
})

export const PlanSchema = t.Object({
  name: t.String(),
  credits: count('Credits per window.'),
  window_seconds: t.Integer({ minimum: 1, description: 'Window length; for a calendar month, the longest (31 days).' }),
  calendar: nullable(t.Literal('month'), '`month`: the window is the UTC calendar month; null: a fixed window.'),
})

const change = t.Object({ from: t.Unknown(), to: t.Unknown() })
export const AuditEntrySchema = t.Object({
  at: iso('When'),
  actor: t.String({ description: 'Who: `admin:<credential name>`, `cli:<OS user>`.' }),
  action: t.String({ examples: ['key.update'] }),
  target: t.String({ description: "The key's or the customer's id." }),
  changes: t.Record(t.String(), change, { description: 'Each field that changed, from and to (never a secret).' }),
})

export const UsageLineSchema = t.Object({
  period: t.String({ description: '`2026-11-29T10:00Z` (hour), `2026-11-29` (day) or `2026-11` (month).' }),
  key: t.String({ description: 'The caller: `key:<id>` or `jwt:<sub>`.' }),
  customer: t.String({ description: "The caller's customer id; '' when none." }),
  domain: t.String(),
  route: t.String({ examples: ['POST /api/v1/ip/bulk'] }),
  requests: count('Requests answered.'),
  answered: count('2xx and 3xx.'),
  client_errors: count('4xx other than 429.'),
  refused: count('429.'),
  server_errors: count('5xx.'),
  credits: count('Credits spent.'),
  refunded: count('Credits given back.'),
  bytes: count('Response bytes sent.'),
  p50_ms: nullable(t.Number(), 'Median latency, to the bound of its bucket (ms).'),
  p95_ms: nullable(t.Number(), '95th percentile latency (ms).'),
  p99_ms: nullable(t.Number(), '99th percentile latency (ms).'),
})

/** What a create or update may say of a key (null clears a field). */
export const KeyInput = {
  name: t.String({ minLength: 1, maxLength: 100 }),
  plan: t.Union([t.String({ maxLength: 100 }), t.Null()]),
  scopes: t.Union([t.Array(t.String({ maxLength: 40 }), { minItems: 1, maxItems: 64 }), t.Null()]),
  expires: t.Union([t.String({ maxLength: 40, description: 'ISO 8601 time or date (UTC midnight).' }), t.Null()]),
  customer: t.Union([t.String({ maxLength: 100, description: "The customer's id or name." }), t.Null()]),
}

export const CustomerInput = { name: t.String({ minLength: 1, maxLength: 100 }), plan: t.Union([t.String({ maxLength: 100 }), t.Null()]) }
