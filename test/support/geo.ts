/**
 * Haversine with the IUGG mean radius in its atan2 form, written independently of
 * src/domains/postal/geo.ts (which uses asin): the distance oracle of the postal tests.
 */
export function distanceKm(a: { lat: number; lng: number }, b: { lat: number; lng: number }): number {
  const toRad = (d: number) => (d * Math.PI) / 180
  const h =
    Math.sin(toRad(b.lat - a.lat) / 2) ** 2 + Math.cos(toRad(a.lat)) * Math.cos(toRad(b.lat)) * Math.sin(toRad(b.lng - a.lng) / 2) ** 2
  return 2 * 6371.0088 * Math.atan2(Math.sqrt(h), Math.sqrt(1 - h))
}
