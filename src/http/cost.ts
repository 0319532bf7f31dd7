/**
 * How many quota credits a request costs (SPEC Limits: bulk and batch endpoints cost one per item).
 * A route declares its per-item field in its OpenAPI `detail`, so the cost is also documented there.
 */
export const COST_KEY = 'x-quota-cost'

export interface PerItemCost {
  /** Body member holding the items (e.g. `ips`). */
  field: string
  /** Most items accepted; a longer list fails validation and costs 1. */
  max: number
}

/** Spread into a route's `detail`: `detail: { summary, ...costPerItem('ips', 100) }`. */
export const costPerItem = (field: string, max: number) => ({ [COST_KEY]: { field, max } satisfies PerItemCost })

/** Credits for one request given the route's declaration and the parsed body. */
export function costOf(declared: PerItemCost | undefined, body: unknown): number {
  if (!declared) return 1
  const items = itemsOf(body, declared)
  return Array.isArray(items) && items.length >= 1 && items.length <= declared.max ? items.length : 1
}

/** The member of `body` that holds a per-item route's items (the body itself when the field is ''), if any. */
const itemsOf = (body: unknown, { field }: PerItemCost): unknown =>
  field === '' ? body : body && typeof body === 'object' ? (body as Record<string, unknown>)[field] : undefined
