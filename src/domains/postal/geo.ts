/**
 * Geometry for the radius and polygon queries: great-circle distance, the latitude/longitude box that
 * holds a circle (split at the antimeridian, widened to every longitude near a pole), GeoJSON polygon
 * validation with messages that name the bad position, and point-in-polygon with holes.
 */
import { invalid } from '../../lib/errors.ts'

/** Mean Earth radius (IUGG), km. */
export const EARTH_RADIUS_KM = 6371.0088
const RAD = Math.PI / 180

export function haversineKm(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const dLat = (lat2 - lat1) * RAD
  const dLng = (lng2 - lng1) * RAD
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * RAD) * Math.cos(lat2 * RAD) * Math.sin(dLng / 2) ** 2
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(a)))
}

export interface Box {
  minLat: number
  maxLat: number
  minLng: number
  maxLng: number
}

/** Boxes (one, or two across the antimeridian) that contain every point within `radiusKm` of the centre. */
export function circleBoxes(lat: number, lng: number, radiusKm: number): Box[] {
  const angular = radiusKm / EARTH_RADIUS_KM
  const dLat = angular / RAD
  const minLat = lat - dLat
  const maxLat = lat + dLat
  // A circle that reaches a pole covers every longitude.
  if (minLat <= -90 || maxLat >= 90) return [{ minLat: Math.max(-90, minLat), maxLat: Math.min(90, maxLat), minLng: -180, maxLng: 180 }]
  // Widest longitude offset of a spherical cap: asin(sin(r) / cos(lat)).
  const dLng = Math.asin(Math.min(1, Math.sin(angular) / Math.cos(lat * RAD))) / RAD
  const west = lng - dLng
  const east = lng + dLng
  if (dLng >= 180) return [{ minLat, maxLat, minLng: -180, maxLng: 180 }]
  if (west < -180)
    return [
      { minLat, maxLat, minLng: west + 360, maxLng: 180 },
      { minLat, maxLat, minLng: -180, maxLng: east },
    ]
  if (east > 180)
    return [
      { minLat, maxLat, minLng: west, maxLng: 180 },
      { minLat, maxLat, minLng: -180, maxLng: east - 360 },
    ]
  return [{ minLat, maxLat, minLng: west, maxLng: east }]
}

/** A polygon: outer ring then holes, each ring a closed list of [lng, lat]. */
export type Ring = [number, number][]
export type Polygon = Ring[]

export const MAX_VERTICES = 10_000

const isArray = Array.isArray

/**
 * Checks a GeoJSON Polygon or MultiPolygon (RFC 7946) and returns its polygons. Every problem is a 422
 * naming the path of the offending member, e.g. `geometry.coordinates.0.3`.
 */
export function parsePolygons(geometry: unknown, field = 'geometry'): Polygon[] {
  if (!geometry || typeof geometry !== 'object' || isArray(geometry))
    throw invalid(field, 'expected a GeoJSON Polygon or MultiPolygon object')
  const { type, coordinates } = geometry as { type?: unknown; coordinates?: unknown }
  if (type !== 'Polygon' && type !== 'MultiPolygon')
    throw invalid(`${field}.type`, `expected "Polygon" or "MultiPolygon", got ${JSON.stringify(type) ?? 'nothing'}`)
  const path = `${field}.coordinates`
  if (!isArray(coordinates) || !coordinates.length)
    throw invalid(path, `expected a non-empty array of ${type === 'Polygon' ? 'rings' : 'polygons'}`)
  const polygons = type === 'Polygon' ? [coordinates] : coordinates
  let vertices = 0
  for (const p of polygons) if (isArray(p)) for (const r of p) if (isArray(r)) vertices += r.length
  if (vertices > MAX_VERTICES)
    throw invalid(path, `has ${vertices.toLocaleString('en')} positions; at most ${MAX_VERTICES.toLocaleString('en')} are accepted`)
  return polygons.map((polygon, i) => parsePolygon(polygon, type === 'Polygon' ? path : `${path}.${i}`))
}

function parsePolygon(polygon: unknown, path: string): Polygon {
  if (!isArray(polygon) || !polygon.length)
    throw invalid(path, 'expected a polygon: a non-empty array of linear rings (the outer ring, then holes)')
  return polygon.map((ring, i) => parseRing(ring, `${path}.${i}`, i === 0 ? 'outer ring' : `hole ${i}`))
}

function parseRing(ring: unknown, path: string, what: string): Ring {
  if (!isArray(ring)) throw invalid(path, `${what}: expected an array of [longitude, latitude] positions`)
  if (ring.length < 4)
    throw invalid(
      path,
      `${what}: a linear ring needs at least 4 positions (3 corners and the first repeated to close it), got ${ring.length}`,
    )
  const out: Ring = ring.map((pos, i) => {
    const p = `${path}.${i}`
    if (!isArray(pos) || pos.length < 2 || pos.length > 3) throw invalid(p, 'expected a position [longitude, latitude]')
    const [lng, lat] = pos
    if (typeof lng !== 'number' || !Number.isFinite(lng)) throw invalid(p, 'longitude must be a finite number')
    if (typeof lat !== 'number' || !Number.isFinite(lat)) throw invalid(p, 'latitude must be a finite number')
    if (lng < -180 || lng > 180) throw invalid(p, `longitude ${lng} is outside -180..180 (positions are [longitude, latitude])`)
    if (lat < -90 || lat > 90) throw invalid(p, `latitude ${lat} is outside -90..90 (positions are [longitude, latitude])`)
    return [lng, lat] as [number, number]
  })
  const first = out[0]!
  const last = out.at(-1)!
  if (first[0] !== last[0] || first[1] !== last[1])
    throw invalid(path, `${what} is not closed: its last position must repeat the first [${first.join(', ')}]`)
  const distinct = new Set(out.map((p) => `${p[0]},${p[1]}`))
  if (distinct.size < 3) throw invalid(path, `${what} has fewer than 3 distinct positions, so it encloses no area`)
  return out
}

/** Even-odd ray casting in the longitude/latitude plane (GeoJSON's own model of edges). */
export function inRing(lng: number, lat: number, ring: Ring): boolean {
  let inside = false
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const [xi, yi] = ring[i]!
    const [xj, yj] = ring[j]!
    if (yi > lat !== yj > lat && lng < ((xj - xi) * (lat - yi)) / (yj - yi) + xi) inside = !inside
  }
  return inside
}

/** Inside the outer ring and outside every hole. */
export function inPolygon(lng: number, lat: number, polygon: Polygon): boolean {
  if (!inRing(lng, lat, polygon[0]!)) return false
  for (let h = 1; h < polygon.length; h++) if (inRing(lng, lat, polygon[h]!)) return false
  return true
}
