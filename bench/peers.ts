/**
 * Almanac side by side with the libraries a user would pick instead (issue 24), over HTTP on loopback:
 * Almanac (`almanac serve`, Bun) and the peers of bench/peers/server.mjs (Fastify 5) on Node 20 (when `node`
 * is on the machine) and on Bun, run alternately under `wrk -t2 -c32`, two rounds, each request a random
 * line of an input file (a wrk Lua script). Server CPU per request is read from /proc (user + system of
 * the whole process, worker threads included). Prints the table Measure | Almanac | Peer | Ratio, where the
 * ratio is Almanac's req/s over the peer's in the same round (> 1: Almanac serves more).
 *
 * What each side returns (same size class, same auth check: an X-API-Key header on every request; Almanac
 * runs its full shared layers too — quota, request id, CORS, ETag — the peer only the Set lookup):
 * - Bible search (KJV): Almanac GET /api/v1/bible/kjv/search?q= (Form A, top 20 by BM25 with <mark>
 *   snippets); MiniSearch 7 (index built at peer start from the same KJV verses, all words required, BM25+),
 *   top 20 with the same fields and <mark> snippets, plus the hit count. `the` over all 34 translations
 *   is Almanac alone (the peer indexes KJV only).
 * - UA: Almanac POST /api/v1/ua (Matomo's model: client, os, device, bot); ua-parser-js 1.x (browser,
 *   engine, os, device, cpu), and stock node-device-detector (Matomo's model in its own package, detect +
 *   parseBot). "Unique": each request's UA gets a suffix never sent before (no cache can answer);
 *   "repeated": 1,000 uap-core UAs drawn at random.
 * - QR: Almanac POST /api/v1/qr/text with format base64 (a 400 px PNG inline, nothing stored); qrcode
 *   toBuffer PNG 400 px, margin 4, level M, as a base64 data URI in the same envelope.
 * - Cheapest authenticated GET: Almanac /api/v1/meta/datasets/countries (5.4 KB); the peer answers the
 *   manifest's countries entry.
 * - POST /ip: Almanac's full record (City + ASN + security lists); maxmind's GeoLite2 City record (no ASN,
 *   no lists: the peer does less).
 * req/s and CPU µs count 2xx answers only (non-2xx and wrk timeouts are shown apart); p50 is wrk's over
 * every request. The Bible rows run twice on Almanac's side: with its answer cache (the default; the
 * inputs repeat, as real searches do) and with it off (a second Almanac, ALMANAC_BIBLE_SEARCH_CACHE_BYTES=0).
 * Every server is started once and warmed once, before its first measured run, and serves every round: a
 * server's first seconds (JSC compiling, the database's pages first read) are measured on no side. Almanac runs
 * with its defaults but ALMANAC_QUERY_JOBS_PER_CALLER=64: the 32 connections share one key, and the default cap
 * (4 heavy searches per caller) would answer most `the` searches 503.
 * The machine is shared (2 cores): compare ratios within one run. Prints figures; asserts nothing.
 * Run: `bun bench/peers.ts` (after `bun run data`); PEERS_SECONDS (default 5) per wrk run; PEERS_WARMUP (default 3)
 * seconds of load on each side before its first round (JSC still compiles the UA engine's code 3 s into a load: 8% of
 * the server's CPU on its compiler threads, none after 15 s); PEERS_ONLY (a regular expression) keeps the measures
 * whose name it matches, e.g. PEERS_ONLY=Bible; PEERS_ROUNDS (default 2) alternated rounds, more where a ratio's
 * rounds spread across its target.
 */
import { spawnSync } from 'bun'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BENCH_KEY, type BenchServer, cpuSeconds, linesFile, randomLineScript, ROOT, runWrk, start, startAlmanac } from './lib.ts'
import { kjvVerses, publicV4, qrTexts, searchQueries, uapCoreAgents } from './peers/inputs.ts'

const SECONDS = Number(process.env.PEERS_SECONDS ?? 5)
const WARMUP = Number(process.env.PEERS_WARMUP ?? 3)
const ROUNDS = Number(process.env.PEERS_ROUNDS ?? 2)
const dir = mkdtempSync(join(tmpdir(), 'almanac-peers-'))

const version = (pkg: string) => JSON.parse(readFileSync(`${ROOT}/node_modules/${pkg}/package.json`, 'utf8')).version as string
const nodeVersion = (() => {
  try {
    const r = spawnSync(['node', '--version'])
    return r.exitCode === 0 ? r.stdout.toString().trim() : null
  } catch {
    return null
  }
})()

// Inputs, one per line of a file wrk reads.
const verses = kjvVerses()
const versesFile = join(dir, 'kjv.json')
writeFileSync(versesFile, JSON.stringify(verses))
const queries = searchQueries(verses)
const agents = uapCoreAgents()
const inputFile = (name: string, lines: string[]) => linesFile(dir, name, lines)
const q = (words: string[]) => words.map((w) => encodeURIComponent(w))
const uaBody = (ua: string) => JSON.stringify({ ua })
const files = {
  rare: inputFile('rare', q(queries.rare)),
  mixed: inputFile('mixed', q(queries.mixed)),
  the: inputFile('the', ['the']),
  // Without the closing `"}`: the Lua script appends a suffix never sent before, then closes the body.
  uaUnique: inputFile(
    'ua-unique',
    agents.map((ua) => uaBody(ua).slice(0, -2)),
  ),
  uaRepeated: inputFile('ua-repeated', agents.slice(0, 1000).map(uaBody)),
  qr: inputFile(
    'qr',
    qrTexts(2000).map((text) => JSON.stringify({ text, format: 'base64' })),
  ),
  ip: inputFile(
    'ip',
    publicV4(100_000).map((ip) => JSON.stringify({ ip })),
  ),
  none: inputFile('none', ['']),
}
console.log(
  `Inputs: ${verses.length.toLocaleString('en')} KJV verses; ${queries.rare.length} rare words (1–10 hits), ` +
    `${queries.mixed.length} mixed queries; ${agents.length.toLocaleString('en')} uap-core test UAs; ` +
    '2,000 QR texts of 20–200 chars; 100,000 public IPv4.',
)
console.log(
  `Runtimes: Almanac on Bun ${Bun.version}; peers on ${nodeVersion ? `Node ${nodeVersion} and ` : ''}Bun ${Bun.version}. ` +
    `wrk -t2 -c32, ${SECONDS} s a run, ${ROUNDS} rounds, ${WARMUP} s of load on each side before its first.`,
)
console.log('Machine: 2 cores shared with other work, so figures are noisy; compare ratios within one run.')

interface Run {
  /** 2xx answers per second. */
  rps: number
  p50: number
  p99: number
  /** Server CPU (user + system, all threads) per 2xx answer. */
  cpuUs: number
  /** Non-2xx answers and timeouts. */
  bad: number
}

async function wrk(server: BenchServer, script: string, seconds: number): Promise<Run> {
  const cpu0 = cpuSeconds(server.pid)
  const run = await runWrk(server.url, script, seconds)
  const cpu = cpuSeconds(server.pid) - cpu0
  const answered = run.requests - run.non2xx
  // Only answers count: a 503 or 422 is cheap and would flatter whichever side sends it.
  return {
    rps: run.requests ? (run.rps * answered) / run.requests : 0,
    p50: run.p50Ms,
    p99: run.p99Ms,
    cpuUs: answered > 0 ? (cpu / answered) * 1e6 : NaN,
    bad: run.non2xx + run.timeouts,
  }
}

interface Side {
  file: string
  method: 'GET' | 'POST'
  path: string
  unique?: boolean
  /** Almanac with its Bible answer cache off (ALMANAC_BIBLE_SEARCH_CACHE_BYTES=0): every search made anew. */
  uncached?: boolean
}
interface Case {
  measure: string
  almanac: Side
  /** The peer library's name and version, and its route; none when the peer has no such answer. */
  peer?: Side & { library: string }
}

const ndd = `node-device-detector ${version('node-device-detector')}`
const ALL_CASES: Case[] = [
  {
    measure: `Bible KJV search, ${queries.rare.length} rare words (1–10 hits)`,
    almanac: { file: files.rare, method: 'GET', path: '/api/v1/bible/kjv/search?q=' },
    peer: { library: `MiniSearch ${version('minisearch')}`, file: files.rare, method: 'GET', path: '/bible/kjv/search?q=' },
  },
  {
    measure: `Bible KJV search, ${queries.rare.length} rare words, Almanac's answer cache off`,
    almanac: { file: files.rare, method: 'GET', path: '/api/v1/bible/kjv/search?q=', uncached: true },
    peer: { library: `MiniSearch ${version('minisearch')}`, file: files.rare, method: 'GET', path: '/bible/kjv/search?q=' },
  },
  {
    measure: `Bible KJV search, ${queries.mixed.length} mixed queries`,
    almanac: { file: files.mixed, method: 'GET', path: '/api/v1/bible/kjv/search?q=' },
    peer: { library: `MiniSearch ${version('minisearch')}`, file: files.mixed, method: 'GET', path: '/bible/kjv/search?q=' },
  },
  {
    measure: `Bible KJV search, ${queries.mixed.length} mixed queries, Almanac's answer cache off`,
    almanac: { file: files.mixed, method: 'GET', path: '/api/v1/bible/kjv/search?q=', uncached: true },
    peer: { library: `MiniSearch ${version('minisearch')}`, file: files.mixed, method: 'GET', path: '/bible/kjv/search?q=' },
  },
  {
    measure: 'Bible KJV, the word `the`',
    almanac: { file: files.the, method: 'GET', path: '/api/v1/bible/kjv/search?q=' },
    peer: { library: `MiniSearch ${version('minisearch')}`, file: files.the, method: 'GET', path: '/bible/kjv/search?q=' },
  },
  { measure: 'Bible, all 34 translations, the word `the`', almanac: { file: files.the, method: 'GET', path: '/api/v1/bible/search?q=' } },
  {
    measure: 'UA, unique strings (no repeats)',
    almanac: { file: files.uaUnique, method: 'POST', path: '/api/v1/ua', unique: true },
    peer: { library: `ua-parser-js ${version('ua-parser-js')}`, file: files.uaUnique, method: 'POST', path: '/ua', unique: true },
  },
  {
    measure: "UA, unique strings, Matomo's model on both sides",
    almanac: { file: files.uaUnique, method: 'POST', path: '/api/v1/ua', unique: true },
    peer: { library: ndd, file: files.uaUnique, method: 'POST', path: '/ua/device-detector', unique: true },
  },
  {
    measure: 'UA, repeated strings (1,000 UAs)',
    almanac: { file: files.uaRepeated, method: 'POST', path: '/api/v1/ua' },
    peer: { library: `ua-parser-js ${version('ua-parser-js')}`, file: files.uaRepeated, method: 'POST', path: '/ua' },
  },
  {
    measure: 'QR PNG 400 px, texts of 20–200 chars',
    almanac: { file: files.qr, method: 'POST', path: '/api/v1/qr/text' },
    peer: { library: `qrcode ${version('qrcode')}`, file: files.qr, method: 'POST', path: '/qr/text' },
  },
  {
    measure: 'Cheapest authenticated GET',
    almanac: { file: files.none, method: 'GET', path: '/api/v1/meta/datasets/countries' },
    peer: { library: `Fastify ${version('fastify')}`, file: files.none, method: 'GET', path: '/meta/datasets/countries' },
  },
  {
    measure: 'POST /ip, random public IPv4',
    almanac: { file: files.ip, method: 'POST', path: '/api/v1/ip' },
    peer: { library: `Fastify ${version('fastify')} + maxmind ${version('maxmind')}`, file: files.ip, method: 'POST', path: '/ip' },
  },
]

const only = process.env.PEERS_ONLY ? new RegExp(process.env.PEERS_ONLY, 'i') : undefined
const CASES = ALL_CASES.filter((c) => !only || only.test(c.measure))

const peerEnv = { PEER_KEYS: BENCH_KEY, PEER_VERSES: versesFile, PEER_MANIFEST: `${ROOT}/datasets/out/manifest.json` }
const startPeer = (runtime: string) =>
  start(`peer on ${runtime}`, [runtime, 'bench/peers/server.mjs'], peerEnv, '/healthz', { 'x-api-key': BENCH_KEY })

// One key sends all 32 connections here, where a real load would be 32 callers: the per-caller cap of
// query-worker jobs (default 4, beyond it a 503) is lifted so heavy searches are answered, not refused.
const almanac = await startAlmanac({ ALMANAC_QUERY_JOBS_PER_CALLER: '64' })
// Kept for every round like the other sides. Started afresh for each round, it was measured 1-6 s after its start:
// 171 µs a rare word there against 98-116 in the next three 5 s runs of one server (2026-11-28).
const uncached = CASES.some((c) => c.almanac.uncached)
  ? await startAlmanac({ ALMANAC_QUERY_JOBS_PER_CALLER: '64', ALMANAC_BIBLE_SEARCH_CACHE_BYTES: '0' })
  : undefined
const peers: { label: string; server: BenchServer }[] = []
try {
  if (nodeVersion) peers.push({ label: 'Node', server: await startPeer('node') })
  peers.push({ label: 'Bun', server: await startPeer('bun') })

  // Hit counts of every mixed query, Almanac's (Form B `count`) against MiniSearch's, before any load.
  let same = 0
  for (const word of queries.mixed) {
    const get = (server: BenchServer, path: string) =>
      fetch(`${server.url}${path}${encodeURIComponent(word)}`, { headers: { 'x-api-key': BENCH_KEY, 'x-response-form': 'bare' } }).then(
        (r) => r.json() as Promise<{ count: number }>,
      )
    const [a, b] = await Promise.all([get(almanac, '/api/v1/bible/kjv/search?q='), get(peers[0]!.server, '/bible/kjv/search?q=')])
    if (a.count === b.count) same++
    else console.log(`  hit counts differ on "${word}": Almanac ${a.count}, MiniSearch ${b.count}`)
  }
  console.log(`Hit counts equal on ${same} of ${queries.mixed.length} mixed queries (Almanac against MiniSearch).`)

  const results = new Map<Case, { almanac: Run[]; peers: Run[][] }>()
  for (const c of CASES) results.set(c, { almanac: [], peers: peers.map(() => []) })
  for (let round = 1; round <= ROUNDS; round++) {
    for (const c of CASES) {
      const r = results.get(c)!
      const own = c.almanac.uncached ? uncached! : almanac
      const runs: [BenchServer, Side, Run[]][] = [[own, c.almanac, r.almanac]]
      if (c.peer) peers.forEach((p, i) => runs.push([p.server, c.peer!, r.peers[i]!]))
      for (const [server, side, into] of runs) {
        const script = randomLineScript(dir, side.file, side.method, side.path, side.unique ?? false)
        // Warm-up: JIT, caches of the route, lazily built tables.
        if (round === 1) await wrk(server, script, WARMUP)
        into.push(await wrk(server, script, SECONDS))
      }
      console.error(`round ${round}: ${c.measure} done`)
    }
  }

  const n = (x: number) => Math.round(x).toLocaleString('en')
  const span = (xs: number[], f = n) => {
    const lo = Math.min(...xs)
    const hi = Math.max(...xs)
    return f(lo) === f(hi) ? f(lo) : `${f(lo)}–${f(hi)}`
  }
  const describe = (runs: Run[]) =>
    `${span(runs.map((x) => x.rps))} req/s, ${span(runs.map((x) => x.cpuUs))} µs CPU/req, p50 ${span(
      runs.map((x) => x.p50),
      (v) => v.toFixed(1),
    )} ms${runs.some((x) => x.bad) ? `, ${runs.reduce((s, x) => s + x.bad, 0)} non-2xx/timeouts` : ''}`
  const ratio = (xs: number[]) => span(xs, (v) => v.toFixed(2))

  console.log('\n| Measure | Almanac | Peer | Ratio |')
  console.log('|---|---|---|---|')
  for (const c of CASES) {
    const r = results.get(c)!
    const peer = c.peer ? `${c.peer.library}: ${peers.map((p, i) => `${describe(r.peers[i]!)} (${p.label})`).join('; ')}` : '–'
    const ratios = c.peer
      ? peers.map((p, i) => `${ratio(r.almanac.map((a, k) => a.rps / r.peers[i]![k]!.rps))}× ${p.label}`).join(', ')
      : '–'
    console.log(`| ${c.measure} | ${describe(r.almanac)} | ${peer} | ${ratios} |`)
  }
} finally {
  await almanac.stop()
  await uncached?.stop()
  for (const p of peers) await p.server.stop()
  rmSync(dir, { recursive: true, force: true })
}
