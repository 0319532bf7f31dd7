/**
 * Operations of the real `almanac serve` process: SIGTERM turns /readyz 503 at once while the listener keeps
 * answering for ALMANAC_SHUTDOWN_DELAY, then lets an in-flight request finish (a POST whose body is still
 * arriving when the signal lands) while new connections are refused; the grace period ends a
 * request that never finishes; `--workers 2` runs two processes on one port that both answer, restarts one
 * that dies, and stops together.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { spawn, type Subprocess } from 'bun'
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { freePort } from '../support/ports.ts'

const ROOT = resolve(import.meta.dir, '../..')
const KEY = 'ops-key-0123456789'

/** Every server this file starts, so a failing test cannot leave one running. */
const started: Subprocess[] = []
afterAll(async () => {
  for (const child of started) if (child.exitCode === null) child.kill('SIGTERM')
  await Promise.all(started.map((c) => c.exited))
})

async function start(
  args: string[] = [],
  env: Record<string, string> = {},
  stderr: 'ignore' | 'pipe' = 'ignore',
): Promise<{ child: Subprocess<'ignore', 'ignore', 'pipe' | 'ignore'>; url: string }> {
  const port = await freePort()
  const child = spawn({
    cmd: ['bun', 'src/main.ts', 'serve', ...args],
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      ALMANAC_HOST: '127.0.0.1',
      ALMANAC_API_KEYS: KEY,
      ALMANAC_ACCESS_LOG: 'false',
      ALMANAC_SHUTDOWN_DELAY: '0',
      ...env,
    },
    stdout: 'ignore',
    stderr,
  })
  started.push(child)
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`almanac serve exited with ${child.exitCode}`)
    try {
      if ((await fetch(url + '/healthz')).status === 200) return { child, url }
    } catch {
      // not listening yet
    }
    await Bun.sleep(100)
  }
  child.kill('SIGKILL')
  throw new Error('almanac serve did not answer /healthz')
}

/** A POST whose body is sent in two halves; the second waits for `finish()`. */
function slowPost(url: string) {
  let finish!: () => void
  const released = new Promise<void>((r) => (finish = r))
  let firstSent!: () => void
  const started = new Promise<void>((r) => (firstSent = r))
  const body = new ReadableStream({
    async start(c) {
      c.enqueue(new TextEncoder().encode('{"codes":["FR",'))
      firstSent()
      await released
      c.enqueue(new TextEncoder().encode('"DE"]}'))
      c.close()
    },
  })
  const response = fetch(url + '/api/v1/countries/validate', {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'content-type': 'application/json', 'x-response-form': 'bare' },
    body,
    duplex: 'half',
  } as RequestInit)
  return { response, started, finish }
}

const refused = async (url: string) => {
  try {
    await fetch(url + '/healthz')
    return false
  } catch {
    return true
  }
}

/** Polls /metrics until the server is inside `n` requests besides the metrics request itself. */
async function untilInFlight(url: string, n: number) {
  for (let i = 0; i < 200; i++) {
    const text = await (await fetch(url + '/metrics')).text()
    if (Number(/^almanac_http_requests_in_flight (\d+)$/m.exec(text)?.[1]) >= n + 1) return
    await Bun.sleep(50)
  }
  throw new Error(`the server never had ${n} request(s) in flight`)
}

describe('graceful shutdown', () => {
  const readyz = async (url: string) => {
    const res = await fetch(url + '/readyz', { headers: { connection: 'close' } })
    return { status: res.status, body: (await res.json()) as { status: string; problems?: { component?: string }[] } }
  }

  test('SIGTERM with a shutdown delay: /readyz turns 503 while new connections are still accepted and answered', async () => {
    // A delay far longer than the test: every check below happens inside it, however slow the machine.
    const { child, url } = await start([], { ALMANAC_SHUTDOWN_DELAY: '600', ALMANAC_SHUTDOWN_GRACE: '30' })
    expect((await readyz(url)).status).toBe(200)
    child.kill('SIGTERM')
    let ready = await readyz(url)
    for (let i = 0; i < 100 && ready.status === 200; i++) {
      await Bun.sleep(20)
      ready = await readyz(url)
    }
    expect(ready.status).toBe(503)
    expect(ready.body.status).toBe('not_ready')
    expect(ready.body.problems?.map((p) => p.component)).toContain('server')
    // New connections (connection: close: each request dials again) are accepted and answered in full.
    for (let i = 0; i < 5; i++) {
      const res = await fetch(url + '/api/v1/countries/FR', {
        headers: { 'x-api-key': KEY, 'x-response-form': 'bare', connection: 'close' },
      })
      expect(res.status).toBe(200)
      expect(((await res.json()) as { alpha3: string }).alpha3).toBe('FRA')
    }
    expect((await fetch(url + '/healthz', { headers: { connection: 'close' } })).status).toBe(200)
    expect(child.exitCode).toBeNull()
    // A second signal means "now" (the operator's way out of a long delay).
    child.kill('SIGTERM')
    expect(await child.exited).toBe(1)
  }, 60_000)

  test('after the delay the listener closes, the in-flight request finishes, and the process exits 0', async () => {
    const { child, url } = await start([], { ALMANAC_SHUTDOWN_DELAY: '1', ALMANAC_SHUTDOWN_GRACE: '60' })
    const post = slowPost(url)
    await post.started
    await untilInFlight(url, 1)
    child.kill('SIGTERM')
    let gone = false
    for (let i = 0; i < 300 && !gone; i++) {
      gone = await refused(url)
      if (!gone) await Bun.sleep(50)
    }
    expect(gone).toBe(true)
    expect(child.exitCode).toBeNull() // the POST is still in flight
    post.finish()
    expect((await post.response).status).toBe(200)
    expect(await child.exited).toBe(0)
  }, 60_000)

  test('SIGTERM: the in-flight request finishes, new connections are refused, exit 0', async () => {
    const { child, url } = await start([], { ALMANAC_SHUTDOWN_GRACE: '30' })
    const post = slowPost(url)
    await post.started
    await untilInFlight(url, 1) // the server is now inside the request, waiting for the rest of the body
    child.kill('SIGTERM')
    let gone = false
    for (let i = 0; i < 50 && !gone; i++) {
      gone = await refused(url)
      if (!gone) await Bun.sleep(100)
    }
    expect(gone).toBe(true)
    expect(child.exitCode).toBeNull() // still draining
    post.finish()
    const res = await post.response
    expect(res.status).toBe(200)
    const body = (await res.json()) as { results: { code: string; valid: boolean }[] }
    expect(body.results.map((r) => [r.code, r.valid])).toEqual([
      ['FR', true],
      ['DE', true],
    ])
    expect(await child.exited).toBe(0)
  }, 60_000)

  test('a request still running when the grace period ends is cut off, and the process exits', async () => {
    const { child, url } = await start([], { ALMANAC_SHUTDOWN_GRACE: '1' })
    const post = slowPost(url)
    const outcome = post.response.then((r) => r.status).catch(() => 'closed')
    await post.started
    await untilInFlight(url, 1)
    child.kill('SIGTERM')
    expect(await child.exited).toBe(0)
    expect(await outcome).toBe('closed')
    post.finish()
  }, 60_000)
})

describe('--workers 2', () => {
  const childrenOf = (pid: number) =>
    readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)

  test('two processes share the port and both answer; a dead one is replaced; SIGTERM stops all', async () => {
    const { child, url } = await start(['--workers', '2'])
    const workers = childrenOf(child.pid)
    expect(workers.length).toBe(2)
    const seen = new Set<string>()
    for (let i = 0; i < 400 && seen.size < 2; i++) {
      // A new connection each time, so the kernel picks a listener each time; the second worker may still
      // be opening its datasets when the first answers.
      if (i % 10 === 9) await Bun.sleep(100)
      const text = await (await fetch(url + '/metrics', { headers: { connection: 'close' } })).text()
      seen.add(/almanac_build_info\{[^}]*worker="(\d+)"/.exec(text)?.[1] ?? 'none')
    }
    expect([...seen].sort()).toEqual(['0', '1'])
    const api = await fetch(url + '/api/v1/countries/FR', { headers: { 'x-api-key': KEY, 'x-response-form': 'bare' } })
    expect(api.status).toBe(200)

    process.kill(workers[0]!, 'SIGKILL')
    let replaced: number[] = []
    for (let i = 0; i < 100; i++) {
      replaced = childrenOf(child.pid)
      if (replaced.length === 2 && !replaced.includes(workers[0]!)) break
      await Bun.sleep(100)
    }
    expect(replaced.length).toBe(2)
    expect(replaced).not.toContain(workers[0]!)
    expect(replaced).toContain(workers[1]!)

    child.kill('SIGTERM')
    expect(await child.exited).toBe(0)
    for (const pid of replaced) {
      let alive = true
      try {
        process.kill(pid, 0)
      } catch {
        alive = false
      }
      expect(alive).toBe(false)
    }
    expect(await refused(url)).toBe(true)
  }, 90_000)

  test('SIGHUP to the supervisor reaches every worker (a data refresh or list reload), and all stay up', async () => {
    const { child } = await start(['--workers', '2'], { ALMANAC_ACCESS_LOG: 'false', ALMANAC_SHUTDOWN_DELAY: '0' }, 'pipe')
    const reader = (child.stderr as ReadableStream<Uint8Array>).getReader()
    let text = ''
    const count = (needle: string) => text.split(needle).length - 1
    const readUntil = async (done: () => boolean) => {
      while (!done()) {
        const chunk = await reader.read()
        if (chunk.done) return
        text += new TextDecoder().decode(chunk.value)
      }
    }
    // Both workers must be listening (their SIGHUP listener in place) before the signal is sent.
    await readUntil(() => count('"msg":"listening"') >= 2)
    const workers = childrenOf(child.pid)
    child.kill('SIGHUP')
    await readUntil(() => count('SIGHUP: operator lists reloaded') >= 2)
    expect(count('SIGHUP: operator lists reloaded')).toBe(2)
    expect(child.exitCode).toBeNull()
    expect(childrenOf(child.pid).sort()).toEqual(workers.sort())
    reader.releaseLock()
    child.kill('SIGTERM')
    expect(await child.exited).toBe(0)
  }, 60_000)

  test('workers do not outlive a supervisor that was killed outright', async () => {
    const { child, url } = await start(['--workers', '2'])
    const workers = childrenOf(child.pid)
    expect(workers.length).toBe(2)
    child.kill('SIGKILL')
    await child.exited
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0)
        return true
      } catch {
        return false
      }
    }
    for (let i = 0; i < 100 && workers.some(alive); i++) await Bun.sleep(100)
    expect(workers.filter(alive)).toEqual([])
    expect(await refused(url)).toBe(true)
  }, 60_000)
})
