/** Canonical postal results -> the SPEC's Form A (enveloped) and Form B (bare) field names. */
import type { Static } from 'elysia'
import { itemsJson, type ResponseForm } from '../../http/reply/reply.ts'
import type { Paged } from '../../lib/page.ts'
import type {
  NearbyRecordSchemas,
  PostalCheckSchemas,
  PostalRecordSchemas,
  PostalSystemDetailSchemas,
  PostalSystemSchemas,
} from './schemas.ts'
import type { FormatCheck, PostalRecord, PostalSystem } from './service.ts'

// Typed by the schemas the routes declare, so a presenter cannot drift from the documented contract; each
// form's branch `satisfies` its own, so neither can take the other's shape.
type SystemA = Static<typeof PostalSystemSchemas.enveloped>
type SystemB = Static<typeof PostalSystemSchemas.bare> | Static<typeof PostalSystemDetailSchemas.bare>
/** A record, with `distance_km` when the query measured it (nearby). */
type RecordA = Static<typeof PostalRecordSchemas.enveloped> | Static<typeof NearbyRecordSchemas.enveloped>
type RecordB = Static<typeof PostalRecordSchemas.bare> | Static<typeof NearbyRecordSchemas.bare>
type CheckA = Static<typeof PostalCheckSchemas.enveloped>
type CheckB = Static<typeof PostalCheckSchemas.bare>

/** A postal system: Form B's list item lacks `total_codes`, which its single-country response has (`single`). */
export function presentSystem(s: PostalSystem, form: ResponseForm, single: boolean): SystemA | SystemB {
  if (form === 'enveloped')
    return {
      country: s.name,
      country_code: s.alpha2,
      format: s.format,
      regex: s.regex,
      total_codes: s.totalCodes,
      total_records: s.totalRecords,
    } satisfies SystemA
  return {
    country_code: s.alpha2,
    country_name: s.name,
    format: s.format,
    regex: s.regex,
    ...(single ? { total_codes: s.totalCodes } : {}),
  } satisfies SystemB
}

export function presentRecord(r: PostalRecord, form: ResponseForm): RecordA | RecordB {
  const distance = r.distance_km !== undefined ? { distance_km: r.distance_km } : {}
  if (form === 'enveloped') {
    return {
      postal_code: r.postal_code,
      place_name: r.place_name,
      admin_name1: r.admin_name1,
      admin_code1: r.admin_code1,
      admin_name2: r.admin_name2,
      admin_code2: r.admin_code2,
      admin_name3: r.admin_name3,
      admin_code3: r.admin_code3,
      latitude: r.latitude,
      longitude: r.longitude,
      accuracy: r.accuracy,
      ...distance,
    } satisfies RecordA
  }
  return {
    postal_code: r.postal_code,
    country_code: r.country_code,
    place_name: r.place_name,
    admin_name: r.admin_name1,
    admin_code: r.admin_code1,
    latitude: r.latitude,
    longitude: r.longitude,
    ...distance,
  } satisfies RecordB
}

/** Batch item: Form A `format_valid` + `exists`; Form B adds `valid`, true when both hold. */
export function presentCheck(c: FormatCheck, form: ResponseForm): CheckA | CheckB {
  if (form === 'enveloped')
    return { postal_code: c.postal_code, country_code: c.country_code, format_valid: c.format_valid, exists: c.exists } satisfies CheckA
  return {
    country_code: c.country_code,
    postal_code: c.postal_code,
    valid: c.format_valid && c.exists,
    format_valid: c.format_valid,
    exists: c.exists,
  } satisfies CheckB
}

/**
 * A page of records in the caller's form: objects when presented on the event loop (the query ran there), or
 * their JSON text when a query worker ran it and presented it (`presentPageJson`).
 */
export type PresentedPage = { total: number; items: object[] } | { total: number; json: string }

export const presentPage = ({ total, items }: Paged<PostalRecord>, form: ResponseForm): PresentedPage => ({
  total,
  items: items.map((r) => presentRecord(r, form)),
})

/**
 * A page as a query worker sends it back: presented and serialised there. Its records as objects would
 * cost the event loop ~1.1 ms to take in (1,000 records, 300 KB), then ~1-2 ms to present and serialise;
 * a string comes across as a copy of its bytes.
 */
export const presentPageJson = ({ total, items }: Paged<PostalRecord>, form: ResponseForm): PresentedPage => ({
  total,
  json: itemsJson(items.map((r) => presentRecord(r, form))),
})
