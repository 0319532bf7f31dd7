/**
 * Acceptance: Matomo's own fixtures (a seeded sample of device-detector's Tests/fixtures at commit
 * 3856a286, the commit the detection data is built from, read in place from shared/acceptance-data)
 * through the service, field by field. The bar: at least 97% agreement on every field (os
 * name/version/platform, client type/name/version/engine, device type/brand/model, bot), on devices,
 * bots and the Client Hints cases. The rates are printed; a failure lists every disagreeing case.
 */
import { beforeAll, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { openDataDir } from '../../../src/data/open.ts'
import { UA_ARTIFACT } from '../../../src/domains/ua/build.ts'
import { loadDefinitions } from '../../../src/domains/ua/definitions.ts'
import { openUaService, type UaResult, type UaService } from '../../../src/domains/ua/service.ts'
import { FIXTURES } from './corpus.ts'

type Fields = Record<string, string | undefined>
interface Case {
  ua: string
  file: string
  client?: Fields | null
  os?: Fields | null
  device?: Fields | null
  bot?: Fields | null
  headers?: Record<string, string>
  dropped_hints?: string[]
}

const fixtures = JSON.parse(readFileSync(FIXTURES, 'utf8')) as { devices: Case[]; bots: Case[]; client_hints: Case[] }
let service: UaService
beforeAll(() => {
  service = openUaService(loadDefinitions(openDataDir().path(UA_ARTIFACT)), { cacheEntries: 0, cacheBytes: 0 })
})

const GROUPS = {
  client: ['type', 'name', 'version', 'engine', 'engine_version'],
  os: ['name', 'version', 'platform'],
  device: ['type', 'brand', 'model'],
  bot: ['name', 'category', 'producer', 'url'],
} as const

/** Agreement per field over the cases that state an expectation for it; prints the table. */
function agreement(label: string, cases: Case[], groups: (keyof typeof GROUPS)[], skip: (c: Case, key: string) => boolean = () => false) {
  const tally = new Map<string, { agree: number; total: number; misses: string[] }>()
  for (const c of cases) {
    const got = service.parse(c.ua, c.headers) as UaResult
    for (const group of groups) {
      const expected = c[group]
      if (expected === undefined) continue
      for (const field of GROUPS[group]) {
        if (expected !== null && expected[field] === undefined) continue // the fixture does not state it
        const want = String(expected?.[field] ?? '')
        const have = String((got[group] as Fields | null)?.[field] ?? '')
        const key = `${group}.${field}`
        if (skip(c, key)) continue
        const t = tally.get(key) ?? { agree: 0, total: 0, misses: [] }
        t.total++
        if (want === have) t.agree++
        else
          t.misses.push(
            `${JSON.stringify(c.ua)}${c.headers ? ` ${JSON.stringify(c.headers)}` : ''}: want ${JSON.stringify(want)} ` +
              `got ${JSON.stringify(have)}`,
          )
        tally.set(key, t)
      }
    }
  }
  const rates = new Map([...tally].map(([k, t]) => [k, { rate: t.agree / t.total, misses: t.misses }]))
  console.log(
    `\n${label}:\n` +
      [...tally]
        .map(
          ([k, t]) =>
            `  ${k.padEnd(22)} ${((t.agree / t.total) * 100).toFixed(1).padStart(5)}% (${t.agree}/${t.total})${
              t.agree < t.total ? `  ` + `e.g. ${t.misses[0]!.slice(0, 160)}` : ''
            }`,
        )
        .join('\n'),
  )
  return rates
}

/** Every field at or above the bar; the failure names the field, its rate and every disagreeing case. */
function expectAtLeast(rates: ReturnType<typeof agreement>, bar: number) {
  const below = [...rates]
    .filter(([, r]) => r.rate < bar)
    .map(([field, r]) => `${field} ${(r.rate * 100).toFixed(1)}% < ${bar * 100}%, disagreeing:\n    ${r.misses.join('\n    ')}`)
  expect(below).toEqual([])
}

test('devices: >= 97% agreement per field with Matomo', () => {
  expect(fixtures.devices.length).toBeGreaterThanOrEqual(1000)
  expectAtLeast(agreement('devices (Matomo fixtures)', fixtures.devices, ['client', 'os', 'device']), 0.97)
})

test('bots: >= 97% agreement per field with Matomo, and every bot is is_bot', () => {
  expectAtLeast(agreement('bots (Matomo fixtures)', fixtures.bots, ['bot']), 0.97)
  const missed = fixtures.bots.filter((c) => !service.parse(c.ua).is_bot).map((c) => c.ua)
  expect(missed).toEqual([])
})

test('Client Hints: >= 97% agreement per field with Matomo', () => {
  // The API refuses an empty `ua` (422); Matomo's hint-only cases with no UA are left out and counted.
  const withUa = fixtures.client_hints.filter((c) => c.ua.trim() !== '')
  console.log(`client hints: ${fixtures.client_hints.length - withUa.length} cases without a UA left out`)
  expect(withUa.length).toBeGreaterThan(350)
  // The acceptance data dropped the hints outside the SPEC's list; where one of them carried the full
  // version (Sec-CH-UA-Full-Version, fullVersionList …), Matomo's expected client.version cannot be
  // derived from what is sent, so those cases do not count for that one field here (printed below).
  const fullVersionDropped = (c: Case) => (c.dropped_hints ?? []).some((h) => /full.?version/i.test(h))
  const rates = agreement(
    'client hints (Matomo fixtures)',
    withUa,
    ['client', 'os', 'device'],
    (c, key) => key === 'client.version' && fullVersionDropped(c),
  )
  expectAtLeast(rates, 0.97)
})

test('Client Hints whose full version was dropped: client.version printed over every case, the major version agrees', () => {
  const withUa = fixtures.client_hints.filter((c) => c.ua.trim() !== '')
  agreement(
    'client hints, client.version over every case (the full version of 154 was not sent)',
    withUa,
    ['client'],
    (_, key) => key !== 'client.version',
  )
  // Where the dropped hint carried the full version, what was sent still names the major version: that must agree.
  const dropped = withUa.filter((c) => c.client?.version && (c.dropped_hints ?? []).some((h) => /full.?version/i.test(h)))
  const major = (v: string | undefined) => String(v ?? '').split('.')[0]
  const wrong = dropped
    .map((c) => ({ ua: c.ua, want: c.client!.version, got: (service.parse(c.ua, c.headers).client as Fields | null)?.version }))
    .filter((r) => major(r.want) !== major(r.got))
  expect(dropped.length).toBeGreaterThan(100)
  expect(wrong).toEqual([])
})
