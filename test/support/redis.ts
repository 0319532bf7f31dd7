/**
 * A real `redis-server` (Debian package) for tests: a free loopback port, no persistence, a temp dir.
 * `stop()` kills it and `start()` brings it back on the same port, to test an outage and the recovery.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { freePort } from './ports.ts'

export interface TestRedis {
  url: string
  port: number
  start(): Promise<void>
  stop(): Promise<void>
  /** Stops the server and removes its directory. */
  close(): Promise<void>
}

/** True when a TCP connection to the port answers PING with PONG. */
async function pong(port: number): Promise<boolean> {
  const { promise, resolve } = Promise.withResolvers<boolean>()
  let buffered = ''
  try {
    const socket = await Bun.connect({
      hostname: '127.0.0.1',
      port,
      socket: {
        open: (s) => void s.write('PING\r\n'),
        data: (s, chunk) => {
          buffered += chunk.toString()
          if (buffered.includes('\r\n')) {
            resolve(buffered.startsWith('+PONG'))
            s.end()
          }
        },
        close: () => resolve(false),
        error: () => resolve(false),
      },
    })
    setTimeout(() => {
      resolve(false)
      socket.end()
    }, 1000)
  } catch {
    return false
  }
  return promise
}

export async function startRedis(): Promise<TestRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'almanac-redis-'))
  const port = freePort()
  let proc: Subprocess | null = null

  const start = async () => {
    if (proc && proc.exitCode === null) return
    proc = Bun.spawn(
      [
        'redis-server',
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        dir,
        '--logfile',
        join(dir, 'redis.log'),
      ],
      {
        stdout: 'ignore',
        stderr: 'pipe',
      },
    )
    for (let i = 0; i < 200; i++) {
      if (await pong(port)) return
      if (proc.exitCode !== null)
        throw new Error(`redis-server exited with ${proc.exitCode}: ${await new Response(proc.stderr as ReadableStream).text()}`)
      await Bun.sleep(25)
    }
    throw new Error(`redis-server did not answer on port ${port}`)
  }
  const stop = async () => {
    if (!proc) return
    proc.kill('SIGKILL')
    await proc.exited
    proc = null
  }
  await start()
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    start,
    stop,
    async close() {
      await stop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
