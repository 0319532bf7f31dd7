/**
 * What a route declares about itself beside its handler, in one typed object: its quota cost, body limit,
 * cache rule, response contract and (for `/prefix/*`) the name of its tail. A route writes
 * `detail: routeDetail({ summary, description, cost, bodyLimit, cache, response })`; the route table
 * (route-table.ts) reads the facts once per app, and every layer (admission, credits, reply, caching, the
 * OpenAPI document) reads them from the request's resolved route. A new per-route fact is a member here and
 * its reader: nothing else.
 */
import type { TSchema } from '@sinclair/typebox'

/** The `detail` member the facts travel in, from the route's declaration to the route table. */
export const FACTS_KEY = 'x-almanac'

/** A per-item cost (SPEC Limits: bulk and batch endpoints cost one credit per item). */
export interface PerItemCost {
  /** Body member holding the items (e.g. `ips`); '' when the body is the list itself. */
  field: string
  /** Most items accepted; a longer list fails validation and costs 1. */
  max: number
}

/**
 * Why each kind gets its Cache-Control (docs/operations.md, "Caching"):
 * - `reference`: reference data (countries, subdivisions, postal systems and lookups, Bible texts) that
 *   changes only when the operator refreshes the datasets. An hour bounds how long a client may keep an
 *   answer after a refresh; after that it revalidates (a 304 when the data did not change).
 * - `current`: answers that hold the current offset or time (timezone records and lists): a client must
 *   revalidate every time; the ETag then saves the body while the answer is unchanged.
 * Both are `private`: every answer is behind authentication and carries the caller's quota headers, which
 * a shared cache would hand to another caller.
 */
export const CACHE_CONTROL = {
  reference: 'private, max-age=3600',
  current: 'private, no-cache',
} as const

export type CacheKind = keyof typeof CACHE_CONTROL

/** A schema of the OpenAPI document: TypeBox, or plain JSON Schema where TypeBox has no word for it. */
export type ShapeSchema = TSchema | Record<string, unknown>

/** A route's response in both forms: the contract the OpenAPI document shows and `fields` selects from. */
export interface ResponseShapes {
  /**
   * Component name of the resource: its schemas become `#/components/schemas/<name>` (one shape for both
   * forms) or `<name>FormA` / `<name>FormB`, so generated clients name the types.
   */
  name?: string
  /** The resource as Form A puts it in `data` (one item, or one list item when `list`). */
  enveloped?: ShapeSchema
  /** The resource as Form B returns it (one item, or one list item when `list`); the same as Form A's when absent. */
  bare?: ShapeSchema
  /** The route returns a list: Form A `data: [...]`, Form B `{count, results}` (`{results}` without a total). */
  list?: boolean
  /** Form A lists the resource even though Form B returns one (postal lookup: every place of a code). */
  envelopedList?: boolean
  /** The list has a total (Form A `total`, Form B `count`). Default true for lists. */
  total?: boolean
  /** Extra Form A siblings of `data` (e.g. `total_count`, `limit`, `offset`). */
  envelopedSiblings?: Record<string, ShapeSchema>
  /** Extra Form B siblings of `results`. */
  bareSiblings?: Record<string, ShapeSchema>
}

/** A `/prefix/*` route whose tail is one value that may contain `/` (an IANA zone name). */
export interface WildcardParameter {
  /** The parameter's name in the document: `/prefix/*` is shown as `/prefix/{name}`. */
  name: string
  description: string
  examples?: string[]
}

export interface RouteFacts {
  /** Credits a request costs beyond 1: one per item of a body member. */
  cost?: PerItemCost
  /** The route costs no credit (a caller reading its own usage): authenticated, its quota headers sent, nothing spent. */
  free?: true
  /** Largest body the route takes, bytes, when its largest valid body needs more than the default (16 KiB). */
  bodyLimit?: number
  /** Its 200 answers carry an ETag and this kind's Cache-Control; a matching If-None-Match is a 304. */
  cache?: CacheKind
  /** Its response in both forms. */
  response?: ResponseShapes
  /**
   * Routing keeps the wildcard (a `:param` stops at `/`); the document shows a real path parameter, which
   * clients percent-encode (`America%2FNew_York`) and the route decodes.
   */
  wildcard?: WildcardParameter
}

export interface RouteDoc extends RouteFacts {
  summary: string
  description?: string
}

/** A route's `detail`: its summary and description for the document, its facts for the route table. */
export function routeDetail({ summary, description, ...facts }: RouteDoc) {
  return { summary, ...(description ? { description } : {}), [FACTS_KEY]: facts }
}

/** Credits for one request given its route's per-item cost and the parsed body. */
export function costOf(declared: PerItemCost | undefined, body: unknown): number {
  if (!declared) return 1
  const items = itemsOf(body, declared)
  return Array.isArray(items) && items.length >= 1 && items.length <= declared.max ? items.length : 1
}

/** The member of `body` that holds a per-item route's items (the body itself when the field is ''), if any. */
const itemsOf = (body: unknown, { field }: PerItemCost): unknown =>
  field === '' ? body : body && typeof body === 'object' ? (body as Record<string, unknown>)[field] : undefined

/**
 * The names `fields` may select in one form: the members of the item schema (of every member of a union,
 * such as a bulk item that is a result or an error).
 */
export function fieldNamesOf(schema: ShapeSchema | undefined): string[] {
  if (!schema) return []
  const s = schema as { properties?: Record<string, unknown>; anyOf?: ShapeSchema[]; oneOf?: ShapeSchema[]; allOf?: ShapeSchema[] }
  const names = new Set(Object.keys(s.properties ?? {}))
  for (const inner of [...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])]) for (const n of fieldNamesOf(inner)) names.add(n)
  return [...names]
}
