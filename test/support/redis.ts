/**
 * A real `redis-server` (Debian package) for tests: a free loopback port, no persistence, a temp dir.
 * `stop()` kills it and `start()` brings it back on the same port, to test an outage and the recovery.
 * With `tls` it also listens with TLS (its certificate from `testCertificates`) and `url` is that port's
 * `rediss://`; the plain port stays open for the test's own probes.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { freePort } from './ports.ts'

export interface TestRedis {
  url: string
  port: number
  /** The TLS port, when started with `tls`. */
  tlsPort?: number
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

/** PEM files of a throwaway CA, a server certificate it signed for 127.0.0.1, and a second CA that signed nothing of ours. */
export interface TestCertificates {
  ca: string
  cert: string
  key: string
  otherCa: string
}

/** Makes `testCertificates`' files in `dir` with `openssl` (a few hundred ms: EC keys). */
export function testCertificates(dir: string): TestCertificates {
  const f = (name: string) => join(dir, name)
  const run = (...args: string[]) => {
    const r = Bun.spawnSync(['openssl', ...args], { stderr: 'pipe' })
    if (r.exitCode !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr}`)
  }
  const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes']
  for (const ca of ['ca', 'other-ca'])
    run('req', '-x509', ...ecKey, '-keyout', f(`${ca}.key`), '-out', f(`${ca}.pem`), '-days', '2', '-subj', `/CN=almanac test ${ca}`)
  run('req', ...ecKey, '-keyout', f('server.key'), '-out', f('server.csr'), '-subj', '/CN=127.0.0.1')
  writeFileSync(f('server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n')
  const sign = ['-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial', '-days', '2', '-extfile', f('server.ext')]
  run('x509', '-req', '-in', f('server.csr'), ...sign, '-out', f('server.pem'))
  return { ca: f('ca.pem'), cert: f('server.pem'), key: f('server.key'), otherCa: f('other-ca.pem') }
}

/** redis-server's arguments to also listen with TLS on `port` (clients need no certificate of their own). */
export const tlsArgs = (certs: TestCertificates, port: number) => [
  ...['--tls-port', String(port), '--tls-cert-file', certs.cert, '--tls-key-file', certs.key],
  ...['--tls-ca-cert-file', certs.ca, '--tls-auth-clients', 'no'],
]

export async function startRedis(options: { tls?: TestCertificates } = {}): Promise<TestRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'almanac-redis-'))
  const port = freePort()
  const tlsPort = options.tls ? freePort() : undefined
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
        ...(options.tls ? tlsArgs(options.tls, tlsPort!) : []),
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
    url: tlsPort ? `rediss://127.0.0.1:${tlsPort}` : `redis://127.0.0.1:${port}`,
    port,
    ...(tlsPort ? { tlsPort } : {}),
    start,
    stop,
    async close() {
      await stop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
