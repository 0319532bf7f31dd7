/**
 * `almanac serve` as separate processes (`--workers`, several instances), on loopback ports of their own,
 * killed after the file's tests. The server is up once it answers /readyz at all (a test's data folder may
 * leave a domain disabled, so /readyz may be 503 by design).
 */
import { afterAll } from 'bun:test'
import { spawn, type Subprocess } from 'bun'
import { resolve } from 'node:path'
import { freePort } from './ports.ts'
import { waitFor } from './redis-topologies.ts'

const ROOT = resolve(import.meta.dir, '../..')

export interface Served {
  url: string
  child: Subprocess
  /** Its log lines (stderr), parsed, as they come. */
  lines: Record<string, any>[]
  /** The first log line from index `from` on whose message matches `pattern`, waited for up to 20 s. */
  logged(pattern: RegExp, from?: number): Promise<Record<string, any>>
  /** SIGTERM, and the exit (a clean stop: in-flight requests finished, the usage ledger written). */
  stop(): Promise<number>
}

/** Call at a test file's top level; `serve` starts one server with `args` and `env` over the test's environment. */
export function servedProcesses() {
  const started: Subprocess[] = []
  // A server finishing its in-flight requests (a browser's kept-alive connections) may take longer than 5 s.
  afterAll(async () => {
    for (const child of started) if (child.exitCode === null) child.kill('SIGTERM')
    await Promise.all(started.map((c) => c.exited))
  }, 30_000)
  return async function serve(args: string[], env: Record<string, string>): Promise<Served> {
    const port = freePort()
    const child = spawn({
      cmd: ['bun', 'src/main.ts', 'serve', ...args],
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: String(port),
        ALMANAC_HOST: '127.0.0.1',
        ALMANAC_ACCESS_LOG: 'false',
        ALMANAC_SHUTDOWN_DELAY: '0',
        ...env,
      },
      stdout: 'ignore',
      stderr: 'pipe',
    })
    started.push(child)
    const lines = readLines(child.stderr as ReadableStream<Uint8Array>)
    const url = `http://127.0.0.1:${port}`
    const logged = async (pattern: RegExp, from = 0) => {
      for (let i = 0; i < 400; i++) {
        const line = lines.slice(from).find((l) => pattern.test(String(l.msg)))
        if (line) return line
        await Bun.sleep(50)
      }
      throw new Error(`no log line matching ${pattern}; got:\n${lines.map((l) => JSON.stringify(l)).join('\n')}`)
    }
    for (let i = 0; i < 600; i++) {
      if (child.exitCode !== null) throw new Error(`almanac serve exited with ${child.exitCode}`)
      if ((await fetch(url + '/readyz').catch(() => null)) !== null) return { url, child, lines, logged, stop }
      await Bun.sleep(50)
    }
    throw new Error('almanac serve did not answer')

    async function stop() {
      child.kill('SIGTERM')
      return child.exited
    }
  }
}

/**
 * The lines of a server's log stream, parsed (JSON, else the text as `msg`), appended as they arrive; read to
 * the end so the pipe never fills.
 */
function readLines(stream: ReadableStream<Uint8Array>): Record<string, any>[] {
  const lines: Record<string, any>[] = []
  ;(async () => {
    let rest = ''
    for await (const chunk of stream) {
      rest += new TextDecoder().decode(chunk)
      const parts = rest.split('\n')
      rest = parts.pop()!
      for (const part of parts) if (part.trim()) lines.push(part.startsWith('{') ? JSON.parse(part) : { msg: part })
    }
  })()
  return lines
}

/** Runs the CLI (`bun src/main.ts …`) to its end: its exit code, stdout and stderr. */
export async function cli(args: string[], env: Record<string, string>) {
  const child = spawn({ cmd: ['bun', 'src/main.ts', ...args], cwd: ROOT, env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  return { code, out, err }
}

/** Waits until both processes of a `--workers 2` server have answered: the kernel spreads new connections between them. */
export async function bothWorkers(url: string): Promise<void> {
  const seen = new Set<string>()
  await waitFor('both workers answering', async () => {
    const text = await (await fetch(`${url}/metrics`, { headers: { connection: 'close' } })).text()
    seen.add(/almanac_build_info\{[^}]*worker="(\d+)"/.exec(text)?.[1] ?? 'none')
    return seen.has('0') && seen.has('1')
  })
}
