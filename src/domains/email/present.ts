/**
 * Canonical assessment -> the SPEC's "Email risk result" in each form, with their TypeBox schemas for
 * the OpenAPI document. Form A nests the checks; Form B is flat, `risk_score` is score / 100 and
 * `risk_level` is the tier (low, medium, high, critical). Where the SPEC is silent each form carries the
 * other's facts in its own naming (Form A `domain_exists`; Form B `has_mx`, `domain_age_days`,
 * `abuse_listed`), and both say which checks could not be performed (`unknown_checks`).
 */
import { type Static, t } from 'elysia'
import type { ResponseForm } from '../../config.ts'
import { itemError, nullable } from '../../http/reply/schemas.ts'
import type { Assessment, ItemError } from './service.ts'

const UNKNOWN = t.Array(t.Union([t.Literal('mx_record'), t.Literal('domain_age')]), {
  description:
    "Checks that could not be performed (DNS or RDAP unreachable, timed out, busy with this caller's share of lookups, a refused RDAP " +
    'redirect, offline mode); they add no points.',
})
const TIER = t.Union([t.Literal('low'), t.Literal('medium'), t.Literal('high'), t.Literal('critical')])

export const EnvelopedSchema = t.Object({
  email: t.String({ description: 'The address as given.' }),
  risk_score: t.Integer({ minimum: 0, maximum: 100 }),
  risk_tier: t.Union(TIER.anyOf, { description: 'low 0-25, medium 26-50, high 51-75, critical 76-100.' }),
  checks: t.Object({
    syntax: t.Object({
      valid: t.Boolean(),
      reason: nullable(t.String(), 'Why the syntax is invalid (e.g. local_part_too_long); see docs/email.md.'),
      normalized: nullable(t.String(), 'local@domain with the domain in lower-case A-labels.'),
    }),
    mx_record: t.Object({
      valid: nullable(
        t.Boolean(),
        'true: the domain has MX records; false: it has none (scored +30 as "no MX records"), also when an A/AAAA record receives ' +
          'mail as implicit MX (`implicit_mx`, `accepts_mail` say so); null: unknown (`unknown_checks`, no points).',
      ),
      mx_hosts: t.Array(t.String(), { description: 'MX exchanges by preference; empty when the domain has no MX record.' }),
      implicit_mx: t.Boolean({
        description: "No MX record, but the domain's own address receives mail (RFC 5321 §5.1); `valid` is false all the same.",
      }),
      accepts_mail: nullable(
        t.Boolean(),
        'Mail can be delivered (MX, or implicit MX); false for a null MX (RFC 7505), a domain that does not exist, or one with neither ' +
          'MX nor address.',
      ),
      domain_exists: nullable(t.Boolean(), 'false when the DNS answers NXDOMAIN.'),
      reason: nullable(
        t.String(),
        'Why `valid` is false (nxdomain, null_mx, no_mx_no_address, no_mx_address_only) or null (offline, dns_timeout, dns_servfail, ' +
          'dns_busy, …).',
      ),
    }),
    disposable: t.Object({
      is_disposable: t.Boolean(),
      provider: nullable(t.String(), "The listed domain that matched (the address's domain or a parent)."),
      lists: t.Array(t.String(), { description: 'The lists holding it (source ids, or operator:<file>).' }),
    }),
    domain_age: t.Object({
      domain: nullable(t.String(), 'The registrable domain asked about.'),
      age_days: nullable(t.Integer({ minimum: 0 }), 'Whole days since registration; null when unknown or not registered.'),
      registered: nullable(t.String(), 'Registration date (ISO 8601) from RDAP.'),
      source: nullable(t.String(), '`rdap` when RDAP answered.'),
      reason: nullable(
        t.String(),
        'not_registered, no_registration_event, or why it is unknown (offline, rdap_timeout, rdap_busy, rdap_redirect_refused, ' +
          'no_rdap_server, …).',
      ),
    }),
    free_provider: t.Object({ is_free: t.Boolean() }),
    abuse_list: t.Object({
      listed: t.Boolean(),
      sources: t.Array(t.String(), { description: 'The lists that hold the domain, each with its date (id:YYYY-MM-DD).' }),
    }),
  }),
  risk_factors: t.Array(t.Object({ factor: t.String(), points: t.Integer() }), { description: 'What the score is made of.' }),
  unknown_checks: UNKNOWN,
})

export const BareSchema = t.Object({
  email: t.String(),
  valid_syntax: t.Boolean(),
  domain_exists: nullable(t.Boolean(), 'false on NXDOMAIN; null when unknown or the syntax is invalid.'),
  disposable: t.Boolean(),
  free_provider: t.Boolean(),
  risk_score: t.Number({ minimum: 0, maximum: 1, description: 'risk_score / 100.' }),
  risk_level: t.Union(TIER.anyOf, { description: 'The tier: low, medium, high, critical.' }),
  has_mx: nullable(t.Boolean(), 'Form A checks.mx_record.valid: false without MX records, implicit MX included.'),
  domain_age_days: nullable(t.Integer({ minimum: 0 }), 'Form A checks.domain_age.age_days.'),
  abuse_listed: t.Boolean(),
  unknown_checks: UNKNOWN,
})

const EmailItemError = itemError('email', t.Unknown({ description: 'The item as sent.' }))
export const EnvelopedItemSchema = t.Union([EnvelopedSchema, EmailItemError])
export const BareItemSchema = t.Union([BareSchema, EmailItemError])

export function enveloped(a: Assessment): Static<typeof EnvelopedSchema> {
  return {
    email: a.email,
    risk_score: a.score,
    risk_tier: a.tier,
    checks: {
      syntax: { valid: a.syntax.valid, reason: a.syntax.reason, normalized: a.syntax.normalized },
      mx_record: {
        valid: a.mx.valid,
        mx_hosts: a.mx.hosts,
        implicit_mx: a.mx.implicit,
        accepts_mail: a.mx.acceptsMail,
        domain_exists: a.mx.domainExists,
        reason: a.mx.reason,
      },
      disposable: { is_disposable: a.lists.disposable, provider: a.lists.disposableMatch, lists: a.lists.disposableLists },
      domain_age: {
        domain: a.age.domain,
        age_days: a.age.ageDays,
        registered: a.age.registered,
        source: a.age.source,
        reason: a.age.reason,
      },
      free_provider: { is_free: a.lists.free },
      abuse_list: { listed: a.lists.abuse, sources: a.lists.abuseSources },
    },
    risk_factors: a.factors,
    unknown_checks: a.unknown,
  }
}

export function bare(a: Assessment): Static<typeof BareSchema> {
  return {
    email: a.email,
    valid_syntax: a.syntax.valid,
    domain_exists: a.mx.domainExists,
    disposable: a.lists.disposable,
    free_provider: a.lists.free,
    risk_score: a.score / 100,
    risk_level: a.tier,
    has_mx: a.mx.valid,
    domain_age_days: a.age.ageDays,
    abuse_listed: a.lists.abuse,
    unknown_checks: a.unknown,
  }
}

export const present = (a: Assessment, form: ResponseForm) => (form === 'enveloped' ? enveloped(a) : bare(a))

export const presentItem = (
  a: Assessment | ItemError,
  form: ResponseForm,
): Static<typeof EnvelopedItemSchema> | Static<typeof BareItemSchema> => ('error' in a ? a : present(a, form))
