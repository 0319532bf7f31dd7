/**
 * One compiled zone at run time: its transitions (binary-searched) and, past the last one, its POSIX TZ
 * rule. Answers "which local time type applies at this instant" and "which instants show this wall-clock
 * time" — the two questions every endpoint reduces to.
 */
import { parsePosixTz, posixNextChange, posixTypeAt, type PosixTz } from './posix-tz.ts'
import type { LocalTimeType } from './tzif.ts'

/** A zone as stored in the artifact (see build.ts). */
export interface StoredZone {
  /** [offset seconds, 1 if DST else 0, abbreviation] */
  types: [number, 0 | 1, string][]
  /** Transition instants, delta-encoded: the first is absolute, the others are gaps from the previous. */
  times: number[]
  /** Type index in effect from each transition on. */
  indices: number[]
  footer: string
}

export interface Change {
  at: number
  type: LocalTimeType
}

/** How a wall-clock time maps to instants: exactly one, none (skipped by a change), or two (repeated). */
export type WallStatus = 'ok' | 'gap' | 'ambiguous'

export class Zone {
  readonly types: LocalTimeType[]
  private readonly times: Float64Array
  private readonly indices: Uint8Array
  private readonly footer?: PosixTz
  /**
   * The footer's answer for the last instant asked and until when it holds: "now" is asked for on every
   * request and working the rule out each time cost more than the rest of a record.
   */
  private footerCache?: { from: number; until: number; type: LocalTimeType }

  constructor(
    readonly name: string,
    stored: StoredZone,
  ) {
    this.types = stored.types.map(([offset, dst, abbreviation]) => ({ offset, isDst: dst === 1, abbreviation }))
    this.times = new Float64Array(stored.times.length)
    let t = 0
    stored.times.forEach((d, i) => (this.times[i] = t = i === 0 ? d : t + d))
    this.indices = Uint8Array.from(stored.indices)
    this.footer = stored.footer ? parsePosixTz(stored.footer) : undefined
  }

  /** Index of the last transition at or before `t`, or -1. */
  private lastAtOrBefore(t: number): number {
    let lo = 0
    let hi = this.times.length - 1
    let found = -1
    while (lo <= hi) {
      const mid = (lo + hi) >> 1
      if (this.times[mid]! <= t) {
        found = mid
        lo = mid + 1
      } else hi = mid - 1
    }
    return found
  }

  /** The local time type in effect at instant `t` (seconds since the epoch). */
  typeAt(t: number): LocalTimeType {
    const n = this.times.length
    // Past the last transition the footer rules; a zone without transitions is its footer alone.
    if (this.footer && (n === 0 || t > this.times[n - 1]!)) return this.footerTypeAt(this.footer, t)
    const i = this.lastAtOrBefore(t)
    return this.types[i < 0 ? 0 : this.indices[i]!]!
  }

  private footerTypeAt(footer: PosixTz, t: number): LocalTimeType {
    const cached = this.footerCache
    if (cached && t >= cached.from && t < cached.until) return cached.type
    const type = posixTypeAt(footer, t)
    this.footerCache = { from: t, until: posixNextChange(footer, t)?.at ?? Infinity, type }
    return type
  }

  /** The first change of local time type strictly after `t`, if any. */
  nextChange(t: number): Change | undefined {
    const n = this.times.length
    if (n > 0 && t < this.times[n - 1]!) {
      const i = this.lastAtOrBefore(t) + 1
      return { at: this.times[i]!, type: this.types[this.indices[i]!]! }
    }
    return this.footer ? posixNextChange(this.footer, t) : undefined
  }

  /**
   * The latest change at or before `t`, if any. Past the table the footer's changes (a few a year at
   * most) are walked from a little over a year back.
   */
  previousChange(t: number): Change | undefined {
    const n = this.times.length
    const last = n > 0 ? { at: this.times[n - 1]!, type: this.types[this.indices[n - 1]!]! } : undefined
    if (this.footer && (n === 0 || t > last!.at)) {
      let found = last
      for (
        let c = posixNextChange(this.footer, Math.max(last?.at ?? -Infinity, t - 400 * 86400));
        c && c.at <= t;
        c = posixNextChange(this.footer, c.at)
      )
        found = c
      return found
    }
    const i = this.lastAtOrBefore(t)
    return i < 0 ? undefined : { at: this.times[i]!, type: this.types[this.indices[i]!]! }
  }

  /**
   * The instant that shows wall-clock time `wall` (local seconds since the epoch, as if the zone were UTC).
   * Rule (the one of RFC 5545 and Temporal's "compatible"): a repeated time takes its earlier instant; a
   * skipped time is read with the offset in force before the change, so it lands as far after the change
   * as it was after the skipped boundary (02:30 in a 02:00->03:00 gap becomes 03:30).
   */
  instantOf(wall: number): { instant: number; status: WallStatus } {
    // Offsets are within ±26 h, so every solution lies in this window.
    const from = wall - 27 * 3600
    const to = wall + 27 * 3600
    const solutions: number[] = []
    let start = from
    let type = this.typeAt(from)
    let gapInstant: number | undefined
    for (;;) {
      const next = this.nextChange(start)
      const end = next && next.at <= to ? next.at : Infinity
      const t = wall - type.offset
      if (t >= start && t < end) solutions.push(t)
      else if (next && end !== Infinity && t >= end && wall - next.type.offset < end) gapInstant ??= t
      if (end === Infinity) break
      start = end
      type = next!.type
    }
    if (solutions.length === 1) return { instant: solutions[0]!, status: 'ok' }
    if (solutions.length > 1) return { instant: solutions[0]!, status: 'ambiguous' }
    return { instant: gapInstant ?? wall - type.offset, status: 'gap' }
  }
}
