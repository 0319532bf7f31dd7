/**
 * User-agent parsing speed and agreement, in one run, on real user agents (Debian uap-core's test files
 * and the npm package user-agents; see test/domains/ua/corpus.ts):
 * - stock node-device-detector 2.2.7 (the baseline and the oracle, a devDependency) on the same data:
 *   a copy of the package whose `regexes/*.js` are the built collections (Matomo's YAML); parses/s on fresh UAs;
 * - ours with the result cache off: the first pass (every regex list compiled on first use) and the
 *   second (steady state; still no result reused);
 * - unique strings, as bench/peers.ts sends them: uap-core's test_ua.yaml UAs (1,424) each with a suffix
 *   ` u1.<n>` never used before, ours (cache off) and ua-parser-js 1.0 (`getResult()`), interleaved: every 20 UAs
 *   are parsed by each side in turn (fresh strings each), CPU time summed per side, 4 passes per round, 3 rounds,
 *   so load that comes and goes falls on both alike; the issue's in-process target (25,000/s) and ratio are on these.
 *   The same sides again from cold caches (2 MB written between two parses, one parse per side in turn), as a
 *   parse runs inside a server: the in-process figure the HTTP ratio follows.
 *   `BASE=<another checkout> bun bench/ua.ts` adds that checkout's service (cache off) as a third side: an A/B
 *   of two versions of the code in one process (each has its own module instances), each on its own `ua` artifact
 *   (the BASE checkout's `datasets/out`, or BASE_UA_DATA=<file>; else this checkout's);
 * - ours with the result cache, on 1,000 UAs repeated;
 * - agreement with stock, field for field (detect + parseBot as JSON), on every 3rd UA of the corpus
 *   (UA_BENCH_FULL=1: all of it; stock needs minutes);
 * - HTTP: POST /api/v1/ua and /ua/bulk against a hello-world measured in the same run.
 * Prints figures; asserts nothing. Run: `bun bench/ua.ts` (after `bun src/main.ts data build --only ua`);
 * `UA_BENCH_HTTP=0` leaves out the HTTP part.
 */
import { cpSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { openDataDir } from '../src/data/open.ts'
import { UA_ARTIFACT } from '../src/domains/ua/build.ts'
import { loadDefinitions } from '../src/domains/ua/definitions.ts'
import { openUaService } from '../src/domains/ua/service.ts'
import Ours from '../src/vendor/node-device-detector/index.js'
import * as prefilter from '../src/domains/ua/prefilter.ts'
import { every, realUserAgents, uapCoreTestAgents } from '../test/domains/ua/corpus.ts'
import { cacheEvictor } from './lib.ts'
import { compareWithHello } from './lib.ts'

const corpus = realUserAgents()
const defs = loadDefinitions(openDataDir().path(UA_ARTIFACT))
console.log(
  `corpus: ${corpus.length.toLocaleString('en')} distinct real user agents; machine: 2 cores shared with other work, so figures are noisy`,
)

/** label, parses, wall-clock rate, rate per CPU-second of this process (what one core does, less other load). */
const rows: [string, number, number, number][] = []
function time(label: string, inputs: string[], fn: (ua: string) => unknown, rounds = 1) {
  let sink = 0
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  for (let r = 0; r < rounds; r++) for (const ua of inputs) if (fn(ua)) sink++
  const ms = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  const n = inputs.length * rounds
  rows.push([label, n, (n / ms) * 1000, n / ((cpu.user + cpu.system) / 1e6)])
  return sink
}

// The stock engine on the same detection data: its package copied, its `regexes/*.js` replaced by ours.
const stockDir = join(mkdtempSync(join(tmpdir(), 'almanac-ua-bench-')), 'node-device-detector')
cpSync(resolve(import.meta.dir, '../node_modules/node-device-detector'), stockDir, { recursive: true })
for (const [name, value] of Object.entries(defs.collections))
  writeFileSync(join(stockDir, 'regexes', `${name}.js`), `module.exports = ${JSON.stringify(value)};\n`)
const Stock = require(stockDir)
const stock = new Stock({})
const stockParse = (ua: string) => ({ ...stock.detect(ua), bot: stock.parseBot(ua) })
time('stock node-device-detector 2.2.7, fresh UAs (baseline)', every(corpus, 20), stockParse)

const uncached = openUaService(defs, { cacheEntries: 0, cacheBytes: 0 })
time('Almanac service, no result cache, first pass (regex lists compiled on first use)', corpus, (ua) => uncached.parse(ua))
for (const pass of [2, 3, 4]) time(`Almanac service, no result cache, pass ${pass} (steady state)`, corpus, (ua) => uncached.parse(ua))
const cached = openUaService(defs, { cacheEntries: 50_000, cacheBytes: 32 << 20 })
const hot = corpus.slice(0, 1000)
for (const ua of hot) cached.parse(ua)
time('Almanac service, result cache, 1,000 UAs repeated (same string objects)', hot, (ua) => cached.parse(ua), 1000)
// A request brings a new string each time, whose hash is not known yet: copies, made inside the timing.
time('Almanac service, result cache, 1,000 UAs repeated (a fresh copy each call)', hot, (ua) => cached.parse((' ' + ua).slice(1)), 300)

// Unique strings: a new suffix per parse, so no per-text memory (the engine's last scan, a cache) answers.
const UAParser = require('ua-parser-js')
const agents = uapCoreTestAgents()
const sides: [string, (ua: string) => unknown][] = [
  [`unique uap-core UAs (${agents.length.toLocaleString('en')}), Almanac service, no result cache`, (ua) => uncached.parse(ua)],
  [`unique uap-core UAs, ua-parser-js ${require('ua-parser-js/package.json').version} getResult()`, (ua) => new UAParser(ua).getResult()],
]
if (process.env.BASE) {
  const root = resolve(process.env.BASE)
  const baseDefinitions = await import(join(root, 'src/domains/ua/definitions.ts'))
  const baseService = await import(join(root, 'src/domains/ua/service.ts'))
  // Its own artifact when it has one (or BASE_UA_DATA): the literals in it follow the code's analysis (`ua` revision).
  const baseData = [process.env.BASE_UA_DATA, join(root, 'datasets/out', UA_ARTIFACT)].find((p) => p && existsSync(p))
  const base = baseService.openUaService(baseDefinitions.loadDefinitions(baseData ?? openDataDir().path(UA_ARTIFACT)), {
    cacheEntries: 0,
    cacheBytes: 0,
  })
  sides.push([`unique uap-core UAs, BASE=${root} service, no result cache`, (ua) => base.parse(ua)])
}
let serial = 0
const CHUNK = 20
for (const [, parse] of sides) for (let pass = 0; pass < 2; pass++) for (const ua of agents) parse(`${ua} u1.${serial++}`) // warm-up
for (let round = 1; round <= 3; round++) {
  const cpu = sides.map(() => 0)
  for (let pass = 0; pass < 4; pass++)
    for (let c = 0; c < agents.length; c += CHUNK) {
      const chunk = agents.slice(c, c + CHUNK)
      const order = (c / CHUNK + pass) % 2 ? [...sides.keys()].reverse() : [...sides.keys()]
      for (const i of order) {
        const inputs = chunk.map((ua) => `${ua} u1.${serial++}`)
        const c0 = process.cpuUsage()
        for (const ua of inputs) sides[i]![1](ua)
        const d = process.cpuUsage(c0)
        cpu[i]! += d.user + d.system
      }
    }
  // Interleaved, so no wall-clock rate of its own (NaN, printed as –).
  sides.forEach(([label], i) =>
    rows.push([`${label}, round ${round}`, 4 * agents.length, Number.NaN, (4 * agents.length) / (cpu[i]! / 1e6)]),
  )
}

// From cold caches, as in a server: 2 MB written between two parses (a request's other work, the other
// tenant), every UA parsed by each side in turn, 1 pass per round; the issue's HTTP target depends on this.
const evict = cacheEvictor(2 << 20)
for (let round = 1; round <= 3; round++) {
  const cpu = sides.map(() => 0)
  agents.forEach((ua, n) => {
    for (const i of n % 2 ? [...sides.keys()].reverse() : sides.keys()) {
      const input = `${ua} u1.${serial++}`
      evict()
      const c0 = process.cpuUsage()
      sides[i]![1](input)
      const d = process.cpuUsage(c0)
      cpu[i]! += d.user + d.system
    }
  })
  sides.forEach(([label], i) =>
    rows.push([`${label.replace('unique', 'cold unique')}, round ${round}`, agents.length, Number.NaN, agents.length / (cpu[i]! / 1e6)]),
  )
}

const base = rows[0]!
console.log('\nIn-process parses (rate per CPU-second: parses one core does, whatever else the machine runs)')
console.log('| case | parses | rate (wall) | rate per CPU-second | ratio to stock (CPU) |')
console.log('|---|---:|---:|---:|---:|')
const perSecond = (rate: number) => (Number.isNaN(rate) ? '–' : `${Math.round(rate).toLocaleString('en')}/s`)
for (const [label, n, wall, cpu] of rows)
  console.log(`| ${label} | ${n.toLocaleString('en')} | ${perSecond(wall)} | ${perSecond(cpu)} | ${(cpu / base[3]).toFixed(1)}x |`)

const rates = (label: string) => rows.filter(([l]) => l.startsWith(label)).map((r) => r[3])
const ours = rates('unique uap-core UAs (')
const peer = rates('unique uap-core UAs, ua-parser-js')
const range = (xs: number[]) => `${Math.round(Math.min(...xs)).toLocaleString('en')}–${Math.round(Math.max(...xs)).toLocaleString('en')}`
console.log(
  `\nUnique strings, per CPU-second: Almanac ${range(ours)}/s (target 25,000), ua-parser-js ${range(peer)}/s; ` +
    `ratio by round ${ours.map((o, i) => (o / peer[i]!).toFixed(2)).join(', ')}x`,
)
const coldOurs = rates('cold unique uap-core UAs (')
const coldPeer = rates('cold unique uap-core UAs, ua-parser-js')
console.log(
  `Cold (2 MB written between parses), per CPU-second: Almanac ${range(coldOurs)}/s, ua-parser-js ${range(coldPeer)}/s; ` +
    `ratio by round ${coldOurs.map((o, i) => (o / coldPeer[i]!).toFixed(2)).join(', ')}x`,
)
const baseRates = rates('unique uap-core UAs, BASE=')
const coldBase = rates('cold unique uap-core UAs, BASE=')
if (baseRates.length)
  console.log(
    `BASE ${range(baseRates)}/s; this checkout / BASE by round ${ours.map((o, i) => (o / baseRates[i]!).toFixed(2)).join(', ')}x; ` +
      `cold ${coldOurs.map((o, i) => (o / coldBase[i]!).toFixed(2)).join(', ')}x`,
  )

// Agreement: the raw engine answers (before our mapping), ours against stock.
prefilter.seedLiterals(defs.literals)
const oursEngine = new Ours({ collections: defs.collections, matchers: prefilter })
const sample = process.env.UA_BENCH_FULL ? corpus : every(corpus, 3)
let same = 0
const differ: string[] = []
for (const ua of sample) {
  const a = JSON.stringify({ ...oursEngine.detect(ua), bot: oursEngine.parseBot(ua) })
  const b = JSON.stringify(stockParse(ua))
  if (a === b) same++
  else if (differ.length < 5) differ.push(ua)
}
console.log(
  `\nAgreement with stock on ${sample.length.toLocaleString('en')} UAs (${
    process.env.UA_BENCH_FULL ? 'the whole corpus' : 'every ' + '3rd'
  }): ${same.toLocaleString('en')} identical (${((same / sample.length) * 100).toFixed(2)}%)`,
)
for (const ua of differ) console.log(`  differs: ${ua}`)

// UA_BENCH_HTTP=0: in-process figures only (the wrk runs load both cores of a shared machine).
if (process.env.UA_BENCH_HTTP === '0') process.exit(0)
const bulk = every(corpus, Math.floor(corpus.length / 100))
  .slice(0, 100)
  .map((ua) => ({ ua }))
await compareWithHello('HTTP (wrk, loopback, 32 connections; the same body each request, so the result cache answers)', [
  {
    name: 'POST /api/v1/ua (Chrome on Android, Form A)',
    method: 'POST',
    path: '/api/v1/ua',
    body: { ua: 'Mozilla/5.0 (Linux; Android 13; SM-S911B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36' },
  },
  {
    name: 'POST /api/v1/ua (with Client Hints, Form B)',
    method: 'POST',
    path: '/api/v1/ua',
    body: {
      ua: 'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36',
      headers: { 'Sec-CH-UA-Model': '"Pixel 8"', 'Sec-CH-UA-Platform': '"Android"' },
    },
    headers: { 'x-response-form': 'bare' },
  },
  {
    name: 'POST /api/v1/ua/bulk (100 distinct real UAs)',
    method: 'POST',
    path: '/api/v1/ua/bulk',
    body: { ua_list: bulk },
    connections: 8,
  },
])
