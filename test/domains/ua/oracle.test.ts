/**
 * Our engine (vendored, with compiled and prefiltered regexes, data from the built artifact) against the
 * stock npm node-device-detector 2.2.7 on real user agents: the answers must be identical, field for
 * field, with and without Client Hints. The stock engine is ~100 parses/s, so a spread sample is used
 * here; bench/ua.ts compares the whole corpus.
 */
import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import Stock from 'node-device-detector'
import StockHints from 'node-device-detector/client-hints'
import { openDataDir } from '../../../src/data/open.ts'
import { UA_ARTIFACT } from '../../../src/domains/ua/build.ts'
import { loadDefinitions } from '../../../src/domains/ua/definitions.ts'
import { setCollections } from '../../../src/domains/ua/engine/data.js'
import Ours from '../../../src/domains/ua/engine/index.js'
import OurHints from '../../../src/domains/ua/engine/client-hints.js'
import { seedLiterals } from '../../../src/domains/ua/prefilter.ts'
import { every, FIXTURES, realUserAgents } from './corpus.ts'

const defs = loadDefinitions(openDataDir().path(UA_ARTIFACT))
setCollections(defs.collections)
seedLiterals(defs.literals)
const ours = new Ours({})
const stock = new Stock({})

const answer = (engine: any, ua: string, hints: object = {}) => JSON.stringify({ ...engine.detect(ua, hints), bot: engine.parseBot(ua) })

test('identical to stock node-device-detector on a sample of real user agents', () => {
  const sample = every(realUserAgents(), 25)
  expect(sample.length).toBeGreaterThan(600)
  const differ = sample.filter((ua) => answer(ours, ua) !== answer(stock, ua))
  console.log(`oracle: ${sample.length - differ.length}/${sample.length} identical`)
  expect(differ).toEqual([])
}, 120_000)

test('identical to stock node-device-detector with Client Hints (the Matomo hint fixtures)', () => {
  const cases = (JSON.parse(readFileSync(FIXTURES, 'utf8')).client_hints as { ua: string; headers: Record<string, string> }[]).slice(0, 200)
  const lower = (h: Record<string, string>) => Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]))
  const differ = cases.filter(
    (c) =>
      answer(ours, c.ua, new OurHints().parse(lower(c.headers), {})) !== answer(stock, c.ua, new StockHints().parse(lower(c.headers), {})),
  )
  expect(differ.map((c) => c.ua)).toEqual([])
}, 120_000)
