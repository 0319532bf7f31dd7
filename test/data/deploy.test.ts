/**
 * What can be checked of deploy/ without a Docker engine: the systemd unit passes `systemd-analyze
 * verify` (Debian's systemd package, installed by `.ci/run`), the compose file parses with the services issue 18 names and settings the app accepts, and the
 * Dockerfile's healthcheck command (`almanac data status`) tells a ready server from a missing one.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { loadConfig } from '../../src/config.ts'
import { freePort } from '../support/ports.ts'
import { type LiveServer, liveServer } from '../http/helpers.ts'

const DEPLOY = resolve(import.meta.dir, '../../deploy')
const read = (name: string) => Bun.file(join(DEPLOY, name)).text()

describe('systemd unit', () => {
  test('passes systemd-analyze verify (ExecStart pointed at an executable that exists here)', async () => {
    // A test requirement that `.ci/run` installs: without it this fails saying so, rather than being skipped.
    const analyze = Bun.which('systemd-analyze')
    if (!analyze) throw new Error('systemd-analyze not found: apt-get install systemd (the Debian package that provides it)')
    const unit = await read('almanac.service')
    for (const option of ['DynamicUser=yes', 'ProtectSystem=strict', 'StateDirectory=almanac', 'NoNewPrivileges=yes', 'ExecReload='])
      expect(unit).toContain(option)
    const dir = mkdtempSync(join(tmpdir(), 'almanac-unit-'))
    try {
      // verify checks that ExecStart's program exists; the executable is not installed on this machine.
      const path = join(dir, 'almanac.service')
      writeFileSync(path, unit.replace('/usr/local/bin/almanac serve', `${process.execPath} --version`))
      const run = Bun.spawnSync([analyze, 'verify', path], { stderr: 'pipe', stdout: 'pipe' })
      const said = run.stderr.toString() + run.stdout
      expect(said).toBe('')
      expect(run.exitCode).toBe(0)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('compose file', () => {
  test('two Almanac instances, Redis and an S3-compatible store, with settings the app accepts', async () => {
    const compose = Bun.YAML.parse(await read('compose.yaml')) as any
    const services = compose.services
    expect(Object.keys(services)).toEqual(expect.arrayContaining(['almanac-a', 'almanac-b', 'redis', 's3']))
    const [a, b] = [services['almanac-a'], services['almanac-b']]
    // The same image and settings behind different host ports.
    expect(a.build.dockerfile).toBe('deploy/Dockerfile')
    expect(b.environment).toEqual(a.environment)
    expect(a.ports).not.toEqual(b.ports)
    expect(a.environment.ALMANAC_QUOTA_STORE).toStartWith('redis://redis:')
    expect(a.environment.S3_ENDPOINT).toStartWith('http://s3:')
    expect(Object.keys(a.depends_on)).toEqual(expect.arrayContaining(['redis']))
    // Every variable the instances get (compose + the example env file) is a setting the app accepts.
    const example = Object.fromEntries(
      (await read('almanac.env.example'))
        .split('\n')
        .filter((l) => l && !l.startsWith('#'))
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    )
    const config = loadConfig({ env: { ...example, ...a.environment } })
    expect(config.quotaStore).toBe(a.environment.ALMANAC_QUOTA_STORE)
    expect(config.qr.store).toBe(a.environment.ALMANAC_QR_STORE)
  })

  test('the Dockerfile is multi-stage, runs as non-root and checks /readyz through the executable', async () => {
    const docker = await read('Dockerfile')
    expect(docker.match(/^FROM /gm)?.length).toBe(2)
    expect(docker).toMatch(/^USER 65532/m)
    expect(docker).toContain('"data", "status"')
  })
})

describe('almanac data status (the healthcheck)', () => {
  let server: LiveServer
  beforeAll(async () => {
    server = await liveServer()
  })
  afterAll(() => server.stop())
  // Not spawnSync: the server answers from this process's event loop.
  const status = async (url: string) => {
    const proc = Bun.spawn(['bun', 'src/main.ts', 'data', 'status', '--url', url], { stdout: 'pipe', stderr: 'pipe' })
    const [stdout, stderr, exitCode] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
    return { stdout, stderr, exitCode }
  }

  test('exits 0 and prints /readyz when the server is ready', async () => {
    const run = await status(server.url)
    expect(run.exitCode).toBe(0)
    expect(JSON.parse(run.stdout).status).toBe('ready')
  })

  test('exits 1 when nothing answers', async () => {
    const run = await status(`http://127.0.0.1:${freePort()}`)
    expect(run.exitCode).toBe(1)
    expect(run.stderr).toContain('did not answer')
  })
})
