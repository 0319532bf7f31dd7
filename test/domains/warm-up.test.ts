/**
 * Domains' warm-up steps (Domain.warmUp, mount.ts `warmUp`): run one a turn of the event loop after the
 * domains have opened, never together, and a failing step is a warning, not a crash. After the ua domain's
 * own steps (the literal table packed, nine sample user agents parsed, every list index made, packed again)
 * it answers Matomo's device fixtures, and real user agents of every kind find nothing left to index or pack
 * on their own turn. Turns are counted (test/support/turns.ts), not timed.
 */
import { afterAll, expect, test } from 'bun:test'
import { openDataDir } from '../../src/data/open.ts'
import { openDomain, warmUp } from '../../src/domains/mount.ts'
import { defineDomain, type MountedDomain } from '../../src/domains/types.ts'
import { readFileSync } from 'node:fs'
import { WARM_UP } from '../../src/domains/ua/engine.ts'
import uaDomain from '../../src/domains/ua/index.ts'
import type { UaService } from '../../src/domains/ua/service.ts'
import { literalTableStats } from '../../src/domains/ua/prefilter.ts'
import { every, FIXTURES, realUserAgents } from './ua/corpus.ts'
import { testConfig } from '../support/app.ts'
import { turnCounter } from '../support/turns.ts'

const turn = turnCounter()
afterAll(() => turn.stop())

/** A domain whose warm-up records the turn of each step; `failAt` throws at that step. */
const recording = (name: string, steps: number, at: [string, number][], failAt = -1) =>
  defineDomain<{ name: string }>({
    name,
    prefixes: [`/${name}`],
    datasets: [],
    open: () => ({ name }),
    routes: () => undefined as never,
    warmUp: () =>
      Array.from({ length: steps }, (_, i) => () => {
        if (i === failAt) throw new Error(`step ${i} broke`)
        at.push([`${name}${i}`, turn.now()])
      }),
  })

const settle = async (turns: number) => {
  for (let i = 0; i < turns; i++) await new Promise((next) => setImmediate(next))
}

test('steps of two domains run one a turn, each domain in order, the domains in rotation', async () => {
  const at: [string, number][] = []
  const mounted: MountedDomain[] = [
    { state: 'open', domain: recording('a', 3, at), service: { name: 'a' } },
    { state: 'open', domain: recording('b', 2, at), service: { name: 'b' } },
    { state: 'disabled', domain: recording('c', 2, at), problem: 'c is disabled' }, // no service, no steps
  ]
  warmUp(mounted, () => {})
  expect(at.map(([s]) => s)).toEqual(['a0']) // the first goes at once, the rest in later turns
  await settle(12)
  // a's first step went at once and a queued its second before b asked; then they alternate.
  expect(at.map(([s]) => s)).toEqual(['a0', 'a1', 'b0', 'a2', 'b1'])
  expect(new Set(at.map(([, t]) => t)).size).toBe(5)
})

test('a step that throws stops that domain warm-up with a warning; nothing else is affected', async () => {
  const at: [string, number][] = []
  const lines: string[] = []
  warmUp([{ state: 'open', domain: recording('d', 4, at, 1), service: { name: 'd' } }], (l) => lines.push(l))
  await settle(8)
  expect(at.map(([s]) => s)).toEqual(['d0'])
  expect(lines.join('\n')).toContain('the d warm-up failed')
  expect(lines.join('\n')).toContain('step 1 broke')
})

test("the ua domain: its steps run, then it answers Matomo's device fixtures, and later UAs index and pack nothing", async () => {
  const config = testConfig()
  const data = openDataDir(config.dataDir)
  const m = await openDomain(config, data, uaDomain, () => {})
  expect(m.problem).toBeUndefined()
  const steps = uaDomain.warmUp!(m.service as never)
  // The literal table packed, each sample parsed, the list indexes in groups, the table packed again.
  expect(steps.length).toBeGreaterThan(WARM_UP.length + 2)
  for (const run of steps) run()
  const warmed = literalTableStats()
  // The literal table is the process's, so a second service would share the warmed one: the oracle is
  // Matomo's fixtures (what each device is), not another parse.
  const devices = JSON.parse(readFileSync(FIXTURES, 'utf8')).devices as {
    ua: string
    file: string
    device: { type: string; brand: string }
  }[]
  const service = m.service as UaService
  for (const file of ['smartphone', 'tablet', 'tv', 'console', 'car_browser', 'feature_phone']) {
    const cases = devices.filter((c) => c.file.startsWith(file)).slice(0, 5)
    expect(cases.length).toBeGreaterThan(0)
    const answered = cases.map((c) => service.parse(c.ua).device)
    expect(cases.map((c, i) => [c.ua, answered[i]?.type, answered[i]?.brand])).toEqual(
      cases.map((c) => [c.ua, c.device.type, c.device.brand]),
    )
  }
  // 2,300 real user agents of every kind (uap-core's three files and the user-agents package), and Android
  // Chromes of unknown models (whose path brings a literal of the engine's own code): no list indexed on a
  // request's turn, no packing (25-60 ms each).
  for (const ua of every(realUserAgents(), 8)) service.parse(ua)
  for (let i = 0; i < 300; i++)
    service.parse(`Mozilla/5.0 (Linux; Android 14; Pixel ${i}) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/1${i}.0 Mobile Safari/537.36`)
  expect(literalTableStats()).toEqual(warmed)
})

test('a data swap that leaves the ua data as it was opens the domain again without indexing anything again', async () => {
  const config = testConfig()
  const data = openDataDir(config.dataDir)
  const open = async () => {
    const m = await openDomain(config, data, uaDomain, () => {})
    for (const run of uaDomain.warmUp!(m.service as never)) run()
    return m.service as UaService
  }
  const first = await open()
  const before = literalTableStats()
  const second = await open()
  // Read again, the definitions would be new objects, and every list (~1,500) indexed again beside the old;
  // with nothing new, the warm-up packs nothing either (each packing holds the loop 25-60 ms mid-swap).
  expect(literalTableStats()).toEqual(before)
  const ua = 'Mozilla/5.0 (Linux; Android 14; SM-S911B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36'
  expect(second.parse(ua)).toEqual(first.parse(ua))
  expect(second.parse(ua).device?.brand).toBe('Samsung')
})
