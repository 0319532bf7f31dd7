/**
 * Startup figures of the compiled executable, printed, never asserted. Each start is the executable
 * copied alone into an empty folder (build/smoke.ts), spawned with `serve`, timed from spawn to the first
 * `/readyz` 200 (polled every 2 ms until it listens, then every 10 ms):
 * - first start: an empty cache directory, so the start includes extracting (decompressing, hashing,
 *   writing) every embedded artifact and opening every domain. A fresh cache each run. The executable's
 *   bytes are in the page cache (it was just copied), the extracted files are written through it: no run
 *   here reads a cold disk (dropping the page cache needs root and slows everyone else on the machine);
 * - warm start: the cache of the first start kept, so only sizes are checked, small artifacts hashed,
 *   domains opened;
 * - RSS (VmRSS: anonymous + file-backed pages mapped) at the moment /readyz answers 200, and the peak
 *   (VmHWM) over the whole start; after one request per domain on the last warm start.
 *
 *   bun bench/startup.ts [--compile] [--exe dist/almanac] [--cold-runs 3] [--runs 7]
 */
import { spawn } from 'bun'
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { compile } from '../build/compile.ts'
import { sandbox, sandboxEnv, SMOKE_KEY } from '../build/smoke.ts'
import { parseFlags } from '../src/config.ts'
import { domains } from '../src/domains/index.ts'
import { PROBES } from '../test/build/probes.ts'
import { freePort } from '../test/support/ports.ts'

const ROOT = resolve(import.meta.dir, '..')
const flags = parseFlags(process.argv.slice(2))
const runs = Number(flags.get('--runs') ?? 7)
const coldRuns = Number(flags.get('--cold-runs') ?? 3)
const exe = resolve(flags.get('--exe') ?? join(ROOT, 'dist/almanac'))

if (flags.has('--compile') || !existsSync(exe)) {
  const r = await compile({ outfile: exe })
  for (const f of r.files) console.log(`embedded ${f.name}: ${mib(f.bytes)} -> ${mib(f.embeddedBytes)} (${f.encoding})`)
}

function mib(bytes: number) {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`
}

/** VmRSS, its anonymous and file-backed parts, and the peak VmHWM, in bytes. */
function memory(pid: number) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024
  return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile'), peak: kb('VmHWM') }
}
const showMemory = (m: ReturnType<typeof memory>) => `RSS ${mib(m.rss)} (anon ${mib(m.anon)}, file ${mib(m.file)}), peak ${mib(m.peak)}`

/** Spawns `serve` and polls /readyz every 2 ms; returns the time from spawn to the first 200. */
async function startTimed(box: ReturnType<typeof sandbox>) {
  const port = await freePort()
  const started = performance.now()
  const child = spawn({
    cmd: [box.exe, 'serve'],
    cwd: box.dir,
    env: sandboxEnv(box, { PORT: String(port) }),
    stdout: 'ignore',
    stderr: 'ignore',
  })
  const url = `http://127.0.0.1:${port}`
  for (;;) {
    if (child.exitCode !== null) throw new Error(`almanac exited with ${child.exitCode}`)
    try {
      const res = await fetch(`${url}/readyz`)
      if (res.status === 200) break
      if (res.status === 503 && performance.now() - started > 60_000) throw new Error(`not ready: ${await res.text()}`)
      // Listening, some domains still opening: every 10 ms, not 2 (500 requests a second would take CPU
      // from the extraction; a real probe asks every few seconds). Adds at most 10 ms to a first start.
      await Bun.sleep(8)
    } catch (e) {
      if (performance.now() - started > 120_000) throw e
    }
    await Bun.sleep(2)
  }
  const ms = performance.now() - started
  const ready = memory(child.pid)
  return {
    ms,
    url,
    ready,
    pid: child.pid,
    async stop() {
      child.kill('SIGTERM')
      await child.exited
    },
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const spread = (xs: number[]) =>
  `median ${median(xs).toFixed(0)} ms, min ${Math.min(...xs).toFixed(0)} ms, max ${Math.max(...xs).toFixed(0)} ms`

const box = sandbox(exe)
try {
  console.log(`executable: ${mib(statSync(exe).size)} (${exe})`)
  const cold: number[] = []
  for (let i = 0; i < coldRuns; i++) {
    rmSync(box.cache, { recursive: true, force: true })
    const s = await startTimed(box)
    cold.push(s.ms)
    console.log(`  first start ${i + 1}: ${s.ms.toFixed(0)} ms; when ready ${showMemory(s.ready)}`)
    await s.stop()
  }
  console.log(`first start (empty cache: extract + open) to /readyz 200 (${coldRuns} runs): ${spread(cold)} (target <= 3 s, <= 250 MB)`)

  const warm: number[] = []
  for (let i = 0; i < runs; i++) {
    const s = await startTimed(box)
    warm.push(s.ms)
    if (i === runs - 1) {
      console.log(`  last warm start when ready: ${showMemory(s.ready)}`)
      for (const d of domains.filter((d) => d.prefixes.length)) {
        for (const p of PROBES[d.name] ?? []) {
          await fetch(s.url + p.path, {
            method: p.method,
            headers: { 'x-api-key': SMOKE_KEY, 'content-type': 'application/json' },
            body: p.body ? JSON.stringify(p.body) : undefined,
          })
        }
      }
      console.log(`  after one request per domain: ${showMemory(memory(s.pid))}`)
    }
    await s.stop()
  }
  console.log(`warm start (extracted cache) to /readyz 200 (${runs} runs): ${spread(warm)} (target <= 250 ms)`)
} finally {
  box.remove()
}
