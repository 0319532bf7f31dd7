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
  const items = field(body, declared.field)
  return Array.isArray(items) && items.length >= 1 && items.length <= declared.max ? items.length : 1
}

const field = (body: unknown, name: string): unknown =>
  name === '' ? body : body && typeof body === 'object' ? (body as Record<string, unknown>)[name] : undefined
