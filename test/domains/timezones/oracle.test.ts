/**
 * Proof of correctness against an independent implementation: every zone and link, at a spread of
 * instants from 1970 to 2037 (a grid, the whole of 2026-2027 more densely, and both sides of every
 * transition), must give the same offset, abbreviation and DST flag as Python's zoneinfo over the same
 * system tzdata; and wall times around every transition must map to the same instants with the same
 * gap/ambiguous verdicts. Zero mismatches.
 */
import { beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { SOURCE_OUT_DIR } from '../../../src/data/open.ts'
import { readTzdataZi } from '../../../src/domains/timezones/build.ts'
import { CONVENTIONAL_ABBREVIATIONS, type TimezonesService, openTimezonesService } from '../../../src/domains/timezones/service.ts'
import { oracleAt, oracleWall } from './oracle.ts'

const FROM = Date.UTC(1970, 0, 1) / 1000
const TO = Date.UTC(2038, 0, 1) / 1000
const DAY = 86400

let service: TimezonesService

beforeAll(() => {
  service = openTimezonesService(join(SOURCE_OUT_DIR, 'timezones.json'))
})

/** Transition instants of a zone in [FROM, TO), as the service sees them. */
function transitions(name: string): number[] {
  const zone = service.zoneNamed(name)!.zone
  const out: number[] = []
  for (let t = FROM - 1, next = zone.nextChange(t); next && next.at < TO; next = zone.nextChange(t)) out.push((t = next.at))
  return out
}

describe('compiled tzdata against python zoneinfo', () => {
  test('the same release and the same 597 names (every zone and link but Factory)', () => {
    const zi = readTzdataZi(readFileSync('/usr/share/zoneinfo/tzdata.zi', 'utf8'))
    expect(service.version).toBe(zi.version)
    expect(service.names.length).toBe(597)
    expect(new Set(service.names)).toEqual(new Set([...zi.zones, ...zi.links.keys()]))
  }, 120_000)

  test('offset, abbreviation and DST flag at every sampled instant, 1970-2037', () => {
    // A grid with an odd step so instants fall at every time of day, 2026-2027 every 2 days 5 hours
    // (the 2026 rule changes: Vancouver, Edmonton, Winnipeg, Casablanca, Havana …), and one second
    // either side of each transition the service knows of.
    const grid: number[] = []
    for (let t = FROM; t < TO; t += 23 * DAY + 3 * 3600 + 17 * 60 + 11) grid.push(t)
    for (let t = Date.UTC(2026, 0, 1) / 1000; t < Date.UTC(2028, 0, 1) / 1000; t += 2 * DAY + 5 * 3600) grid.push(t)
    const request: Record<string, number[]> = {}
    for (const name of service.names) request[name] = [...grid, ...transitions(name).flatMap((t) => [t - 1, t])]
    const expected = oracleAt(request)
    const mismatches: string[] = []
    let compared = 0
    for (const [name, instants] of Object.entries(request)) {
      const zone = service.zoneNamed(name)!.zone
      instants.forEach((t, i) => {
        const [offset, dst, abbreviation] = expected[name]![i]!
        const got = zone.typeAt(t)
        compared++
        if (got.offset !== offset || got.isDst !== (dst === 1) || got.abbreviation !== abbreviation) {
          mismatches.push(
            `${name} @ ${new Date(t * 1000).toISOString()}: service ${got.offset} ${got.isDst} ${got.abbreviation}, ` +
              `zoneinfo ${offset} ${dst === 1} ${abbreviation}`,
          )
        }
      })
    }
    expect(compared).toBeGreaterThan(597 * 1000)
    expect(mismatches.slice(0, 20)).toEqual([])
    expect(mismatches.length).toBe(0)
  }, 120_000)

  test('wall times around every transition: same instant and same gap/ambiguous verdict', () => {
    // For each transition, wall times from 90 minutes before to 90 minutes after the change, in both
    // the old and the new offset, every 15 minutes: this walks through every gap and every overlap.
    const request: Record<string, number[]> = {}
    for (const name of service.names) {
      const zone = service.zoneNamed(name)!.zone
      const walls = new Set<number>()
      for (const t of transitions(name)) {
        const before = zone.typeAt(t - 1).offset
        const after = zone.typeAt(t).offset
        for (let d = -5400; d <= 5400; d += 900) {
          walls.add(t + before + d)
          walls.add(t + after + d)
        }
      }
      request[name] = [...walls]
    }
    const expected = oracleWall(request)
    const mismatches: string[] = []
    const statuses = { ok: 0, gap: 0, ambiguous: 0 }
    for (const [name, walls] of Object.entries(request)) {
      const zone = service.zoneNamed(name)!.zone
      walls.forEach((wall, i) => {
        const [instant, status] = expected[name]![i]!
        const got = zone.instantOf(wall)
        statuses[got.status]++
        if (got.instant !== instant || got.status !== status)
          mismatches.push(
            `${name} wall ${new Date(wall * 1000).toISOString().slice(0, 19)}: service ${got.instant} ${got.status}, ` +
              `zoneinfo ${instant} ${status}`,
          )
      })
    }
    expect(statuses.gap).toBeGreaterThan(1000)
    expect(statuses.ambiguous).toBeGreaterThan(1000)
    expect(mismatches.slice(0, 20)).toEqual([])
    expect(mismatches.length).toBe(0)
  }, 120_000)

  test('the abbreviation table is what zoneinfo shows over the coming year', () => {
    const now = Math.floor(Date.now() / 1000)
    const year = 366 * DAY
    const request: Record<string, number[]> = {}
    for (const name of service.names) {
      const entry = service.zoneNamed(name)!
      if (entry.linkTo) continue
      const instants = [now]
      for (let t = now + DAY; t <= now + year; t += DAY) instants.push(t)
      for (let next = entry.zone.nextChange(now); next && next.at <= now + year; next = entry.zone.nextChange(next.at))
        instants.push(next.at)
      request[name] = instants
    }
    const expected = oracleAt(request)
    const offsets = new Map<string, Set<number>>()
    const zones = new Map<string, Set<string>>()
    for (const [name, rows] of Object.entries(expected)) {
      for (const [offset, , abbreviation] of rows) {
        if (/^[+-]/.test(abbreviation)) continue
        const key = abbreviation.toUpperCase()
        offsets.set(key, (offsets.get(key) ?? new Set()).add(offset))
        zones.set(key, (zones.get(key) ?? new Set()).add(name))
      }
    }
    const table = service.abbreviationTable(now)
    expect([...table.keys()].sort()).toEqual([...offsets.keys()].sort())
    for (const [key, use] of table) {
      expect({ key, offsets: use.offsets }).toEqual({ key, offsets: [...offsets.get(key)!].sort((a, b) => a - b) })
      expect({ key, zones: use.zones }).toEqual({ key, zones: [...zones.get(key)!].sort() })
      // Resolved exactly when there is one offset (or the SPEC names a conventional meaning), to a zone that uses it.
      expect({ key, resolves: !!use.chosen }).toEqual({ key, resolves: use.offsets.length === 1 || key in CONVENTIONAL_ABBREVIATIONS })
      if (use.chosen) expect(use.zones).toContain(use.chosen)
    }
    // The SPEC's example of an ambiguous abbreviation.
    expect(table.get('CST')!.offsets.length).toBeGreaterThan(1)
  }, 120_000)
})
