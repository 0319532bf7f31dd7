/**
 * Where a request's CPU goes inside the server, by the code that spent it:
 * - Bun's own machine code (`bun`): its HTTP server, the JavaScriptCore runtime and builtins (JSON, strings,
 *   Response and Headers, regex glue, the collector), and the interpreter tiers;
 * - JIT-compiled code (`[JIT]`): the JavaScript that JSC compiled (ours, Elysia's, the vendored UA engine's)
 *   and the regexes it compiled;
 * - the kernel (sockets, scheduling) and libc;
 * - the other threads: JSC's compiler (still busy 10-20 s into a unique-UA load), the collector's helpers, mimalloc.
 * Only the main thread's JIT share is code this project writes, and not all of it. Linux `perf record` (cpu-clock,
 * 999 Hz, no call graphs) samples the server process, all threads, while wrk -t2 -c32 loads one kind of request, after
 * CPU_SPLIT_WARMUP seconds (default 10) of the same load; each share is divided
 * by the 2xx requests answered in the sampled CPU_SPLIT_SECONDS (default 6). perf adds its own cost to every
 * figure; compare rows of one run. Inputs as bench/peers.ts makes them (uap-core test UAs, KJV rare words), and
 * its peer server on Bun (Fastify 5 with ua-parser-js, MiniSearch) for the same unique UAs and rare words.
 * Run: `bun bench/cpu-split.ts` (datasets built; Debian's linux-perf); CPU_SPLIT_ONLY=<regex> measures the rows
 * whose names match. Prints figures; asserts nothing.
 */
import { spawn } from 'bun'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  BENCH_KEY,
  type BenchServer,
  fixedScript,
  linesFile,
  randomLineScript,
  ROOT,
  runWrk,
  start,
  startAlmanac,
  startHello,
} from './lib.ts'
import { kjvVerses, searchQueries, uapCoreAgents } from './peers/inputs.ts'

const SECONDS = Number(process.env.CPU_SPLIT_SECONDS ?? 6)
const WARMUP = Number(process.env.CPU_SPLIT_WARMUP ?? 10)

if (!Bun.which('perf')) {
  console.log('perf is not installed (Debian: apt-get install linux-perf): nothing measured.')
  process.exit(0)
}

const dir = mkdtempSync(join(tmpdir(), 'almanac-cpu-split-'))
/** A script sending the same request every time, with the bench key. */
const sameRequest = (method: string, path: string, body?: string, headers: Record<string, string> = {}) =>
  fixedScript(dir, {
    method,
    path,
    body,
    headers: { 'x-api-key': BENCH_KEY, ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
  })

const agents = uapCoreAgents()
const verses = kjvVerses()
const rare = searchQueries(verses).rare
const versesFile = join(dir, 'kjv.json')
writeFileSync(versesFile, JSON.stringify(verses))
// Without the closing `"}`: the script appends a suffix never sent before (randomLineScript).
const uaUnique = linesFile(
  dir,
  'ua-unique',
  agents.map((ua) => JSON.stringify({ ua }).slice(0, -2)),
)
const rareWords = linesFile(
  dir,
  'rare',
  rare.map((w) => encodeURIComponent(w)),
)
const light = '/api/v1/meta/datasets/countries?fields=id,version'

/**
 * The column a sample counts in: the main thread (named after the executable) by the code it ran; JSC's compiler,
 * the collector's helpers and mimalloc have threads of their own names.
 */
function kindOf(thread: string, dso: string): string {
  if (thread !== 'bun') return 'helpers'
  if (dso.startsWith('[JIT]')) return 'jit'
  if (dso.includes('kernel')) return 'kernel'
  return /^bun(\.exe)?$/.test(dso) ? 'bun' : 'other'
}

/** Starts perf on `pid` for `seconds`; the function returned waits for it and gives its samples as nanoseconds by kind of code. */
function startSampling(pid: number, seconds: number): () => Promise<Record<string, number>> {
  const data = join(dir, `${pid}-${Date.now()}.perf.data`)
  const record = spawn({
    cmd: ['perf', 'record', '-e', 'cpu-clock', '-F', '999', '-p', String(pid), '-o', data, '--', 'sleep', String(seconds)],
    stdout: 'ignore',
    stderr: 'pipe',
  })
  return async () => {
    const complaint = await new Response(record.stderr).text()
    if ((await record.exited) !== 0)
      throw new Error(`perf record failed (exit ${record.exitCode}, signal ${record.signalCode}): ${complaint.trim()}`)
    const report = spawn({
      cmd: ['perf', 'report', '-i', data, '--stdio', '--sort', 'comm,dso', '-g', 'none'],
      stdout: 'pipe',
      stderr: 'ignore',
    })
    const text = await new Response(report.stdout).text()
    await report.exited
    const total = Number(/Event count \(approx\.\): (\d+)/.exec(text)?.[1] ?? 0)
    if (!total) throw new Error(`perf report found no samples in ${data}: ${complaint.trim()}`)
    const out: Record<string, number> = { bun: 0, jit: 0, kernel: 0, other: 0, helpers: 0 }
    for (const m of text.matchAll(/^\s+([\d.]+)%\s+(\S+)\s+(.+?)\s*$/gm)) {
      const [thread, dso] = [m[2]!, m[3]!]
      out[kindOf(thread, dso)]! += (Number(m[1]) / 100) * total
    }
    return out
  }
}

interface Case {
  name: string
  server: BenchServer
  script: string
}
const rows: string[] = []
async function measure({ name, server, script }: Case) {
  await runWrk(server.url, script, WARMUP)
  const samples = startSampling(server.pid, SECONDS)
  const load = await runWrk(server.url, script, SECONDS)
  const ns = await samples()
  const ok = load.requests - load.non2xx
  const us = (kind: string) => (ns[kind]! / ok / 1000).toFixed(1)
  const all = Object.values(ns).reduce((a, b) => a + b, 0)
  rows.push(
    `| ${name} | ${Math.round(load.rps).toLocaleString('en')}${load.non2xx ? ` (${load.non2xx} non-2xx)` : ''} | ` +
      `${(all / ok / 1000).toFixed(1)} | ${us('bun')} | ${us('jit')} | ${us('kernel')} | ${us('other')} | ${us('helpers')} |`,
  )
  console.error(`cpu-split: ${name} done`)
}

const hello = await startHello()
const floor = await start("the SPEC's floor", ['bun', 'bench/spec-floor.ts'], {}, '/', {})
const almanac = await startAlmanac()
const uncached = await startAlmanac({ ALMANAC_BIBLE_SEARCH_CACHE_BYTES: '0', ALMANAC_QUERY_JOBS_PER_CALLER: '64' })
// bench/peers.ts's peer server on Bun: Fastify 5 with ua-parser-js and MiniSearch.
const peer = await start(
  'peer on bun',
  ['bun', 'bench/peers/server.mjs'],
  { PEER_KEYS: BENCH_KEY, PEER_VERSES: versesFile, PEER_MANIFEST: `${ROOT}/datasets/out/manifest.json` },
  '/healthz',
  {},
)
try {
  const firefox = JSON.stringify({ ua: 'Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0' })
  const cases: Case[] = [
    { name: 'hello-world (bare Elysia) GET /', server: hello, script: sameRequest('GET', '/') },
    { name: `the SPEC's floor (bench/spec-floor.ts) GET ${light}`, server: floor, script: sameRequest('GET', light) },
    {
      name: `Almanac GET ${light}, Form B`,
      server: almanac,
      script: sameRequest('GET', light, undefined, { 'x-response-form': 'bare' }),
    },
    {
      name: 'Almanac POST /api/v1/ua, one UA (result cache hit)',
      server: almanac,
      script: sameRequest('POST', '/api/v1/ua', firefox),
    },
    {
      name: 'Almanac POST /api/v1/ua, unique UAs (uap-core + a new suffix)',
      server: almanac,
      script: randomLineScript(dir, uaUnique, 'POST', '/api/v1/ua', true),
    },
    {
      name: 'peer (Fastify + ua-parser-js on Bun) POST /ua, the same unique UAs',
      server: peer,
      script: randomLineScript(dir, uaUnique, 'POST', '/ua', true),
    },
    {
      name: `Almanac GET /api/v1/bible/kjv/search, ${rare.length} rare words, answer cache on`,
      server: almanac,
      script: randomLineScript(dir, rareWords, 'GET', '/api/v1/bible/kjv/search?q=', false),
    },
    {
      name: `Almanac GET /api/v1/bible/kjv/search, ${rare.length} rare words, answer cache off`,
      server: uncached,
      script: randomLineScript(dir, rareWords, 'GET', '/api/v1/bible/kjv/search?q=', false),
    },
    {
      name: 'peer (Fastify + MiniSearch on Bun) GET /bible/kjv/search, the same words',
      server: peer,
      script: randomLineScript(dir, rareWords, 'GET', '/bible/kjv/search?q=', false),
    },
  ]
  // CPU_SPLIT_ONLY: a regular expression over the rows' names, to measure some of them.
  const only = process.env.CPU_SPLIT_ONLY ? new RegExp(process.env.CPU_SPLIT_ONLY) : undefined
  for (const c of cases) if (!only || only.test(c.name)) await measure(c)
  console.log(
    `\nServer CPU a request by the code that spent it (perf record, cpu-clock 999 Hz, ${SECONDS} s after ${WARMUP} s of the ` +
      'same load; wrk -t2 -c32; µs a 2xx answer, perf included)',
  )
  console.log(
    '| request | req/s | all | main thread: Bun (runtime, HTTP, builtins, SQLite) | main: JIT-compiled JS and regexes | main: kernel | ' +
      'main: libc, other | other threads (JIT compiler, collector, allocator) |',
  )
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|')
  for (const row of rows) console.log(row)
} finally {
  for (const s of [hello, floor, almanac, uncached, peer]) await s.stop()
  rmSync(dir, { recursive: true, force: true })
}
