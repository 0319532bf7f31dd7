/**
 * The image deploy/Dockerfile describes, built and run the way CI can: Debian's buildah builds that same
 * Dockerfile on a base assembled here from this machine's glibc, CA certificates and a passwd naming user
 * 65532 (what distroless base holds; no registry is asked for anything), and podman runs it with its own
 * storage under a temporary folder. Then /readyz, one probe per domain (test/domains/<name>/probes.ts),
 * the image's own healthcheck on a port that is not 8080, the state on a fresh volume owned by the
 * server's user, no zoneinfo anywhere in the image, and a clean stop.
 *
 * On this kind of machine podman needs the vfs storage driver, the runc runtime (crun fails), explicit
 * ulimits and host networking. Without buildah, podman or runc the tests are skipped, except in CI
 * (CI=true), where `.ci/run` installs them and their absence is a failure.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import {
  cpSync,
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
  chmodSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { SMOKE_KEY } from '../../build/smoke.ts'
import { domains } from '../../src/domains/index.ts'
import { freePort } from '../support/ports.ts'
import { COMPILE_SECONDS, compiledExecutable } from './compiled.ts'
import { PROBES } from './probes.ts'

const ROOT = resolve(import.meta.dir, '../..')
const TOOLS = ['buildah', 'podman', 'runc']
const missing = TOOLS.filter((t) => !Bun.which(t))
const BASE = 'localhost/almanac-base:test'
const IMAGE = 'localhost/almanac:test'
/** The server's user in the image (distroless `nonroot`). */
const UID = 65532

if (missing.length && process.env.CI === 'true')
  test('container tools are installed', () => {
    throw new Error(`${missing.join(', ')} not found: apt-get install buildah podman runc (.ci/run installs them)`)
  })

/** One place for the storage flags every buildah and podman call needs. */
function tools(storage: string) {
  const flags = ['--root', join(storage, 'root'), '--runroot', join(storage, 'run'), '--storage-driver', 'vfs']
  const run = (tool: 'buildah' | 'podman', args: string[]) => {
    const r = Bun.spawnSync([tool, ...flags, ...args], { stdout: 'pipe', stderr: 'pipe' })
    return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() }
  }
  const ok = (tool: 'buildah' | 'podman', args: string[]) => {
    const r = run(tool, args)
    if (r.code !== 0) throw new Error(`${tool} ${args.join(' ')} exited ${r.code}:\n${r.stderr}`)
    return r.stdout.trim()
  }
  return { run, ok }
}

/** The base the Dockerfile's BASE stands for: the executable's shared libraries (from ldd), CA certificates, user 65532. */
function assembleBase(exe: string, dir: string) {
  const ldd = Bun.spawnSync(['ldd', exe], { stdout: 'pipe' }).stdout.toString()
  const libs = [...ldd.matchAll(/(?:=> )?(\/\S+) \(0x/g)].map((m) => m[1]!)
  expect(libs.some((l) => l.includes('libc.so'))).toBe(true)
  for (const lib of libs) {
    mkdirSync(join(dir, dirname(lib)), { recursive: true })
    copyFileSync(lib, join(dir, lib))
  }
  const certs = '/etc/ssl/certs/ca-certificates.crt'
  if (existsSync(certs)) {
    mkdirSync(join(dir, dirname(certs)), { recursive: true })
    copyFileSync(certs, join(dir, certs))
  }
  writeFileSync(
    join(dir, 'etc/passwd'),
    `root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:${UID}:${UID}:nonroot:/home/nonroot:/sbin/nologin\n`,
  )
  writeFileSync(join(dir, 'etc/group'), `root:x:0:\nnonroot:x:${UID}:\n`)
  mkdirSync(join(dir, 'tmp'))
  chmodSync(join(dir, 'tmp'), 0o1777)
}

/** The build context deploy/Dockerfile expects (its .dockerignore admits only these). */
function assembleContext(exe: string, dir: string) {
  mkdirSync(join(dir, 'dist'), { recursive: true })
  try {
    linkSync(exe, join(dir, 'dist/almanac'))
  } catch {
    copyFileSync(exe, join(dir, 'dist/almanac'))
  }
  cpSync(join(ROOT, 'deploy/rootfs'), join(dir, 'deploy/rootfs'), { recursive: true })
}

describe.skipIf(missing.length > 0)('the container image (buildah build of deploy/Dockerfile, run by podman)', () => {
  // Made in beforeAll: a skipped describe still runs this body, and would leave the folder behind.
  let storage = ''
  let run: ReturnType<typeof tools>['run'] = () => ({ code: 0, stdout: '', stderr: '' })
  let ok: ReturnType<typeof tools>['ok'] = () => ''
  const name = `almanac-test-${process.pid}`
  const volume = `${name}-state`
  const port = freePort()
  const url = `http://127.0.0.1:${port}`
  const timings: Record<string, number> = {}
  const timed = async <T>(what: string, work: () => T | Promise<T>): Promise<T> => {
    const started = performance.now()
    const result = await work()
    timings[what] = Math.round(performance.now() - started)
    return result
  }

  beforeAll(async () => {
    storage = mkdtempSync(join(tmpdir(), 'almanac-container-'))
    ;({ run, ok } = tools(storage))
    const { outfile } = await timed('compile (shared with the executable test)', () => compiledExecutable())
    await timed('build', () => {
      const base = join(storage, 'base')
      assembleBase(outfile, base)
      const container = ok('buildah', ['from', 'scratch'])
      ok('buildah', ['copy', container, `${base}/`, '/'])
      ok('buildah', ['config', '--user', `${UID}:${UID}`, container])
      ok('buildah', ['commit', '--quiet', container, BASE])
      ok('buildah', ['rm', container])
      const context = join(storage, 'context')
      assembleContext(outfile, context)
      const args = ['--pull=never', '--format', 'docker', '--build-arg', `BASE=${BASE}`]
      ok('buildah', ['bud', '--quiet', ...args, '-f', join(ROOT, 'deploy/Dockerfile'), '-t', IMAGE, context])
    })
    await timed('start to /readyz 200', async () => {
      const env = {
        ALMANAC_PORT: String(port),
        ALMANAC_API_KEYS: `${SMOKE_KEY}:smoke`,
        ALMANAC_PLANS: 'smoke:1000000000/1d',
        ALMANAC_DEFAULT_PLAN: 'smoke',
        ALMANAC_ACCESS_LOG: 'false',
        ALMANAC_SHUTDOWN_DELAY: '1',
      }
      ok('podman', [
        'run',
        '--detach',
        '--name',
        name,
        '--runtime',
        'runc',
        '--network',
        'host',
        '--ulimit',
        'nofile=1024:1024',
        '--ulimit',
        'nproc=1024:1024',
        // As compose runs it: a read-only root, the state on a named volume.
        '--read-only',
        '--volume',
        `${volume}:/var/lib/almanac`,
        ...Object.entries(env).flatMap(([k, v]) => ['--env', `${k}=${v}`]),
        IMAGE,
      ])
      for (let i = 0; ; i++) {
        const answered = await fetch(`${url}/readyz`).then(
          (r) => r.status,
          () => 0,
        )
        if (answered === 200) return
        const running = ok('podman', ['inspect', '--format', '{{.State.Running}}', name])
        if (running !== 'true' || i > 1800) throw new Error(`the container never got ready:\n${run('podman', ['logs', name]).stderr}`)
        await Bun.sleep(100)
      }
    })
  }, COMPILE_SECONDS * 1000)

  afterAll(() => {
    run('podman', ['rm', '--force', '--time', '0', name])
    run('podman', ['volume', 'rm', '--force', volume])
    if (!storage) return
    run('podman', ['system', 'reset', '--force'])
    rmSync(storage, { recursive: true, force: true })
    // Figures for the CI time budget (test/build/container.test.ts), not assertions.
    console.error(`container test timings (ms): ${JSON.stringify(timings)}`)
  })

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(url + path, {
      method,
      headers: { 'x-api-key': SMOKE_KEY, 'x-response-form': 'bare', ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    })
    const text = await res.text()
    return { status: res.status, body: text ? JSON.parse(text) : null }
  }

  test('the image runs as 65532 with a healthcheck that names no port', () => {
    const inspect = (field: string) => JSON.parse(ok('podman', ['image', 'inspect', '--format', `{{json .Config.${field}}}`, IMAGE]))
    expect(inspect('User')).toBe(`${UID}:${UID}`)
    expect(inspect('Healthcheck').Test).toEqual(['CMD', '/usr/local/bin/almanac', 'data', 'status'])
  })

  test('/readyz is 200 with every domain ready', async () => {
    const res = await fetch(`${url}/readyz`)
    const body = (await res.json()) as { domains: { domain: string; ready: boolean }[]; problems?: unknown }
    expect({ status: res.status, problems: body.problems }).toEqual({ status: 200, problems: undefined })
    expect(body.domains.filter((d) => !d.ready)).toEqual([])
  })

  for (const domain of domains)
    for (const probe of (PROBES[domain.name] ?? []).slice(0, 1))
      test.if(domain.prefixes.length > 0)(`${domain.name}: ${probe.method} ${probe.path}`, async () => {
        const { status, body } = await timed(`probe ${domain.name}`, () => api(probe.method, probe.path, probe.body))
        expect({ status, detail: body?.detail }).toEqual({ status: 200, detail: undefined })
        await probe.check(body)
      })

  test("the image's healthcheck passes against the configured port (not 8080)", () => {
    expect(port).not.toBe(8080)
    const check = run('podman', ['healthcheck', 'run', name])
    expect({ code: check.code, stderr: check.stderr.includes('unhealthy') }).toEqual({ code: 0, stderr: false })
  })

  test('state and extracted datasets are on the volume, owned by the server user; the image carries no zoneinfo', () => {
    const mountpoint = ok('podman', ['volume', 'inspect', '--format', '{{.Mountpoint}}', volume])
    expect(statSync(mountpoint).uid).toBe(UID)
    expect(statSync(join(mountpoint, 'state')).uid).toBe(UID)
    expect(existsSync(join(mountpoint, 'state', 'almanac.pid'))).toBe(true)
    expect(readdirSync(join(mountpoint, 'data')).length).toBeGreaterThan(0)
    // Timezones answered above from the dataset inside the executable: the image has no tz database to read.
    const rootfs = ok('podman', ['mount', name])
    try {
      expect(existsSync(join(rootfs, 'usr/local/bin/almanac'))).toBe(true)
      expect(existsSync(join(rootfs, 'usr/share/zoneinfo'))).toBe(false)
      expect(existsSync(join(rootfs, 'etc/localtime'))).toBe(false)
    } finally {
      run('podman', ['unmount', name])
    }
  })

  test('podman stop: SIGTERM, a drained exit 0', async () => {
    await timed('stop', () => ok('podman', ['stop', '--time', '30', name]))
    expect(ok('podman', ['inspect', '--format', '{{.State.ExitCode}}', name])).toBe('0')
    const logs = run('podman', ['logs', name]).stderr
    expect(logs).toContain('"msg":"stopping","signal":"SIGTERM"')
    expect(logs).toContain('"msg":"stopped"')
  })
})
