/**
 * The IANA tz database as Debian's `tzdata` package installs it: the oldest release the build accepts and
 * where it lies. Shared by the timezones domain and the countries domain (which reads its zone tables).
 * `.ci/run` greps the TZDATA_MIN line to decide whether to upgrade the Debian package: keep it on one
 * line, in this exact form.
 */
export const TZDATA_MIN = '2026f'

/** Where Debian installs the tz database; the builder reads each zone's TZif file from here. */
export const ZONEINFO_DIR = '/usr/share/zoneinfo'
