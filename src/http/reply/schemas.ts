/**
 * Response schemas every domain shares, in TypeBox like the routes' request schemas: the RFC 9457 problem
 * in both forms, and small builders for the resource schemas a route declares as its `response`
 * (routing/route-facts.ts); the OpenAPI document wraps them in Form A (`{status, data, error}`) and Form B
 * (the resource, or `{count, results}`).
 *
 * They only describe: Elysia's `response` hook would validate every answer at run time, and our handlers
 * return a `Reply` (reply.ts) that becomes JSON text later, so they are documentation checked by a test
 * (test/http/contract.test.ts), not a run-time gate.
 */
import { t, type TSchema } from 'elysia'

/** `T | null`: members the SPEC allows to be absent are present and null. */
export const nullable = <T extends TSchema>(schema: T, description?: string) =>
  t.Union([schema, t.Null()], description ? { description } : {})

export const FieldErrorSchema = t.Object(
  {
    in: t.Union([t.Literal('body'), t.Literal('query'), t.Literal('path'), t.Literal('header')], {
      description: 'Where the value came from.',
    }),
    field: t.String({ description: 'Dotted path to the value, e.g. `ips.3` or `limit`.' }),
    message: t.String({ description: 'What is wrong with it.' }),
  },
  { description: 'One bad input value.' },
)

/** Members some problems add; listed so clients see them, none required. */
const PROBLEM_EXTRAS = {
  valid_fields: t.Optional(t.Array(t.String(), { description: '400 on an unknown `fields` name: the names that exist.' })),
  successors: t.Optional(t.Array(t.String(), { description: '404 on a withdrawn or changed code: the codes that replace it.' })),
  zones: t.Optional(t.Array(t.String(), { description: '400 on an abbreviation with several offsets: the zones it may mean.' })),
  cost: t.Optional(t.Integer({ description: '429 on a bulk request: the credits it would have cost.' })),
}

export const ProblemSchema = t.Object(
  {
    type: t.String({
      format: 'uri',
      description: 'A stable URN naming the kind of problem, e.g. `urn:almanac:problem:not-found`.',
      examples: ['urn:almanac:problem:invalid'],
    }),
    title: t.String({ description: 'Short summary of the kind of problem.', examples: ['Invalid input'] }),
    status: t.Integer({ minimum: 400, maximum: 599, description: 'The HTTP status code.', examples: [422] }),
    detail: t.String({
      description: 'What went wrong with this request, in a sentence (at most 500 characters).',
      examples: ['ip: "x" is not an IPv4 or IPv6 address'],
    }),
    instance: t.Optional(t.String({ description: 'The request path (at most 500 characters).', examples: ['/api/v1/ip'] })),
    errors: t.Optional(t.Array(FieldErrorSchema, { description: 'Each bad field (422, and some 400).' })),
    ...PROBLEM_EXTRAS,
  },
  {
    description:
      'An RFC 9457 problem. Form B (bare) returns it as the body; Form A wraps it in `ProblemEnvelope`. Some problems add members ' +
      '(e.g. `valid_fields`, `successors`, `zones`, `cost`, `ceilings`).',
    additionalProperties: true,
  },
)

/** A member written as a bare JSON Schema `const` (no `type`), as the document has always shown it. */
const constant = <V extends string>(value: V) => t.Unsafe<V>({ const: value })

export const ProblemEnvelopeSchema = t.Object(
  { status: constant('error'), data: t.Null(), error: ProblemSchema },
  { description: 'Form A (enveloped) error body: `{status: "error", data: null, error: <problem>}`.' },
)

/** A batch item that failed on its own (every bulk endpoint): the input and why, in place of its result. */
export const ItemErrorSchema = t.Object(
  {
    error: t.Object({
      field: t.String({ description: 'Where the bad item is in the body, e.g. `ips.3`, `emails.0` or `ua_list.3.ua`.' }),
      message: t.String({ description: 'What is wrong with it.' }),
    }),
  },
  { description: 'An item of a batch that could not be answered; the other items are unaffected.' },
)

/** `ItemErrorSchema` plus the input member it echoes (`{ip, error}`), typed with that member's name. */
export const itemError = <K extends string, T extends TSchema>(key: K, input: T) =>
  t.Object(
    { [key]: input, error: ItemErrorSchema.properties.error } as { [P in K]: T } & Pick<typeof ItemErrorSchema.properties, 'error'>,
    {
      description: ItemErrorSchema.description,
    },
  )
