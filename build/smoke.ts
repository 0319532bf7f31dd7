/**
 * Starting the compiled executable the way an operator would: copied alone into an empty folder, with
 * only the environment it is given (no source tree, no node_modules, no ALMANAC_MIRROR). Used by
 * test/build/executable.test.ts and bench/startup.ts; run directly it is a smoke test:
 *
 *   bun build/smoke.ts [dist/almanac]    copies it to a temp folder, starts it, prints /readyz
 */
import { spawn, type Subprocess } from 'bun'
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

export const SMOKE_KEY = 'smoke-key-0123456789abcdef'

export interface Sandbox {
  /** The empty folder holding only the executable. */
  dir: string
  exe: string
  /** Extraction cache root handed to the executable as ALMANAC_DATA_DIR. */
  cache: string
  /** HOME of the executable (empty, so nothing of the caller's is found). */
  home: string
  remove(): void
}

/** Copies the executable alone into a fresh temporary folder. */
export function sandbox(executable: string): Sandbox {
  const dir = mkdtempSync(join(tmpdir(), 'almanac-exe-'))
  const bin = join(dir, 'bin')
  mkdirSync(bin)
  const exe = join(bin, 'almanac')
  copyFileSync(executable, exe)
  chmodSync(exe, 0o755)
  const home = join(dir, 'home')
  mkdirSync(home)
  return { dir, exe, cache: join(dir, 'cache'), home, remove: () => rmSync(dir, { recursive: true, force: true }) }
}

export interface Running {
  url: string
  pid: number
  child: Subprocess
  /** Every stderr line so far. */
  lines: string[]
  stop(): Promise<number>
}

/** The minimal environment: PATH, an empty HOME, the cache, a key on a plan that never runs out. */
export function sandboxEnv(box: Sandbox, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: '/usr/bin:/bin',
    HOME: box.home,
    ALMANAC_DATA_DIR: box.cache,
    ALMANAC_HOST: '127.0.0.1',
    PORT: '0',
    ALMANAC_API_KEYS: `${SMOKE_KEY}:smoke`,
    ALMANAC_PLANS: 'smoke:1000000000/1d',
    ALMANAC_DEFAULT_PLAN: 'smoke',
    ALMANAC_ACCESS_LOG: 'false',
    ALMANAC_SHUTDOWN_DELAY: '0',
    ...extra,
  }
}

/** Runs the executable with arguments to completion. */
export async function run(exe: string, args: string[], cwd: string, env: Record<string, string>) {
  const child = spawn({ cmd: [exe, ...args], cwd, env, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  return { stdout, stderr, code }
}

/**
 * Starts `almanac serve` and resolves once it logs the address it listens on (and, on a first start that
 * extracts, once it logs that every domain has opened). `args` lets the same
 * harness start the source tree (`start(process.execPath, root, env, 120, ['src/main.ts', 'serve'])`).
 */
export async function start(
  exe: string,
  cwd: string,
  env: Record<string, string>,
  seconds = 120,
  args: string[] = ['serve'],
): Promise<Running> {
  const child = spawn({ cmd: [exe, ...args], cwd, env, stdout: 'ignore', stderr: 'pipe' })
  const lines: string[] = []
  let url: string | undefined
  const reading = (async () => {
    const decoder = new TextDecoder()
    let rest = ''
    for await (const chunk of child.stderr as ReadableStream<Uint8Array>) {
      rest += decoder.decode(chunk, { stream: true })
      const parts = rest.split('\n')
      rest = parts.pop()!
      for (const line of parts) {
        lines.push(line)
        const m = /"msg":"listening".*?"url":"([^"]+)"/.exec(line)
        if (m) url = m[1]
      }
    }
    if (rest) lines.push(rest)
  })()
  const until = Date.now() + seconds * 1000
  // A first start listens while it extracts, its domains opening one by one: wait for the line saying all have.
  const opened = () => !lines.some((l) => l.includes('datasets: extracting')) || lines.some((l) => l.includes('every domain has opened'))
  while (!url || !opened()) {
    if (child.exitCode !== null) {
      await reading
      throw new Error(`almanac exited with ${child.exitCode} before listening:\n${lines.join('\n')}`)
    }
    if (Date.now() > until) {
      child.kill()
      throw new Error(`almanac did not listen and open its domains within ${seconds}s:\n${lines.join('\n')}`)
    }
    await Bun.sleep(10)
  }
  return {
    url,
    pid: child.pid,
    child,
    lines,
    async stop() {
      child.kill('SIGTERM')
      const code = await child.exited
      await reading
      return code
    },
  }
}

if (import.meta.main) {
  const exe = resolve(process.argv[2] ?? 'dist/almanac')
  const box = sandbox(exe)
  try {
    const server = await start(box.exe, box.dir, sandboxEnv(box))
    const res = await fetch(`${server.url}/readyz`)
    console.log(`/readyz ${res.status} ${await res.text()}`)
    for (const line of server.lines) console.error(`  ${line}`)
    await server.stop()
    process.exitCode = res.status === 200 ? 0 : 1
  } finally {
    box.remove()
  }
}
