/**
 * Our engine (vendored, with compiled and prefiltered regexes, data from the built artifact) against the
 * stock npm node-device-detector 2.2.7 engine, which runs every regex in list order, on the same data:
 * a copy of the stock package whose `regexes/*.js` are replaced by the built collections (Matomo's YAML).
 * The answers must be identical, field for field, on real user agents without hints; with Client Hints,
 * a difference is allowed only where our answer is Matomo's own (the rules Almanac brought up to
 * Matomo's code, e.g. a hinted model is not written into the UA before the console list is tried).
 * The stock engine is ~100 parses/s, so a spread sample is used here.
 */
import { expect, test } from 'bun:test'
import { cpSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { openDataDir } from '../../../src/data/open.ts'
import { UA_ARTIFACT } from '../../../src/domains/ua/build.ts'
import { loadDefinitions } from '../../../src/domains/ua/definitions.ts'
import Ours from '../../../src/vendor/node-device-detector/index.js'
import OurHints from '../../../src/vendor/node-device-detector/client-hints.js'
import * as prefilter from '../../../src/domains/ua/prefilter.ts'
import { tempDirs } from '../../support/temp.ts'
import { every, FIXTURES, realUserAgents, uapCoreTestAgents } from './corpus.ts'

const defs = loadDefinitions(openDataDir().path(UA_ARTIFACT))
prefilter.seedLiterals(defs.literals)
const ours = new Ours({ collections: defs.collections, matchers: prefilter })

/** The stock package, copied, reading the built collections as its own `regexes/*.js` modules. */
const stockDir = join(tempDirs('almanac-ua-oracle-')(), 'node-device-detector')
cpSync(resolve(import.meta.dir, '../../../node_modules/node-device-detector'), stockDir, { recursive: true })
for (const [name, value] of Object.entries(defs.collections))
  writeFileSync(join(stockDir, 'regexes', `${name}.js`), `module.exports = ${JSON.stringify(value)};\n`)
const Stock = require(stockDir)
const StockHints = require(join(stockDir, 'client-hints'))
const stock = new Stock({})

const answer = (engine: any, ua: string, hints: object = {}) => JSON.stringify({ ...engine.detect(ua, hints), bot: engine.parseBot(ua) })

test('identical to stock node-device-detector on a sample of real user agents', () => {
  const sample = every(realUserAgents(), 25)
  expect(sample.length).toBeGreaterThan(600)
  const differ = sample.filter((ua) => answer(ours, ua) !== answer(stock, ua))
  console.log(`oracle: ${sample.length - differ.length}/${sample.length} identical`)
  expect(differ).toEqual([])
}, 120_000)

// A request's UA is new to the engine: the same real UAs with a suffix never seen before (as bench/peers.ts
// sends them), so nothing the engine remembers from one text (the literal scan, the candidate lists) carries over.
test('identical to stock node-device-detector on every uap-core test user agent, each with a unique suffix', () => {
  const agents = uapCoreTestAgents()
  expect(agents.length).toBeGreaterThan(1000)
  const differ = agents.map((ua, i) => `${ua} u1.${i}`).filter((ua) => answer(ours, ua) !== answer(stock, ua))
  console.log(`oracle, unique uap-core UAs: ${agents.length - differ.length}/${agents.length} identical`)
  expect(differ).toEqual([])
}, 300_000)

test("identical to stock node-device-detector with Client Hints, or Matomo's own answer (the Matomo hint fixtures)", () => {
  type Case = { ua: string; headers: Record<string, string>; device?: Record<string, string> | null }
  const cases = (JSON.parse(readFileSync(FIXTURES, 'utf8')).client_hints as Case[]).filter((c) => c.ua.trim() !== '')
  const lower = (h: Record<string, string>) => Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]))
  const differ = cases.filter(
    (c) =>
      answer(ours, c.ua, new OurHints().parse(lower(c.headers), {})) !== answer(stock, c.ua, new StockHints().parse(lower(c.headers), {})),
  )
  const device = (c: Case) => {
    const d = (ours.detect(c.ua, new OurHints().parse(lower(c.headers), {})) as any).device
    return { type: d.type, brand: d.brand, model: d.model }
  }
  const unexplained = differ.filter(
    (c) => JSON.stringify(device(c)) !== JSON.stringify({ type: c.device?.type, brand: c.device?.brand, model: c.device?.model }),
  )
  console.log(
    `oracle with hints: ${cases.length - differ.length}/${cases.length} identical; ${differ.length} differ where ours is Matomo's`,
  )
  expect(differ.length).toBeLessThanOrEqual(3)
  expect(unexplained.map((c) => c.ua)).toEqual([])
}, 120_000)
