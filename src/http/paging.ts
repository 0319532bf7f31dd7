/**
 * `limit`/`offset` on list endpoints (SPEC shared behaviour 2): one schema fragment for every list route,
 * so bounds and defaults are the same everywhere and show in the OpenAPI document.
 */
import { t } from 'elysia'
import type { Page } from '../lib/page.ts'

export type { Page }

/** Query members for a paged list: `limit` 1..max (default per endpoint), `offset` >= 0. */
export const pageQuery = (maxLimit: number, defaultLimit = 50) => ({
  limit: t.Optional(queryInteger('limit', 1, maxLimit, `Most results to return (1-${maxLimit}, default ${defaultLimit}).`)),
  offset: t.Optional(queryInteger('offset', 0, Number.MAX_SAFE_INTEGER, 'Results to skip (default 0).')),
})

/**
 * An integer query member whose validation problem names it (Elysia validates coerced query members one
 * at a time and would otherwise report them nameless).
 */
export const queryInteger = (name: string, minimum: number, maximum: number, description: string) =>
  t.Integer({
    minimum,
    maximum,
    description,
    error: `${name}: expected an integer${maximum === Number.MAX_SAFE_INTEGER ? ` of at least ${minimum}` : ` from ${minimum} to ${maximum}`}`,
  })

/** `fields` query member (SPEC shared behaviour 1). */
export const fieldsQuery = {
  fields: t.Optional(
    t.String({
      description: 'Comma-separated response fields to keep; dotted paths select inside objects. An unknown name is a 400 listing the valid ones.',
    }),
  ),
}

export const pageOf = (query: { limit?: number; offset?: number }, defaultLimit = 50): Page => ({
  limit: query.limit ?? defaultLimit,
  offset: query.offset ?? 0,
})
