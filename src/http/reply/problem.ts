/**
 * Every failure becomes one problem object with RFC 9457 members (`type`, `title`, `status`, `detail`,
 * `instance`, plus `errors[]` naming each bad field). This file owns the mapping from error kinds and
 * Elysia's own error codes to statuses; `reply.ts` wraps the problem in the caller's response form.
 */
import { type ValueError, ValueErrorType } from '@sinclair/typebox/errors'
import { nearest, unknownName } from '../../lib/did-you-mean.ts'
import { AlmanacError, invalidFields, type ErrorKind, type FieldError } from '../../lib/errors.ts'

export interface Problem {
  type: string
  title: string
  status: number
  detail: string
  instance?: string
  errors?: FieldError[]
  [extra: string]: unknown
}

const KINDS: Record<ErrorKind, { status: number; title: string }> = {
  bad_request: { status: 400, title: 'Bad request' },
  invalid: { status: 422, title: 'Invalid input' },
  not_found: { status: 404, title: 'Not found' },
  conflict: { status: 409, title: 'Conflict' },
  ambiguous: { status: 400, title: 'Ambiguous input' },
  too_large: { status: 413, title: 'Payload too large' },
  unsupported_type: { status: 415, title: 'Unsupported media type' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  forbidden: { status: 403, title: 'Forbidden' },
  quota: { status: 429, title: 'Quota exceeded' },
  too_many: { status: 429, title: 'Too many requests waiting' },
  busy: { status: 503, title: 'Server busy' },
  unavailable: { status: 503, title: 'Service unavailable' },
  method: { status: 405, title: 'Method not allowed' },
  internal: { status: 500, title: 'Internal server error' },
}

/** Problem `type` URIs are URNs: stable identifiers that do not pretend to be fetchable pages. */
export const PROBLEM_URN = 'urn:almanac:problem:'
const typeOf = (kind: ErrorKind) => `${PROBLEM_URN}${kind.replace(/_/g, '-')}`

export interface ProblemResult {
  problem: Problem
  headers: Record<string, string>
}

/**
 * Problems quote caller input (`"…" is not an IPv4 address`); a quoted megabyte would be sent straight
 * back, so each text is cut at this many characters, as is the path in `instance`.
 */
const MAX_TEXT = 500
const clamp = (text: string) => (text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text)

export function problemFromError(error: AlmanacError, instance?: string): ProblemResult {
  const { status, title } = KINDS[error.kind]
  const problem: Problem = { type: typeOf(error.kind), title, status, detail: clamp(error.detail) }
  if (instance) problem.instance = clamp(instance)
  if (error.options.errors?.length)
    problem.errors = error.options.errors.slice(0, 100).map((e) => ({ ...e, field: clamp(e.field), message: clamp(e.message) }))
  if (error.options.extra) Object.assign(problem, error.options.extra)
  return { problem, headers: error.options.headers ?? {} }
}

/** A TypeBox error's JSON Pointer (`~1` is `/`, `~0` is `~`) as a dotted field name. */
const fieldOf = (pointer: unknown) =>
  String(pointer ?? '')
    .replace(/^\//, '')
    .split('/')
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.') || '(root)'

/** TypeBox/Elysia validation error entries -> FieldErrors with dotted paths. */
function validationErrors(error: any): FieldError[] {
  // Elysia checks coerced query members one by one ("property") and loses their names; schemas built
  // with `namedInteger` carry them in a custom message `name: why`.
  if (error.type === 'property') {
    const m = /^([\w.]+): (.*)$/s.exec(String(error.customError ?? ''))
    return [{ in: 'query', field: m?.[1] ?? '(query)', message: m?.[2] ?? 'invalid value' }]
  }
  const where: FieldError['in'] =
    error.type === 'query' ? 'query' : error.type === 'params' ? 'path' : error.type === 'headers' ? 'header' : 'body'
  let all: ValueError[] = []
  try {
    all = error.all ?? []
  } catch {
    all = []
  }
  return fieldErrors(where, all)
}

/**
 * TypeBox's errors of one input (Elysia's `all`, or a schema checked here: large-bodies.ts) as the
 * problem's FieldErrors: one per field and message, a missing member once and by name, an unknown one with the
 * nearest known name, a body that is not an object with the members it needs.
 */
export function fieldErrors(where: FieldError['in'], all: readonly ValueError[]): FieldError[] {
  const seen = new Set<string>()
  const out: FieldError[] = []
  // A member that is missing is reported once, as missing: TypeBox also says what type it should have had.
  const missing = new Set(all.filter((e) => e.type === ValueErrorType.ObjectRequiredProperty).map((e) => fieldOf(e.path)))
  const given = givenInstead(all)
  for (const e of all) {
    const field = fieldOf(e.path)
    if (missing.has(field) && e.type !== ValueErrorType.ObjectRequiredProperty) continue
    if (e.type === ValueErrorType.ObjectAdditionalProperties) {
      // A name the route's closed schema does not take (strict-inputs.ts).
      out.push({ in: where, field, message: unknownName(field, knownOf(e.schema), where === 'query' ? 'query parameter' : 'member') })
      continue
    }
    if (e.type === ValueErrorType.ObjectRequiredProperty) {
      // Named, and with the stranger sent in its place when there is one (`query` for `q`, `lon` for `lng`).
      const instead = given.get(field)
      out.push({ in: where, field, message: `${field} is missing${instead ? ` (did you mean ${lastName(field)} for ${instead}?)` : ''}` })
      continue
    }
    if (e.type === ValueErrorType.Object && field === '(root)' && where === 'body') {
      out.push({ in: where, field, message: bodyObjectMessage(e.schema) })
      continue
    }
    // A schema's own `error: 'name: why'` beats TypeBox's summary (which for Elysia's numeric unions
    // reads "should be one of: 'integer', 'integer'").
    const own = (e.schema as { error?: unknown } | undefined)?.error
    const custom = typeof own === 'string' ? /^([\w.]+): (.*)$/s.exec(own) : null
    // TypeBox's own message ("Expected string"), never Elysia's summary, which quotes the value found.
    const message = (custom && custom[1] === field ? custom[2] : undefined) ?? e.message ?? 'invalid value'
    const key = field + '\0' + message
    if (seen.has(key)) continue
    seen.add(key)
    out.push({ in: where, field, message })
  }
  if (!out.length) out.push({ in: where, field: '(root)', message: 'invalid value' })
  return out
}

const knownOf = (schema: unknown) => Object.keys((schema as { properties?: object } | undefined)?.properties ?? {})
const lastName = (field: string) => field.slice(field.lastIndexOf('.') + 1)

/**
 * For each missing member, the unknown member beside it whose nearest known name (did-you-mean.ts, spelling
 * or meaning) it is: `{"lon": 13.4}` for `lng`. Keyed by the missing member's field.
 */
function givenInstead(all: readonly ValueError[]): Map<string, string> {
  const instead = new Map<string, string>()
  for (const e of all) {
    if (e.type !== ValueErrorType.ObjectAdditionalProperties) continue
    const field = fieldOf(e.path)
    const name = lastName(field)
    const near = nearest(name, knownOf(e.schema))
    if (!near) continue
    const parent = field.slice(0, field.length - name.length)
    if (!instead.has(parent + near)) instead.set(parent + near, name)
  }
  return instead
}

/** A body that is not an object (none at all, a string, a list): what it must be, with the members it needs. */
function bodyObjectMessage(schema: unknown): string {
  const required: string[] = (schema as { required?: string[] } | undefined)?.required ?? []
  const names = required.length ? required : knownOf(schema)
  if (!names.length) return 'the request body must be a JSON object'
  const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`
  return required.length
    ? `the request body must be a JSON object with the member${names.length === 1 ? '' : 's'} ${list}`
    : `the request body must be a JSON object (members: ${names.join(', ')})`
}

/**
 * Converts anything thrown while handling a request into a problem. Elysia's own codes cover malformed
 * JSON (PARSE), schema violations (VALIDATION), unknown routes (NOT_FOUND) and oversized bodies.
 */
export function toProblem(code: string | number, error: unknown, instance?: string): ProblemResult {
  if (error instanceof AlmanacError) return problemFromError(error, instance)
  // Elysia wraps whatever a body parser throws in its ParseError; ours throw AlmanacErrors (e.g. 413).
  if ((error as any)?.cause instanceof AlmanacError) return problemFromError((error as any).cause, instance)
  switch (code) {
    case 'PARSE':
      return problemFromError(new AlmanacError('bad_request', 'The request body is not valid JSON.'), instance)
    case 'VALIDATION':
      return problemFromError(invalidFields(validationErrors(error)), instance)
    case 'NOT_FOUND':
      return problemFromError(new AlmanacError('not_found', 'No such route.'), instance)
    case 'INVALID_COOKIE_SIGNATURE':
      return problemFromError(new AlmanacError('bad_request', 'Invalid cookie signature.'), instance)
  }
  // decodeURIComponent of a path parameter or query member with a broken escape such as `%ZZ`.
  if (error instanceof URIError)
    return problemFromError(new AlmanacError('bad_request', 'The path or query string holds an invalid percent-encoding.'), instance)
  const status = (error as any)?.status
  if (status === 413 || code === 413)
    return problemFromError(new AlmanacError('too_large', 'The request body is over the size limit.'), instance)
  if (status === 400) return problemFromError(new AlmanacError('bad_request', 'The request could not be read.'), instance)
  return internalProblem(instance)
}

/** A 500 that says nothing of what went wrong (the cause is logged, never sent). */
export const internalProblem = (instance?: string): ProblemResult =>
  problemFromError(new AlmanacError('internal', 'An internal error occurred. It has been logged.'), instance)
