/**
 * POSIX TZ strings (the TZif footer, RFC 8536 section 3.3 with its extensions: hours -167..167 in rule
 * times, quoted `<+05>` names): parsed once, then asked which local time type applies at an instant and
 * when the next change after an instant happens. Pure integer arithmetic; no Date, no Intl.
 */
import { civilFromDays, daysFromCivil, daysInMonth, isLeap } from './calendar.ts'
import type { LocalTimeType } from './tzif.ts'

type RuleDate = { kind: 'J'; day: number } | { kind: 'n'; day: number } | { kind: 'M'; month: number; week: number; weekday: number }

interface Rule {
  date: RuleDate
  /** Seconds after local midnight (may be negative or beyond 24 h). */
  time: number
}

export interface PosixTz {
  std: LocalTimeType
  dst?: LocalTimeType
  start?: Rule
  end?: Rule
}

class Reader {
  i = 0
  constructor(readonly s: string) {}
  get done() {
    return this.i >= this.s.length
  }
  peek() {
    return this.s[this.i] ?? ''
  }
  fail(what: string): never {
    throw new Error(`POSIX TZ ${JSON.stringify(this.s)}: ${what} at ${this.i}`)
  }
  name(): string {
    if (this.peek() === '<') {
      const end = this.s.indexOf('>', this.i)
      if (end < 0) this.fail('unterminated <name>')
      const n = this.s.slice(this.i + 1, end)
      this.i = end + 1
      return n
    }
    const m = /^[A-Za-z]{3,}/.exec(this.s.slice(this.i))
    if (!m) this.fail('expected a zone abbreviation')
    this.i += m[0].length
    return m[0]
  }
  /** [+-]h[h][:mm[:ss]] in seconds. */
  hms(): number {
    const m = /^([+-]?)(\d{1,3})(?::(\d{1,2}))?(?::(\d{1,2}))?/.exec(this.s.slice(this.i))
    if (!m) this.fail('expected a time')
    this.i += m[0].length
    const v = Number(m[2]) * 3600 + Number(m[3] ?? 0) * 60 + Number(m[4] ?? 0)
    return m[1] === '-' ? -v : v
  }
  rule(): Rule {
    let date: RuleDate
    const c = this.peek()
    const num = () => {
      const m = /^\d+/.exec(this.s.slice(this.i))
      if (!m) this.fail('expected a number')
      this.i += m[0].length
      return Number(m[0])
    }
    if (c === 'J') {
      this.i++
      date = { kind: 'J', day: num() }
    } else if (c === 'M') {
      this.i++
      const month = num()
      if (this.s[this.i++] !== '.') this.fail("expected '.'")
      const week = num()
      if (this.s[this.i++] !== '.') this.fail("expected '.'")
      date = { kind: 'M', month, week, weekday: num() }
    } else date = { kind: 'n', day: num() }
    let time = 7200
    if (this.peek() === '/') {
      this.i++
      time = this.hms()
    }
    return { date, time }
  }
}

export function parsePosixTz(s: string): PosixTz {
  const r = new Reader(s)
  const stdName = r.name()
  const std: LocalTimeType = { offset: -r.hms(), isDst: false, abbreviation: stdName }
  if (r.done) return { std }
  const dstName = r.name()
  let dstOffset = std.offset + 3600
  if (!r.done && r.peek() !== ',') dstOffset = -r.hms()
  const dst: LocalTimeType = { offset: dstOffset, isDst: true, abbreviation: dstName }
  // POSIX leaves a missing rule implementation-defined; TZif footers always carry one, zic's default is US rules.
  if (r.done)
    return {
      std,
      dst,
      start: { date: { kind: 'M', month: 3, week: 2, weekday: 0 }, time: 7200 },
      end: { date: { kind: 'M', month: 11, week: 1, weekday: 0 }, time: 7200 },
    }
  if (r.s[r.i++] !== ',') r.fail("expected ','")
  const start = r.rule()
  if (r.s[r.i++] !== ',') r.fail("expected ','")
  const end = r.rule()
  if (!r.done) r.fail('trailing characters')
  return { std, dst, start, end }
}

/** Days since the epoch of the rule's date in year `y` (local calendar). */
function ruleDay(rule: RuleDate, y: number): number {
  const jan1 = daysFromCivil(y, 1, 1)
  switch (rule.kind) {
    case 'J': // 1..365, February 29 never counted
      return jan1 + rule.day - 1 + (isLeap(y) && rule.day >= 60 ? 1 : 0)
    case 'n': // 0..365, February 29 counted
      return jan1 + rule.day
    case 'M': {
      const first = daysFromCivil(y, rule.month, 1)
      const firstWeekday = (((first + 4) % 7) + 7) % 7 // 1970-01-01 was a Thursday
      let day = first + ((rule.weekday - firstWeekday + 7) % 7) + (rule.week - 1) * 7
      const length = daysInMonth(y, rule.month)
      while (day >= first + length) day -= 7 // week 5 means "last"
      return day
    }
  }
}

/** The UTC instants at which DST starts and ends in year `y`. */
function changesIn(tz: PosixTz, y: number): Change[] {
  const { std, dst, start, end } = tz
  // The start rule's time is given in standard time, the end rule's in daylight time.
  return [
    { at: ruleDay(start!.date, y) * 86400 + start!.time - std.offset, type: dst! },
    { at: ruleDay(end!.date, y) * 86400 + end!.time - dst!.offset, type: std },
  ]
}

/** Civil year of a UTC instant. */
const yearOf = (t: number) => civilFromDays(Math.floor(t / 86400)).year

type Change = { at: number; type: LocalTimeType }

/**
 * Changes by year, per TZ string: requests cluster around the present, so a year's three-year window is
 * worked out once (a convert asks for it twice). Bounded, as callers may ask for any year.
 */
const changesByYear = new WeakMap<PosixTz, Map<number, Change[]>>()

/** Rule changes of the years around `t`, in time order. */
function changesAround(tz: PosixTz, t: number): Change[] {
  const y = yearOf(t)
  let years = changesByYear.get(tz)
  if (!years) changesByYear.set(tz, (years = new Map()))
  let changes = years.get(y)
  if (!changes) {
    const all = [...changesIn(tz, y - 1), ...changesIn(tz, y), ...changesIn(tz, y + 1)].sort((a, b) => a.at - b.at)
    // All-year DST is written as an end that coincides with the next start: of changes at one instant, the last wins.
    changes = all.filter((c, i) => all[i + 1]?.at !== c.at)
    if (years.size >= 64) years.clear()
    years.set(y, changes)
  }
  return changes
}

/** The local time type the TZ string gives at instant `t`. */
export function posixTypeAt(tz: PosixTz, t: number): LocalTimeType {
  if (!tz.dst) return tz.std
  let current = tz.std
  for (const c of changesAround(tz, t)) {
    if (c.at > t) break
    current = c.type
  }
  return current
}

/** The first change strictly after `t` (a real change of type), or undefined when there is none. */
export function posixNextChange(tz: PosixTz, t: number): Change | undefined {
  if (!tz.dst) return undefined
  let current = posixTypeAt(tz, t)
  for (let probe = t, guard = 0; guard < 4; guard++) {
    for (const c of changesAround(tz, probe)) {
      if (c.at <= t) continue
      if (c.type !== current) return c
      current = c.type
    }
    probe += 366 * 86400
  }
  return undefined // all-year DST written as a rule: no change ever happens
}
