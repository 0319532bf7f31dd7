/**
 * Every /api/v1 route answers for every input it is given: a body member or query parameter its schema
 * does not name is a 422 naming it and the nearest known name (problem.ts), never dropped. Derived once,
 * where the routes are composed (server.ts, through elysia-routes.ts `closeInputs`), for every route: each
 * object of its body schema and its query schema gets `additionalProperties: false` (unless it says
 * otherwise), and a route without a query schema gets an empty one. The OpenAPI document reads the same
 * schemas, so it shows what the server refuses.
 */
import { FormatRegistry } from '@sinclair/typebox'
import type { TSchema } from 'elysia'

/**
 * An integer in the query or path is plain decimal digits. Elysia reads such a string with `+value`, so
 * `limit=1e2` was 100, `0x10` 16 and ` 5` 5; its schemas check the string against this format first, so
 * anything else is a 422 naming the parameter (paging.ts `namedInteger`). Bodies are JSON, with numbers.
 */
FormatRegistry.Set('integer', (value) => /^-?[0-9]+$/.test(value))

/**
 * Query parameters every route takes and ignores: `_`, the cache-buster jQuery (`cache: false`) and other
 * clients append. Nothing else: `callback` is refused too, since there is no JSONP.
 */
export const IGNORED_QUERY: readonly string[] = ['_']

/** Sets `additionalProperties: false` on every object schema inside `schema` that leaves it unset. */
export function closeSchema(schema: unknown, seen = new Set<unknown>()): void {
  if (!schema || typeof schema !== 'object' || seen.has(schema)) return
  seen.add(schema)
  const s = schema as TSchema & Record<string, any>
  if (s.type === 'object' && s.properties && s.additionalProperties === undefined && !s.patternProperties) s.additionalProperties = false
  for (const inner of Object.values<unknown>(s.properties ?? {})) closeSchema(inner, seen)
  for (const key of ['items', 'anyOf', 'allOf', 'oneOf', 'prefixItems'] as const) {
    const inner = s[key]
    if (Array.isArray(inner)) for (const i of inner) closeSchema(i, seen)
    else closeSchema(inner, seen)
  }
}
