/**
 * `limit`/`offset` on list endpoints (SPEC shared behaviour 2): one schema fragment for every list route,
 * so bounds and defaults are the same everywhere and show in the OpenAPI document.
 */
import { t } from 'elysia'
import type { Page } from '../../lib/page.ts'
import { FIELDS_LIMITS } from '../reply/reply.ts'

export type { Page }

/** Query members for a paged list: `limit` 1..max (default per endpoint), `offset` >= 0. */
export const pageQuery = (maxLimit: number, defaultLimit = 50) => ({
  limit: t.Optional(namedInteger('limit', 1, maxLimit, `Most results to return (1-${maxLimit}, default ${defaultLimit}).`)),
  offset: t.Optional(namedInteger('offset', 0, Number.MAX_SAFE_INTEGER, 'Results to skip (default 0).')),
})

/**
 * An integer member (query or body) whose validation problem names it and says its range plainly: Elysia
 * validates coerced query members one at a time and would report them nameless, and wraps integers in a
 * union to accept numeric strings ("should be one of: 'integer', 'integer'"). `fallback` is the documented
 * default.
 */
export const namedInteger = (name: string, minimum: number, maximum: number, description: string, fallback?: number) =>
  t.Integer({
    minimum,
    maximum,
    description,
    ...(fallback !== undefined ? { default: fallback } : {}),
    error: `${name}: expected an integer${
      maximum === Number.MAX_SAFE_INTEGER ? ` of at least ${minimum}` : ` from ${minimum} ` + `to ${maximum}`
    }`,
  })

/** `fields` query member (SPEC shared behaviour 1). */
export const fieldsQuery = {
  fields: t.Optional(
    t.String({
      maxLength: FIELDS_LIMITS.length,
      description:
        `Comma-separated response fields to keep; dotted paths select inside objects (at most ${FIELDS_LIMITS.names} ` +
        `names, ${FIELDS_LIMITS.depth} levels deep, ${FIELDS_LIMITS.length} characters). An unknown name is a 400 listing the valid ones.`,
      error: `fields: at most ${FIELDS_LIMITS.length} characters`,
    }),
  ),
}

export const pageOf = (query: { limit?: number; offset?: number }, defaultLimit = 50): Page => ({
  limit: query.limit ?? defaultLimit,
  offset: query.offset ?? 0,
})
