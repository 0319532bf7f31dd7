/**
 * Upstream sources of the timezones domain: the IANA tz database as Debian's `tzdata` package installs it
 * (compiled TZif files, `tzdata.zi` carrying the release name, and the zone/country tables).
 *
 * The runtime's own copy (Bun's ICU) lags behind the IANA releases, so the build compiles whatever Debian
 * installed, refusing anything older than TZDATA_MIN (src/data/tzdata.ts, shared with the countries domain).
 */
import { TZDATA_MIN, ZONEINFO_DIR } from '../../data/tzdata.ts'
import type { Source } from '../../data/types.ts'

const tz = {
  version: TZDATA_MIN,
  date: '2026-10-29',
  license: 'Public domain',
  attribution: 'IANA Time Zone Database (tzdata), public domain; as packaged by Debian (tzdata package)',
  homepage: 'https://www.iana.org/time-zones',
}

export const timezonesSources: Source[] = [
  // tzdata.zi is the whole database in compact zic input form; its first line names the release, and its
  // Z/L lines say which names are zones and which are links. Its hash changes with every release, so it
  // also fingerprints the TZif files next to it.
  { id: 'tzdata', system: `${ZONEINFO_DIR}/tzdata.zi`, ...tz },
  { id: 'tzdata-zone1970', system: `${ZONEINFO_DIR}/zone1970.tab`, ...tz },
  { id: 'tzdata-zonetab', system: `${ZONEINFO_DIR}/zone.tab`, ...tz },
  { id: 'tzdata-iso3166', system: `${ZONEINFO_DIR}/iso3166.tab`, ...tz },
]
