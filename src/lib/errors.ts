/**
 * Errors that services raise. They describe what went wrong in domain terms (a kind, a sentence, the
 * offending fields) and know nothing of HTTP: `http/reply/problem.ts` maps each kind to a status code.
 */
export type ErrorKind =
  | 'bad_request' // the request cannot be understood (e.g. an unknown `fields` name)
  | 'invalid' // well-formed but a value is not acceptable
  | 'not_found' // the resource does not exist
  | 'conflict' // the change clashes with what exists (a name already taken, a key already revoked)
  | 'ambiguous' // the input names several resources (e.g. an abbreviation shared by several zones)
  | 'too_large' // a body, batch or input over a limit
  | 'unsupported_type' // a body of a media type the route does not take
  | 'unauthorized' // missing or bad credentials
  | 'forbidden' // credentials are good but not allowed here
  | 'quota' // plan credits used up
  | 'too_many' // one caller has too many requests waiting for their turn
  | 'busy' // the server is saturated; try again later
  | 'unavailable' // a dependency (dataset, store) is missing or down
  | 'method' // the path exists but not with this method
  | 'internal'

export interface FieldError {
  /** Where the value came from. */
  in: 'body' | 'query' | 'path' | 'header'
  /** Dotted path to the offending value, e.g. `ips.3` or `geometry.coordinates`. */
  field: string
  message: string
}

export class AlmanacError extends Error {
  constructor(
    readonly kind: ErrorKind,
    readonly detail: string,
    readonly options: {
      errors?: FieldError[]
      /** Extra members added to the problem body (e.g. `zones` for an ambiguous abbreviation). */
      extra?: Record<string, unknown>
      /** Response headers the problem must carry (e.g. `Retry-After`, `WWW-Authenticate`). */
      headers?: Record<string, string>
    } = {},
  ) {
    super(detail)
    this.name = 'AlmanacError'
  }
}

export const notFound = (detail: string, extra?: Record<string, unknown>) => new AlmanacError('not_found', detail, { extra })

/** One bad input value. `field` is a dotted path; `where` defaults to the body. */
export const invalid = (field: string, message: string, where: FieldError['in'] = 'body') =>
  new AlmanacError('invalid', `${field}: ${message}`, { errors: [{ in: where, field, message }] })

/** Several bad input values (at least one): the detail names the first and says how many there are. */
export const invalidFields = (errors: FieldError[]) => {
  const [first] = errors
  const detail =
    errors.length === 1 ? `${first!.field}: ${first!.message}` : `${errors.length} invalid values; first ${first!.field}: ${first!.message}`
  return new AlmanacError('invalid', detail, { errors })
}

export const badRequest = (detail: string, extra?: Record<string, unknown>) => new AlmanacError('bad_request', detail, { extra })

export const tooLarge = (detail: string, errors?: FieldError[]) => new AlmanacError('too_large', detail, { errors })

export const busy = (detail: string, retryAfterSeconds: number) =>
  new AlmanacError('busy', detail, { headers: { 'Retry-After': String(retryAfterSeconds) } })

export const unavailable = (detail: string, extra?: Record<string, unknown>) => new AlmanacError('unavailable', detail, { extra })

/** Retry-After of the 503 sent while a store (quota, keys) is unreachable: about a failover's length. */
export const STORE_RETRY_SECONDS = 2

/** A store that cannot be reached: a 503 that says when to come back. */
export const storeUnavailable = (detail: string, retryAfterSeconds = STORE_RETRY_SECONDS) =>
  new AlmanacError('unavailable', detail, { headers: { 'Retry-After': String(retryAfterSeconds) } })
