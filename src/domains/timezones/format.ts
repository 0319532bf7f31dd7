/**
 * The SPEC's text formats for offsets, dates and times, by integer arithmetic on "wall seconds" (local
 * seconds since 1970-01-01 as if the zone were UTC). No Date or Intl: they would consult the runtime's
 * own, older tz copy for nothing, and cost time on the hot path.
 */
import { civilFromDays } from './calendar.ts'

const pad2 = (n: number) => (n < 10 ? '0' : '') + n

/** `YYYY-MM-DD` of wall seconds. */
export function formatDate(wall: number): string {
  const { year, month, day } = civilFromDays(Math.floor(wall / 86400))
  return `${String(year).padStart(4, '0')}-${pad2(month)}-${pad2(day)}`
}

const secondOfDay = (wall: number) => ((wall % 86400) + 86400) % 86400

/** `HH:MM:SS` (24-hour). */
export function formatTime24(wall: number): string {
  const s = secondOfDay(wall)
  return `${pad2(Math.floor(s / 3600))}:${pad2(Math.floor(s / 60) % 60)}:${pad2(s % 60)}`
}

const twelve = (hour: number) => ({ hour: hour % 12 === 0 ? 12 : hour % 12, meridiem: hour < 12 ? 'AM' : 'PM' })

/** `H:MM AM` — the timezone record's 12-hour clock (no leading zero, no seconds). */
export function formatTime12Short(wall: number): string {
  const s = secondOfDay(wall)
  const { hour, meridiem } = twelve(Math.floor(s / 3600))
  return `${hour}:${pad2(Math.floor(s / 60) % 60)} ${meridiem}`
}

/** `HH:MM:SS AM` — the conversion result's 12-hour clock. */
export function formatTime12Long(wall: number): string {
  const s = secondOfDay(wall)
  const { hour, meridiem } = twelve(Math.floor(s / 3600))
  return `${pad2(hour)}:${pad2(Math.floor(s / 60) % 60)}:${pad2(s % 60)} ${meridiem}`
}

/** `+05:30`, `-03:00`, `+00:00`; historical offsets with seconds (local mean time) get `:SS`. */
export function formatOffset(seconds: number): string {
  const sign = seconds < 0 ? '-' : '+'
  const a = Math.abs(seconds)
  const rest = a % 60
  return `${sign}${pad2(Math.floor(a / 3600))}:${pad2(Math.floor(a / 60) % 60)}${rest ? ':' + pad2(rest) : ''}`
}

/** `+5h 45m`, `-3h 30m`, `+0h 00m` (sign, hours, two-digit minutes; seconds rounded to the minute). */
export function formatDifference(seconds: number): string {
  const minutes = Math.round(Math.abs(seconds) / 60)
  return `${seconds < 0 ? '-' : '+'}${Math.floor(minutes / 60)}h ${pad2(minutes % 60)}m`
}
