/**
 * Canonical IP record -> the two response forms of the SPEC ("IP record"): Form A nested, Form B flat.
 * Both carry `is_reserved`/`reserved_range` (the SPEC is silent on special-purpose addresses) and
 * MaxMind's `registered_country`/`represented_country`, and Form A's `security` adds `sources`, naming
 * the lists or databases that flagged the address.
 */
import type { Static } from 'elysia'
import type { ResponseForm } from '../../config.ts'
import type { Place } from './city.ts'
import type { IpBulkItemSchemas, IpRecordSchemas } from './schemas.ts'
import { isItemError, type IpRecord, type ItemError } from './service.ts'

const hasLocation = (p: Place) =>
  p.latitude !== null || p.longitude !== null || p.city !== null || p.region !== null || p.postal_code !== null || p.time_zone !== null

type Enveloped = Static<typeof IpRecordSchemas.enveloped>
type PlaceMembers = Pick<Enveloped, 'country' | 'registered_country' | 'represented_country' | 'continent' | 'location'>

/** Form A's members from `country` to `location`: every address of a network (one place) shares them. */
const placeMembers = (p: Place | null): PlaceMembers => ({
  // country, continent, network and security are shared frozen objects already in this shape.
  country: p?.country ?? null,
  // Beyond the SPEC (MaxMind's names): where the network is registered, and the country a military or
  // diplomatic network represents; shared frozen objects like country.
  registered_country: p?.registered_country ?? null,
  represented_country: p?.represented_country ?? null,
  continent: p?.continent ?? null,
  location:
    p && hasLocation(p)
      ? {
          city: p.city,
          region: p.region,
          region_code: p.region_code,
          postal_code: p.postal_code,
          latitude: p.latitude,
          longitude: p.longitude,
          accuracy_radius: p.accuracy_radius,
          timezone: p.time_zone,
        }
      : null,
})

export function enveloped(r: IpRecord): Enveloped {
  return {
    ip: r.ip,
    ip_version: r.ip_version,
    is_reserved: r.reserved !== null,
    reserved_range: r.reserved,
    ...placeMembers(r.place),
    network: r.network,
    security: r.security,
  }
}

/** JSON of the shared frozen parts of records (places, networks, security flags), made once each. */
const partJson = new WeakMap<object, string>()
const keptJson = (part: object, make: () => string) => {
  let json = partJson.get(part)
  if (json === undefined) partJson.set(part, (json = make()))
  return json
}
const NO_PLACE = JSON.stringify(placeMembers(null)).slice(1, -1)

/** A place's members as JSON text, without the braces. */
const placeJson = (p: Place | null) => (p ? keptJson(p, () => JSON.stringify(placeMembers(p)).slice(1, -1)) : NO_PLACE)
const sharedJson = (o: object | null) => (o ? keptJson(o, () => JSON.stringify(o)) : 'null')

/**
 * `JSON.stringify(enveloped(r))`, written from the record's shared parts, each serialised once: a fresh
 * record of ~900 bytes took JSON.stringify 2.4-6 µs, most of it on text every address of a network shares.
 */
export const envelopedJson = (r: IpRecord): string =>
  `{"ip":${JSON.stringify(r.ip)},"ip_version":${r.ip_version},"is_reserved":${r.reserved !== null},` +
  `"reserved_range":${JSON.stringify(r.reserved)},${placeJson(r.place)},"network":${sharedJson(r.network)},` +
  `"security":${sharedJson(r.security)}}`

export function bare(r: IpRecord): Static<typeof IpRecordSchemas.bare> {
  const p = r.place
  const s = r.security
  return {
    ip: r.ip,
    is_reserved: r.reserved !== null,
    reserved_range: r.reserved,
    country: p?.country ? { iso_code: p.country.iso_code, name: p.country.name } : null,
    registered_country: p?.registered_country ? { iso_code: p.registered_country.iso_code, name: p.registered_country.name } : null,
    represented_country: p?.represented_country
      ? { iso_code: p.represented_country.iso_code, name: p.represented_country.name, type: p.represented_country.type }
      : null,
    city: p?.city ?? null,
    latitude: p?.latitude ?? null,
    longitude: p?.longitude ?? null,
    isp: r.network?.isp ?? null,
    is_vpn: s.is_anonymous_vpn,
    // True if either proxy flag is; unknown (null) if the public-proxy list is missing and neither is.
    is_proxy: s.is_public_proxy || s.is_residential_proxy || (s.is_public_proxy === null ? null : false),
    is_tor: s.is_tor_exit_node,
    unavailable_sources: s.unavailable_sources,
  }
}

export const present = (r: IpRecord, form: ResponseForm) => (form === 'enveloped' ? enveloped(r) : bare(r))

export const presentItem = (
  r: IpRecord | ItemError,
  form: ResponseForm,
): Static<typeof IpBulkItemSchemas.enveloped> | Static<typeof IpBulkItemSchemas.bare> => (isItemError(r) ? r : present(r, form))
