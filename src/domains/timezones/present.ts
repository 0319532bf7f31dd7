/**
 * Canonical results -> response forms. The SPEC describes one shape for the timezone record, conversion
 * and difference (no Form A / Form B variants), so both forms carry the same members; the envelope is
 * added by http/reply.ts.
 */
import type { ResponseForm } from '../../http/reply.ts'
import type { Conversion, Difference, TimezoneListItem, TimezoneRecord } from './service.ts'

export const presentRecord = (record: TimezoneRecord, _form: ResponseForm) => record
export const presentListItem = (item: TimezoneListItem, _form: ResponseForm) => item
export const presentConversion = (conversion: Conversion, _form: ResponseForm) => conversion
export const presentDifference = (difference: Difference, _form: ResponseForm) => difference
