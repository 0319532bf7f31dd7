/**
 * Startup figures of the compiled executable (issue 3 measures), printed, never asserted:
 * - executable size, and each artifact's size embedded (compressed or raw);
 * - first start (extracting the datasets) to `/readyz` 200;
 * - warm start (datasets already extracted) to `/readyz` 200, target < 300 ms;
 * - RSS once ready with every dataset open, and after one request per landed domain, target < 250 MB.
 *
 *   bun bench/startup.ts [--compile] [--runs 7]     (compiles dist/almanac first when missing or asked)
 */
import { spawn } from 'bun'
import { existsSync, readFileSync, statSync } from 'node:fs'
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
const exe = join(ROOT, 'dist/almanac')

if (flags.has('--compile') || !existsSync(exe)) {
  const r = await compile({ outfile: exe })
  for (const f of r.files) console.log(`embedded ${f.name}: ${mib(f.bytes)} -> ${mib(f.embeddedBytes)} (${f.encoding})`)
}

function mib(bytes: number) {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`
}

const rssBytes = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024

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
    } catch (e) {
      if (performance.now() - started > 120_000) throw e
    }
    await Bun.sleep(2)
  }
  const ms = performance.now() - started
  return {
    ms,
    url,
    pid: child.pid,
    async stop() {
      child.kill('SIGTERM')
      await child.exited
    },
  }
}

const box = sandbox(exe)
try {
  console.log(`executable: ${mib(statSync(exe).size)} (${exe})`)
  const cold = await startTimed(box)
  console.log(`first start (extracting datasets) to /readyz 200: ${cold.ms.toFixed(0)} ms`)
  await cold.stop()

  const warm: number[] = []
  let rssReady = 0
  let rssServed = 0
  for (let i = 0; i < runs; i++) {
    const s = await startTimed(box)
    warm.push(s.ms)
    if (i === runs - 1) {
      await Bun.sleep(200)
      rssReady = rssBytes(s.pid)
      for (const d of domains.filter((d) => d.prefixes.length)) {
        for (const p of PROBES[d.name] ?? []) {
          await fetch(s.url + p.path, {
            method: p.method,
            headers: { 'x-api-key': SMOKE_KEY, 'content-type': 'application/json' },
            body: p.body ? JSON.stringify(p.body) : undefined,
          })
        }
      }
      rssServed = rssBytes(s.pid)
    }
    await s.stop()
  }
  warm.sort((a, b) => a - b)
  console.log(
    `warm start to /readyz 200 (${runs} runs): median ${warm[Math.floor(runs / 2)]!.toFixed(0)} ms, min ${warm[0]!.toFixed(0)} ms, max ${warm.at(-1)!.toFixed(0)} ms (target < 300 ms)`,
  )
  console.log(`RSS when ready, every dataset open: ${mib(rssReady)} (target < 250 MB)`)
  console.log(`RSS after one request per landed domain: ${mib(rssServed)}`)
} finally {
  box.remove()
}
