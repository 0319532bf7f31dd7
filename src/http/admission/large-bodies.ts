/**
 * A large JSON body that breaks its route's schema is refused here, as soon as it is parsed, against the
 * route's own body schema (compiled once), with the problem Elysia's check would have led to (problem.ts
 * `fieldErrors`). Elysia's ValidationError writes the whole value into its message (pretty-printed outside
 * production) and walks it for its error list: a 1 MB bulk of 12,000 user agents took 25 ms to be refused
 * (10 ms with NODE_ENV=production), for one credit. Bodies up to the default body limit are left to Elysia:
 * what their error costs is bounded by their size. A valid large body is checked twice, here and by
 * Elysia: microseconds against the milliseconds of parsing it. An over-long per-item list arrives here cut
 * to one item past its maximum (json-shape.ts `JsonScan`): TypeBox's error walk visits every item, ~0.4 µs
 * each (4.9 ms for 12,000), and the list's length is already the first error.
 */
import type { TSchema } from '@sinclair/typebox'
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler'
import type { ValueError } from '@sinclair/typebox/errors'
import { invalidFields } from '../../lib/errors.ts'
import { DEFAULT_BODY_LIMIT, type RouteEntry } from '../routing/route-table.ts'
import { fieldErrors } from '../reply/problem.ts'

/** Bodies longer than this (characters of JSON text) are checked here; only routes with a larger limit get them. */
export const LARGE_BODY_CHARS = DEFAULT_BODY_LIMIT

/** As many errors as Elysia's `all` lists. */
const MAX_ERRORS = 64

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>()

/** Throws the 422 of `body` against its route's body schema; returns when it conforms or the route has none. */
export function checkLargeBody(route: Pick<RouteEntry, 'bodySchema'> | null | undefined, body: unknown): void {
  const schema = route?.bodySchema
  if (!schema) return
  let check = compiled.get(schema)
  if (!check) compiled.set(schema, (check = TypeCompiler.Compile(schema)))
  if (check.Check(body)) return
  const errors: ValueError[] = []
  for (const e of check.Errors(body)) if (errors.push(e) >= MAX_ERRORS) break
  throw invalidFields(fieldErrors('body', errors))
}
