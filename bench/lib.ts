/**
 * Benchmark harness: real servers in child processes on loopback, load from Debian's `wrk`, CPU time read
 * from /proc, and a bare-Elysia hello-world measured in the same run so every figure is also a ratio.
 * Benchmarks print; they never assert.
 */
import { spawn, type Subprocess } from 'bun'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { freePort } from '../test/support/ports.ts'

export const ROOT = resolve(import.meta.dir, '..')
export const BENCH_KEY = 'bench-key-0123456789abcdef'

export interface BenchServer {
  name: string
  url: string
  pid: number
  /** Headers every request to this server needs (the API key for Almanac). */
  headers: Record<string, string>
  stop(): Promise<void>
}

/**
 * A function that reads and writes one byte of every 64-byte line of a `bytes`-long buffer, so whatever ran
 * before it is evicted from the CPU caches (the machines measured so far: 512 KiB of L2 a core, 8 or 32 MiB of
 * shared L3): run between two measured calls, it gives them the cold caches a server's requests meet.
 */
export function cacheEvictor(bytes: number): () => void {
  const junk = new Uint8Array(bytes)
  return () => {
    for (let i = 0; i < junk.length; i += 64) junk[i]!++
  }
}

async function waitFor(url: string, child: Subprocess, seconds = 120) {
  const until = Date.now() + seconds * 1000
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode} before answering ${url}`)
    try {
      const res = await fetch(url)
      if (res.status < 500) return
    } catch {
      // not listening yet
    }
    await Bun.sleep(50)
  }
  throw new Error(`no answer from ${url} within ${seconds}s`)
}

export async function start(
  name: string,
  cmd: string[],
  env: Record<string, string>,
  ready: string,
  headers: Record<string, string>,
): Promise<BenchServer> {
  const port = await freePort()
  const child = spawn({ cmd, cwd: ROOT, env: { ...process.env, ...env, PORT: String(port) }, stdout: 'ignore', stderr: 'inherit' })
  const url = `http://127.0.0.1:${port}`
  await waitFor(url + ready, child)
  return {
    name,
    url,
    pid: child.pid,
    headers,
    async stop() {
      child.kill('SIGTERM')
      await child.exited
    },
  }
}

/** `values` one per line in `dir`/`name`.txt, for a script made by `randomLineScript` to read; the file's path. */
export function linesFile(dir: string, name: string, values: string[]): string {
  const path = join(dir, `${name}.txt`)
  writeFileSync(path, `${values.join('\n')}\n`)
  return path
}

/**
 * A wrk Lua script (written into `dir`) whose every request takes a random line of `file`: as the path's tail
 * after `prefix` (GET), or as the body (POST, to `prefix`). `unique`: each POST line lacks its closing `"}`,
 * and the script appends a suffix no request used before (` u<thread>.<count>`), then closes the body.
 */
export function randomLineScript(dir: string, file: string, method: 'GET' | 'POST', prefix: string, unique: boolean): string {
  const path = join(dir, `${Math.random().toString(36).slice(2)}.lua`)
  writeFileSync(
    path,
    `local lines = {}
for line in io.lines(${JSON.stringify(file)}) do lines[#lines + 1] = line end
local counter = 0
local threads = 0
tid = 0 -- set per thread by setup() before init()
function setup(thread) threads = threads + 1; thread:set("tid", threads) end
function init(args) math.randomseed(tid * 7919 + os.time()) end
wrk.method = "${method}"
wrk.headers["x-api-key"] = "${BENCH_KEY}"
${method === 'POST' ? 'wrk.headers["content-type"] = "application/json"' : ''}
function request()
  counter = counter + 1
  local line = lines[math.random(#lines)]
  ${
    method === 'GET'
      ? `return wrk.format(nil, ${JSON.stringify(prefix)} .. line)`
      : `return wrk.format(nil, ${JSON.stringify(prefix)}, nil, ${unique ? `line .. " u" .. tid .. "." .. counter .. '"}'` : 'line'})`
  }
end
`,
  )
  return path
}

/** Bare Elysia answering `GET /` — the baseline. */
export const startHello = () => start('hello-world (bare Elysia)', ['bun', 'bench/hello.ts'], {}, '/', {})

/**
 * `almanac serve` from source with a bench key on a plan that never runs out, access log off. `root`: another
 * checkout's source (an A/B of two versions), serving this checkout's datasets.
 */
export const startAlmanac = (env: Record<string, string> = {}, args: string[] = [], root = ROOT) =>
  start(
    root === ROOT ? 'almanac' : `almanac at ${root}`,
    ['bun', join(root, 'src/main.ts'), 'serve', ...args],
    {
      ALMANAC_HOST: '127.0.0.1',
      ALMANAC_API_KEYS: `${BENCH_KEY}:bench`,
      ALMANAC_PLANS: 'bench:2000000000/1d',
      ALMANAC_DEFAULT_PLAN: 'bench',
      ALMANAC_ACCESS_LOG: 'false',
      ALMANAC_SHUTDOWN_DELAY: '0',
      // Another checkout would read the datasets beside its own source (a worktree has none built).
      ALMANAC_DATA_DIR: join(ROOT, 'datasets/out'),
      ...env,
    },
    '/healthz',
    { 'x-api-key': BENCH_KEY },
  )

export interface LoadOptions {
  method?: string
  path?: string
  body?: unknown
  headers?: Record<string, string>
  seconds?: number
  connections?: number
  threads?: number
  /**
   * Seconds of the same load run first and not counted (default 1). A route's first seconds in a fresh
   * server include JSC compiling its code on JIT threads: ~10% of a 5 s run's CPU on the first row of a route.
   */
  warmupSeconds?: number
  /** A wrk script that makes the requests (`randomLineScript`) instead of one fixed request; `path` is still the URL's. */
  script?: string
}

export interface LoadResult {
  requests: number
  rps: number
  p50Ms: number
  p99Ms: number
  /** Server CPU (user + system) per request, in microseconds. */
  cpuUsPerRequest: number
  non2xx: number
}

const TICKS_PER_SECOND = 100
/** A process's CPU time so far (user + system, all threads), in seconds, from /proc. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND
}

const toMs = (v: string, unit: string) => Number(v) * ({ us: 0.001, ms: 1, s: 1000 } as Record<string, number>)[unit]!

/**
 * A wrk Lua script (written into `dir`) sending the same request every time: its method, body and headers, and
 * its `path` when not the one of the URL wrk is given.
 */
export function fixedScript(
  dir: string,
  request: { method: string; path?: string; body?: string; headers: Record<string, string> },
): string {
  const script = join(dir, `${Math.random().toString(36).slice(2)}.lua`)
  writeFileSync(
    script,
    [
      `wrk.method = ${JSON.stringify(request.method)}`,
      request.path !== undefined ? `wrk.path = ${JSON.stringify(request.path)}` : '',
      request.body !== undefined ? `wrk.body = ${JSON.stringify(request.body)}` : '',
      ...Object.entries(request.headers).map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`),
    ].join('\n'),
  )
  return script
}

export interface WrkRun {
  requests: number
  /** Answers other than 2xx and 3xx. */
  non2xx: number
  /** Requests wrk gave up on. */
  timeouts: number
  rps: number
  p50Ms: number
  p99Ms: number
}

/** Runs wrk with `script` against `url` for `seconds`, and reads what it printed. */
export async function runWrk(url: string, script: string, seconds: number, threads = 2, connections = 32): Promise<WrkRun> {
  const proc = spawn({
    cmd: ['wrk', '-t', String(threads), '-c', String(connections), '-d', `${seconds}s`, '--latency', '-s', script, url],
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const out = await new Response(proc.stdout).text()
  await proc.exited
  const lat = (p: string) => {
    const m = new RegExp(`\\s${p}%\\s+([\\d.]+)(us|ms|s)`).exec(out)
    return m ? toMs(m[1]!, m[2]!) : NaN
  }
  return {
    requests: Number(/(\d+) requests in/.exec(out)?.[1] ?? 0),
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
    timeouts: Number(/Socket errors:.*timeout (\d+)/.exec(out)?.[1] ?? 0),
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0),
    p50Ms: lat('50'),
    p99Ms: lat('99'),
  }
}

/** Runs wrk against one route of a server and reads its throughput, latency and the server's CPU time. */
export async function load(server: BenchServer, options: LoadOptions = {}): Promise<LoadResult> {
  const { method = 'GET', path = '/', body, seconds = 5, connections = 32, threads = 2, warmupSeconds = 1 } = options
  const headers = { ...server.headers, ...options.headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }
  const text = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body)
  const script = options.script ?? fixedScript(mkdtempSync(join(tmpdir(), 'almanac-bench-')), { method, body: text, headers })
  const wrk = (runSeconds: number) => runWrk(server.url + path, script, runSeconds, threads, connections)
  if (warmupSeconds > 0) await wrk(warmupSeconds)
  const cpuBefore = cpuSeconds(server.pid)
  const run = await wrk(seconds)
  const cpu = cpuSeconds(server.pid) - cpuBefore
  return {
    requests: run.requests,
    rps: run.rps,
    p50Ms: run.p50Ms,
    p99Ms: run.p99Ms,
    cpuUsPerRequest: run.requests ? (cpu / run.requests) * 1e6 : NaN,
    non2xx: run.non2xx,
  }
}

export interface Row {
  name: string
  result: LoadResult
}

/** Prints rows as a table with each one's throughput ratio to the first row (the baseline). */
export function printTable(title: string, rows: Row[]) {
  const base = rows[0]!.result
  console.log(`\n${title}`)
  console.log('| case | req/s | ratio to baseline | p50 ms | p99 ms | CPU µs/req | non-2xx |')
  console.log('|---|---:|---:|---:|---:|---:|---:|')
  for (const { name, result: r } of rows) {
    console.log(
      `| ${name} | ${r.rps.toFixed(0)} | ${(r.rps / base.rps).toFixed(2)} | ${r.p50Ms.toFixed(2)} | ${r.p99Ms.toFixed(2)} ` +
        `| ${r.cpuUsPerRequest.toFixed(1)} | ${r.non2xx} |`,
    )
  }
}

/** A case of `besideHello`: a route of a server, and what it is called in the tables. */
export interface BesideCase extends LoadOptions {
  name: string
  server: BenchServer
}

/** A case's run and the hello-world run just before it. */
export interface BesideRun {
  round: number
  result: LoadResult
  hello: LoadResult
}

/**
 * Each case right after a hello-world run of its own, alternated for `rounds` rounds; `each` sees every pair as it
 * is measured. On a shared machine a figure moves by a third between minutes (docs/performance.md), so one
 * hello-world at the start is no baseline for a case measured a minute later. Per case, its runs in round order.
 */
export async function besideHello(
  hello: BenchServer,
  cases: BesideCase[],
  rounds: number,
  each: (c: BesideCase, run: BesideRun) => void,
): Promise<Map<string, BesideRun[]>> {
  const runs = new Map(cases.map((c) => [c.name, [] as BesideRun[]]))
  for (let round = 1; round <= rounds; round++)
    for (const c of cases) {
      const base = await load(hello, { seconds: c.seconds })
      const run = { round, result: await load(c.server, c), hello: base }
      runs.get(c.name)!.push(run)
      each(c, run)
    }
  return runs
}

/** BENCH_ROUNDS, the rounds of a `besideHello` comparison (default 2). */
export const benchRounds = () => Number(process.env.BENCH_ROUNDS ?? 2)

/** `lo–hi` of `xs`, each with `digits` decimals. */
export const range = (xs: number[], digits = 2) => `${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}`

/**
 * The usual comparison: each case of one Almanac server against a hello-world run just before it
 * (`besideHello`, BENCH_ROUNDS rounds), then each case's range of ratios. Servers are started and stopped here
 * so a bench script is only a list of cases.
 */
export async function compareWithHello(title: string, cases: (LoadOptions & { name: string })[], almanacEnv: Record<string, string> = {}) {
  const rounds = benchRounds()
  const hello = await startHello()
  const almanac = await startAlmanac(almanacEnv)
  try {
    console.log(`\n${title}: each case after a hello-world run (bare Elysia), ${rounds} rounds`)
    console.log('| case | round | req/s | hello-world req/s | ratio | p50 ms | p99 ms | CPU µs/req | hello-world CPU µs/req | non-2xx |')
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
    const runs = await besideHello(
      hello,
      cases.map((c) => ({ ...c, server: almanac })),
      rounds,
      (c, { round, result: r, hello: base }) =>
        console.log(
          `| ${c.name} | ${round} | ${r.rps.toFixed(0)} | ${base.rps.toFixed(0)} | ${(r.rps / base.rps).toFixed(2)} ` +
            `| ${r.p50Ms.toFixed(2)} | ${r.p99Ms.toFixed(2)} | ${r.cpuUsPerRequest.toFixed(1)} | ${base.cpuUsPerRequest.toFixed(1)} ` +
            `| ${r.non2xx} |`,
        ),
    )
    console.log('\n| case | ratio to hello-world, lowest–highest round |')
    console.log('|---|---:|')
    for (const [name, rs] of runs) console.log(`| ${name} | ${range(rs.map((r) => r.result.rps / r.hello.rps))} |`)
  } finally {
    await hello.stop()
    await almanac.stop()
  }
}

/**
 * Another checkout's server (`base`, serving this checkout's datasets) against this one's on the same cases,
 * alternated for `rounds`, both with `env`: CPU per request side by side. It separates what the code costs from
 * what the machine does to every figure from one hour to the next.
 */
export async function versusBase(base: string, cases: [string, LoadOptions][], env: Record<string, string> = {}, rounds = 2) {
  const theirs = await startAlmanac(env, [], resolve(base))
  const ours = await startAlmanac(env)
  try {
    console.log(`\n| case (CPU µs/request) | ${base} | this checkout | this / base |`)
    console.log('|---|---:|---:|---:|')
    for (let round = 1; round <= rounds; round++)
      for (const [name, options] of cases) {
        const before = await load(theirs, options)
        const after = await load(ours, options)
        // A side that answered errors did other work than the other: its figure is shown with their count.
        const cell = (r: LoadResult) => `${r.cpuUsPerRequest.toFixed(1)}${r.non2xx ? ` (${r.non2xx} non-2xx)` : ''}`
        const ratio = (after.cpuUsPerRequest / before.cpuUsPerRequest).toFixed(2)
        console.log(`| ${name}, round ${round} | ${cell(before)} | ${cell(after)} | ${ratio} |`)
      }
  } finally {
    await theirs.stop()
    await ours.stop()
  }
}

/** Prints the header of an in-process calls table; `timeCalls` prints its rows. */
export function printCallsHeader(title: string) {
  console.log(`\n${title}`)
  console.log('| call | calls | rate |')
  console.log('|---|---:|---:|')
}

/**
 * Runs `fn` `rounds` times in process and prints the rate (and the time per call when a call takes a
 * millisecond or more); returns a count so the work is not optimised away.
 */
export function timeCalls(label: string, rounds: number, fn: (i: number) => unknown): number {
  let sink = 0
  const t0 = performance.now()
  for (let i = 0; i < rounds; i++) if (fn(i)) sink++
  const ms = performance.now() - t0
  const each = ms / rounds >= 1 ? ` (${(ms / rounds).toFixed(3)} ms each)` : ''
  console.log(`| ${label} | ${rounds.toLocaleString('en')} | ${Math.round((rounds / ms) * 1000).toLocaleString('en')}/s${each} |`)
  return sink
}

/** Nearest-rank percentile `p` (0-100) of `xs` (left unsorted): the value at floor(p% of the count), capped at the last. */
export function percentile(xs: number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}
