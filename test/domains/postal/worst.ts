/**
 * The most expensive postal inputs the request schemas accept, on the mirror's data: the largest
 * countries (PT 207k records, SG 121k in one small island, IN 156k), the widest filters, the deepest
 * pages, the largest radius, polygons covering a whole country, a MultiPolygon repeating that cover
 * and a 10,000-position comb whose every edge spans the country. Shared by the budget tests and
 * bench/postal-worst.ts, so the figures and the proofs are about the same inputs.
 */
import type { Page, Paged } from '../../../src/lib/page.ts'
import type { PostalService, SearchFilters } from '../../../src/domains/postal/service.ts'

type Ring = number[][]

/** A closed rectangle ring [lng, lat]. */
export const box = (west: number, south: number, east: number, north: number): Ring => [
  [west, south],
  [east, south],
  [east, north],
  [west, north],
  [west, south],
]

/** Portugal with the Azores and Madeira, and Singapore, as boxes. */
export const PT_BOX = box(-31.3, 32.6, -6.2, 42.2)
export const SG_BOX = box(103.6, 1.2, 104.1, 1.5)
export const IN_BOX = box(68, 6, 98, 36)

/**
 * A comb of `positions` positions over the box: teeth from the south edge to just under the north
 * edge, so every edge but two spans the whole latitude range and falls in every latitude band.
 */
export function comb(west: number, south: number, east: number, north: number, positions = 10_000): Ring {
  const teeth = Math.floor((positions - 3) / 4)
  const step = (east - west) / teeth
  const ring: Ring = [[west, south]]
  for (let i = 0; i < teeth; i++) {
    const x = west + i * step
    ring.push([x, north], [x + step / 2, north], [x + step / 2, south + (north - south) * 0.01], [x + step, south + (north - south) * 0.01])
  }
  ring.push([east, north], [west, north], [west, south])
  return ring.slice(0, positions - 1).concat([[west, south]])
}

export type WorstCase =
  | { name: string; kind: 'search'; country: string; filters: SearchFilters; page: Page; narrow: string }
  | { name: string; kind: 'nearby'; country: string; at: { lat: number; lng: number; radius_km: number }; page: Page; narrow: string }
  | { name: string; kind: 'within'; country: string; geometry: { type: string; coordinates: unknown[] }; page: Page; narrow: string }

const multi = (ring: Ring, parts: number) => ({ type: 'MultiPolygon', coordinates: Array.from({ length: parts }, () => [ring]) })

/** `parts`: how many copies the repeated MultiPolygon has (2,000 fills the 10,000-position limit). */
export function worstCases(parts = 2000): WorstCase[] {
  const big = { limit: 1000, offset: 0 }
  return [
    { name: 'search SG q=s', kind: 'search', country: 'SG', filters: { q: 's' }, page: big, narrow: 'q' },
    { name: 'search PT prefix=4', kind: 'search', country: 'PT', filters: { prefix: '4' }, page: big, narrow: 'prefix' },
    {
      name: 'search PT prefix=4 offset 58,000',
      kind: 'search',
      country: 'PT',
      filters: { prefix: '4' },
      page: { limit: 1000, offset: 58_000 },
      narrow: 'prefix',
    },
    { name: 'search PT q=c prefix=4', kind: 'search', country: 'PT', filters: { q: 'c', prefix: '4' }, page: big, narrow: 'q' },
    {
      name: 'search PT admin_code=14 offset 34,000',
      kind: 'search',
      country: 'PT',
      filters: { admin_code: '14' },
      page: { limit: 1000, offset: 34_000 },
      narrow: 'admin_code',
    },
    { name: 'nearby PT 500 km', kind: 'nearby', country: 'PT', at: { lat: 39.6, lng: -8, radius_km: 500 }, page: big, narrow: 'radius_km' },
    {
      name: 'nearby PT 500 km offset 190,000',
      kind: 'nearby',
      country: 'PT',
      at: { lat: 39.6, lng: -8, radius_km: 500 },
      page: { limit: 1000, offset: 190_000 },
      narrow: 'radius_km',
    },
    {
      name: 'nearby SG 500 km offset 120,000',
      kind: 'nearby',
      country: 'SG',
      at: { lat: 1.35, lng: 103.82, radius_km: 500 },
      page: { limit: 1000, offset: 120_000 },
      narrow: 'radius_km',
    },
    { name: 'nearby IN 500 km', kind: 'nearby', country: 'IN', at: { lat: 22, lng: 79, radius_km: 500 }, page: big, narrow: 'radius_km' },
    // A small country beside dense ones: the R*Tree once returned ~127,000 points of Spain and Morocco
    // for this one, 50 ms read outside the budget's count (spatial.ts).
    {
      name: 'nearby GI 500 km',
      kind: 'nearby',
      country: 'GI',
      at: { lat: 36.14, lng: -5.35, radius_km: 500 },
      page: big,
      narrow: 'radius_km',
    },
    {
      name: 'nearby RU 500 km at 80N',
      kind: 'nearby',
      country: 'RU',
      at: { lat: 80, lng: 100, radius_km: 500 },
      page: big,
      narrow: 'radius_km',
    },
    {
      name: 'within PT box',
      kind: 'within',
      country: 'PT',
      geometry: { type: 'Polygon', coordinates: [PT_BOX] },
      page: big,
      narrow: 'geometry',
    },
    {
      name: 'within SG box',
      kind: 'within',
      country: 'SG',
      geometry: { type: 'Polygon', coordinates: [SG_BOX] },
      page: big,
      narrow: 'geometry',
    },
    {
      name: 'within IN box',
      kind: 'within',
      country: 'IN',
      geometry: { type: 'Polygon', coordinates: [IN_BOX] },
      page: big,
      narrow: 'geometry',
    },
    {
      name: `within PT box x${parts} (MultiPolygon)`,
      kind: 'within',
      country: 'PT',
      geometry: multi(PT_BOX, parts),
      page: big,
      narrow: 'geometry',
    },
    {
      name: 'within PT 10,000-position comb',
      kind: 'within',
      country: 'PT',
      geometry: { type: 'Polygon', coordinates: [comb(-31.3, 32.6, -6.2, 42.2)] },
      page: big,
      narrow: 'geometry',
    },
  ]
}

/** Runs a case on the service. */
export function runCase(service: PostalService, c: WorstCase): Paged<unknown> {
  if (c.kind === 'search') return service.search(c.country, c.filters, c.page)
  if (c.kind === 'nearby') return service.nearby(c.country, c.at, c.page)
  return service.within(c.country, c.geometry, c.page)
}

/** The case as an HTTP request: method, path under /api/v1/postal, and body or query. */
export function requestOf(c: WorstCase): { method: 'GET' | 'POST'; path: string; body?: unknown } {
  if (c.kind === 'search') {
    const query = new URLSearchParams({
      ...(c.filters as Record<string, string>),
      limit: String(c.page.limit),
      offset: String(c.page.offset),
    })
    return { method: 'GET', path: `/${c.country}/search?${query}` }
  }
  if (c.kind === 'nearby') return { method: 'POST', path: `/${c.country}/nearby`, body: { ...c.at, ...c.page } }
  return { method: 'POST', path: `/${c.country}/within`, body: { geometry: c.geometry, ...c.page } }
}
