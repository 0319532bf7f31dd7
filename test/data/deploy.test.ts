/**
 * What can be checked of deploy/ without a Docker engine: the systemd unit passes `systemd-analyze
 * verify` (Debian's systemd package, installed by `.ci/run`); the compose file parses with the services
 * issue 18 names, published ports, volumes, and settings the app accepts (with the image's ENV and the
 * example env file); the Dockerfile's layout; and its healthcheck command (`almanac data status`) tells a
 * ready server from a missing one. test/build/container.test.ts builds and runs the image itself.
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

/** The image's ENV lines (`KEY=value`, continued with `\`), which every container starts with. */
const imageEnv = (docker: string): Record<string, string> =>
  Object.fromEntries(
    [...docker.matchAll(/^ENV ((?:.*\\\n)*.*)$/gm)].flatMap((m) =>
      m[1]!
        .split(/\\\n/)
        .flatMap((part) => part.trim().split(/\s+/).filter(Boolean))
        .map((kv) => kv.split('=', 2) as [string, string]),
    ),
  )

const envFile = (text: string): Record<string, string> =>
  Object.fromEntries(
    text
      .split('\n')
      .filter((l) => l && !l.startsWith('#'))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  )

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
    // Every variable the instances get (the image, the example env file, compose) is a setting the app accepts.
    const example = envFile(await read('almanac.env.example'))
    const config = loadConfig({ env: { ...imageEnv(await read('Dockerfile')), ...example, ...a.environment } })
    expect(config.quotaStore).toBe(a.environment.ALMANAC_QUOTA_STORE)
    expect(config.qr.store).toBe(a.environment.ALMANAC_QR_STORE)
    expect(config.stateDir).toStartWith('/var/lib/almanac/')
  })

  test('published ports, volumes, and a stop timeout above the shutdown delay and grace', async () => {
    const compose = Bun.YAML.parse(await read('compose.yaml')) as any
    const services = compose.services
    const example = envFile(await read('almanac.env.example'))
    const config = loadConfig({ env: { ...imageEnv(await read('Dockerfile')), ...example, ...services['almanac-a'].environment } })
    const published = (service: string) => (services[service].ports as string[]).map((p) => p.split(':'))
    for (const name of ['almanac-a', 'almanac-b']) {
      const s = services[name]
      // The host port leads to the port the server listens on inside the container.
      expect(published(name).map(([, inside]) => Number(inside))).toEqual([config.port])
      // The state and the extracted datasets live on a named volume (declared below), mounted where the image keeps them.
      expect(s.volumes).toEqual([`${name}:/var/lib/almanac`])
      expect(s.read_only).toBe(true)
      expect(s.tmpfs).toContain('/tmp')
      expect(Number.parseInt(s.stop_grace_period, 10)).toBeGreaterThan(config.shutdownDelaySeconds + config.shutdownGraceSeconds)
    }
    for (const [name, at] of [
      ['redis', '/data'],
      ['s3', '/data'],
    ] as const)
      expect(services[name].volumes).toEqual([`${name}:${at}`])
    expect(Object.keys(compose.volumes).sort()).toEqual(['almanac-a', 'almanac-b', 'redis', 's3'])
    // QR links: presigned for an address clients reach, which is MinIO's published port, not the network's http://s3:9000.
    const pub = new URL(config.qr.s3PublicEndpoint!)
    expect(pub.hostname).not.toBe(new URL(config.qr.s3Endpoint!).hostname)
    expect(published('s3').map(([host]) => host)).toContain(pub.port)
    expect(published('s3').map(([, inside]) => inside)).toContain(new URL(config.qr.s3Endpoint!).port)
  })

  test('the Dockerfile packs the compiled executable, an owned state directory and a healthcheck on the configured port', async () => {
    const docker = await read('Dockerfile')
    // Nothing is built or downloaded in the image: it holds the executable this repository compiled.
    expect(docker).not.toMatch(/^RUN /m)
    expect(docker).toMatch(/^COPY (--\S+ )*dist\/almanac \/usr\/local\/bin\/almanac$/m)
    expect(docker).toMatch(/^USER 65532/m)
    // The volume's directory is owned by the user the server runs as (deploy/rootfs holds it).
    expect(docker).toMatch(/^COPY --chown=65532:65532 deploy\/rootfs\/ \/$/m)
    expect(await Bun.file(join(DEPLOY, 'rootfs/var/lib/almanac/README.md')).exists()).toBe(true)
    expect(docker).toMatch(/^VOLUME \["\/var\/lib\/almanac"\]$/m)
    // The healthcheck asks the port the server was configured with (data status reads ALMANAC_PORT), never a fixed one.
    const health = /^HEALTHCHECK (?:.*\\\n)*.*$/m.exec(docker)![0]
    expect(health).toContain('"data", "status"]')
    expect(health).not.toMatch(/8080|--url/)
    // The context holds only what the image needs: the executable and the folder it copies.
    const ignore = (await read('Dockerfile.dockerignore')).split('\n').filter((l) => l && !l.startsWith('#'))
    expect(ignore).toEqual(['*', '!dist/almanac', '!deploy/rootfs'])
  })
})

describe('almanac data status (the healthcheck)', () => {
  let server: LiveServer
  beforeAll(async () => {
    server = await liveServer()
  })
  afterAll(() => server.stop())
  // Not spawnSync: the server answers from this process's event loop.
  const status = async (url?: string, env: Record<string, string> = {}) => {
    const proc = Bun.spawn(['bun', 'src/main.ts', 'data', 'status', ...(url ? ['--url', url] : [])], {
      stdout: 'pipe',
      stderr: 'pipe',
      env: { ...process.env, ...env },
    })
    const [stdout, stderr, exitCode] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
    return { stdout, stderr, exitCode }
  }

  test('exits 0 and prints /readyz when the server is ready', async () => {
    const run = await status(server.url)
    expect(run.exitCode).toBe(0)
    expect(JSON.parse(run.stdout).status).toBe('ready')
  })

  test('without --url it asks the port the server is configured with (the image healthcheck), on loopback for 0.0.0.0', async () => {
    const run = await status(undefined, { ALMANAC_HOST: '0.0.0.0', ALMANAC_PORT: String(server.port) })
    expect(run.exitCode).toBe(0)
    expect(JSON.parse(run.stdout).status).toBe('ready')
  })

  test('exits 1 when nothing answers', async () => {
    const run = await status(`http://127.0.0.1:${freePort()}`)
    expect(run.exitCode).toBe(1)
    expect(run.stderr).toContain('did not answer')
  })
})
