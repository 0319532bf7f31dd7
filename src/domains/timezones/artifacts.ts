/**
 * What the timezones build writes and the service reads, in one place both import (the service never
 * loads the build): the artifact's name and its shape.
 */
import type { StoredZone } from './zone.ts'

export const TIMEZONES_ARTIFACT = 'timezones.json'

export interface TimezonesArtifact {
  version: string
  zones: Record<string, StoredZone>
  /** link name -> zone name */
  links: Record<string, string>
  /** name -> alpha-2 codes from zone1970.tab and zone.tab */
  countries: Record<string, string[]>
  /** alpha-2 -> country name (iso3166.tab) */
  countryNames: Record<string, string>
}
