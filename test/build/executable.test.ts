/**
 * Done means for the single executable: compile it once, copy it alone into an empty folder, start it
 * there with a temporary cache and an API key and nothing else (no source tree, no node_modules, no
 * ALMANAC_MIRROR), and get correct answers from /readyz, the meta route and every landed domain.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { CompileResult } from '../../build/compile.ts'
import { run, sandbox, sandboxEnv, SMOKE_KEY, start, type Running, type Sandbox } from '../../build/smoke.ts'
import { readManifest, SOURCE_OUT_DIR } from '../../src/data/open.ts'
import { countriesVariant } from '../data/data-dirs.ts'
import { domains } from '../../src/domains/index.ts'
import pkg from '../../package.json' with { type: 'json' }
import { COMPILE_SECONDS, compiledExecutable, compileLog } from './compiled.ts'
import { PROBES } from './probes.ts'
import { REQUEST_CHECKS, sendCheck } from './request-checks.ts'

const manifest = readManifest(SOURCE_OUT_DIR)
const landed = domains.filter((d) => d.prefixes.length > 0)

let compiled: CompileResult
let box: Sandbox
let server: Running

/** The operator credential the executable is started with: the console and /admin/v1 are on. */
const OPERATOR_TOKEN = 'executable-test-operator-token-0123456789'

beforeAll(async () => {
  compiled = await compiledExecutable()
  box = sandbox(compiled.outfile)
  server = await start(box.exe, box.dir, sandboxEnv(box, { ALMANAC_ADMIN_TOKENS: `ops:${OPERATOR_TOKEN}` }))
}, COMPILE_SECONDS * 1000)

afterAll(async () => {
  await server?.stop()
  box?.remove()
})

test("compile's timings say what happened: each phase, and a total that holds them all", () => {
  const { check, compress, bundle, total } = compiled.timings
  for (const t of [check, compress, bundle]) expect(t).toBeGreaterThanOrEqual(0)
  expect(total).toBeGreaterThanOrEqual(check + compress + bundle)
  const last = compileLog.at(-1)!
  expect(last).toContain(
    ` in ${total.toFixed(1)} s (checking ${check.toFixed(1)} s, compressing ${compress.toFixed(1)} s, bundling ${bundle.toFixed(1)} s`,
  )
  expect(compileLog.some((l) => l.includes('artifacts checked against manifest.json'))).toBe(true)
  expect(compileLog.some((l) => l.startsWith('compile: bundling the code'))).toBe(true)
})

const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(server.url + path, {
    method,
    headers: { 'x-api-key': SMOKE_KEY, 'x-response-form': 'bare', ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : null }
}

describe('the compiled executable, alone in an empty folder', () => {
  test('embeds every artifact of datasets/out and every worker module', () => {
    const artifacts = Object.values(manifest.datasets)
      .flatMap((d) => d.artifacts.map((a) => a.name))
      .sort()
    expect(compiled.files.map((f) => f.name).sort()).toEqual(artifacts)
    for (const f of compiled.files) if (f.encoding === 'zstd') expect(f.embeddedBytes).toBeLessThan(f.bytes)
    expect(compiled.workers).toContain('src/domains/hash/kdf-worker.ts')
    expect(readdirSync(join(box.dir, 'bin'))).toEqual(['almanac'])
  })

  test('extracted the datasets on first start into the cache, keyed by content hash', () => {
    expect(server.lines.some((l) => l.includes('"msg":"datasets: extracting'))).toBe(true)
    const dir = join(box.cache, compiled.key)
    expect(JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'))).toEqual(manifest)
    for (const f of compiled.files) expect(existsSync(join(dir, f.name))).toBe(true)
    // Every blob of 64 KiB or more is read from the executable file by offset (extraction checked each sha256).
    expect(compiled.located).toBe(compiled.files.filter((f) => f.embeddedBytes >= 64 * 1024).length)
    expect(server.lines.some((l) => l.includes('"msg":"every domain has opened"'))).toBe(true)
    expect(readdirSync(dir, { recursive: true }).filter((name) => String(name).endsWith('.tmp'))).toEqual([])
  })

  test('/readyz is 200 with every domain ready', async () => {
    const res = await fetch(`${server.url}/readyz`)
    const body = (await res.json()) as { domains: { domain: string }[]; problems?: unknown }
    expect({ status: res.status, problems: body.problems }).toEqual({ status: 200, problems: undefined })
    expect(body.domains.map((d: { domain: string }) => d.domain)).toEqual(domains.map((d) => d.name))
  })

  test('every landed domain has a probe', () => {
    expect(landed.map((d) => d.name).filter((name) => !PROBES[name]?.length)).toEqual([])
  })

  for (const domain of domains) {
    for (const probe of PROBES[domain.name] ?? []) {
      test.if(domain.prefixes.length > 0)(`${domain.name}: ${probe.method} ${probe.path}`, async () => {
        const { status, body } = await api(probe.method, probe.path, probe.body)
        expect({ status, detail: body?.detail }).toEqual({ status: 200, detail: undefined })
        await probe.check(body)
      })
    }
  }

  // The same table request-checks.test.ts runs against the source tree: bounds, 405, 413, fields, both forms, problems.
  for (const c of REQUEST_CHECKS) {
    test(`request check ${c.method} ${c.path.slice(0, 60)}: ${c.name}`, async () => {
      const { res, body } = await sendCheck(server.url, SMOKE_KEY, c)
      c.check(res, body)
    })
  }

  test('help runs nothing: bare, --help, serve --help (no server), data extract --help (no extraction)', async () => {
    const cache = join(box.dir, 'help-cache')
    for (const args of [[], ['--help'], ['serve', '--help'], ['data', 'extract', '--help']]) {
      const { stdout, stderr, code } = await run(box.exe, args, box.dir, sandboxEnv(box, { ALMANAC_DATA_DIR: cache }))
      expect({ args, code }).toEqual({ args, code: 0 })
      expect(stdout).toContain('usage')
      expect(stderr).not.toContain('listening')
    }
    expect(existsSync(cache)).toBe(false)
    const typo = await run(box.exe, ['serve', '--prot', '9000'], box.dir, sandboxEnv(box))
    expect(typo.code).toBe(2)
    expect(typo.stderr).toContain('did you mean --port?')
  })

  test('GET /api/v1/meta/datasets lists the embedded datasets with licences and credit', async () => {
    const { status, body } = await api('GET', '/api/v1/meta/datasets')
    expect(status).toBe(200)
    expect(body.app_version).toBe(pkg.version)
    for (const entry of Object.values(manifest.datasets)) {
      const shown = body.results.find((d: { id: string }) => d.id === entry.id)
      expect(shown).toMatchObject({ version: entry.version, built: entry.built, counts: entry.counts })
      for (const s of entry.sources) expect(shown.attribution).toContain(s.attribution)
    }
  })

  // Elysia reads hook source text to decide what a request context carries; the executable is minified,
  // so the shared layers are checked again here, not only from source.
  test('minified, the shared layers still see the form, the route, the definitions date and the per-item cost', async () => {
    const get = (form: string) =>
      fetch(`${server.url}/api/v1/countries/FR?fields=name`, { headers: { 'x-api-key': SMOKE_KEY, 'x-response-form': form } })
    const enveloped = await get('enveloped')
    expect(await enveloped.json()).toEqual({ status: 'ok', data: { name: 'France' }, error: null })
    expect(enveloped.headers.get('x-definitions-updated')).toMatch(/^\d{4}-\d{2}-\d{2}$/)
    const bare = await get('bare')
    expect(await bare.json()).toEqual({ name: 'France' })
    const before = Number(bare.headers.get('x-quota-remaining'))
    const bulk = await fetch(`${server.url}/api/v1/countries/validate`, {
      method: 'POST',
      headers: { 'x-api-key': SMOKE_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ codes: ['FR', 'DE', 'XX'] }),
    })
    expect(bulk.status).toBe(200)
    expect(Number(bulk.headers.get('x-quota-remaining'))).toBe(before - 3)
    const metrics = await (await fetch(`${server.url}/metrics`)).text()
    expect(metrics).toContain('almanac_http_requests_total{method="GET",route="/api/v1/countries/:code",status="200"}')
  })

  test('the docs page and its UI assets are served from inside the executable', async () => {
    const page = await fetch(`${server.url}/docs`)
    expect(page.status).toBe(200)
    const html = await page.text()
    const assets = [...html.matchAll(/(?:src|href)="([^"]+\.(?:js|css|png))"/g)].map((m) => m[1]!).filter((u) => !/^https?:/.test(u))
    expect(assets.length).toBeGreaterThan(0)
    for (const asset of assets)
      expect({ asset, status: (await fetch(new URL(asset, `${server.url}/docs/`))).status }).toEqual({ asset, status: 200 })
  })

  test('the operator console and its assets, the operator API and its document: all from inside the executable', async () => {
    const page = await fetch(`${server.url}/console`)
    expect([page.status, page.headers.get('content-security-policy')]).toEqual([200, expect.stringContaining("script-src 'self'")])
    const assets = [...(await page.text()).matchAll(/(?:src|href)="([^"]+\.(?:js|css))"/g)].map((m) => m[1]!)
    expect(assets.length).toBeGreaterThanOrEqual(2)
    for (const asset of assets)
      expect({ asset, status: (await fetch(new URL(asset, `${server.url}/console`))).status }).toEqual({ asset, status: 200 })
    const whoami = await fetch(`${server.url}/admin/v1/whoami`, { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } })
    expect(await whoami.json()).toEqual({ operator: 'ops' })
    const doc = (await (await fetch(`${server.url}/admin/openapi.json`)).json()) as { paths: Record<string, unknown> }
    expect(Object.keys(doc.paths)).toContain('/admin/v1/keys')
  })

  test('the OpenAPI document is generated inside the executable too', async () => {
    const res = await fetch(`${server.url}/openapi.json`)
    expect(res.status).toBe(200)
    const doc = (await res.json()) as { paths: Record<string, unknown> }
    expect(Object.keys(doc.paths)).toContain('/api/v1/meta/datasets')
  })

  test('`almanac version` prints the app version and each dataset version and date', async () => {
    const { stdout, code } = await run(box.exe, ['version'], box.dir, sandboxEnv(box))
    expect(code).toBe(0)
    expect(stdout).toContain(`almanac ${pkg.version}`)
    expect(stdout).toContain('datasets (embedded)')
    for (const d of Object.values(manifest.datasets))
      expect(stdout).toMatch(new RegExp(`\\b${d.id}\\s+${d.version.replace(/[.+]/g, '\\$&')}\\s+${d.date ?? ''}`))
  })

  test('a second start reuses the extracted datasets', async () => {
    const again = await start(box.exe, box.dir, sandboxEnv(box))
    try {
      expect(again.lines.some((l) => l.includes('datasets: extracting'))).toBe(false)
      expect((await fetch(`${again.url}/readyz`)).status).toBe(200)
    } finally {
      expect(await again.stop()).toBe(0)
    }
  })

  test('an unusable data directory is one clear line and exit status 1, not a crash', async () => {
    const { code, stderr } = await run(box.exe, ['serve'], box.dir, sandboxEnv(box, { ALMANAC_DATA_DIR: '/sys/almanac-test-cache' }))
    expect(code).toBe(1)
    expect(stderr).toMatch(
      new RegExp(
        'almanac: Cannot create the dataset directory /sys/almanac-test-cache \\((permission denied|the file system is read-only)\\)\\. ' +
          'Set ALMANAC_DATA_DIR to a writable directory',
      ),
    )
    expect(stderr).not.toMatch(/^\s+at /m)
  })
})

// Issue 45: the data a server serves checked, and newer data brought in, with nothing but the executable.
describe('data verify, pack, activate and rollback with only the executable', () => {
  const countriesVersion = async (url: string) => {
    const res = await fetch(`${url}/api/v1/meta/datasets/countries`, { headers: { 'x-api-key': SMOKE_KEY, 'x-response-form': 'bare' } })
    return ((await res.json()) as { version: string }).version
  }
  const until = async (url: string, version: string) => {
    for (let i = 0; i < 600 && (await countriesVersion(url)) !== version; i++) await Bun.sleep(50)
    expect(await countriesVersion(url)).toBe(version)
  }
  // Each run gets a state dir of its own: the server above records its pid in the default one.
  const envWith = (name: string, extra: Record<string, string> = {}) =>
    sandboxEnv(box, { ALMANAC_STATE_DIR: join(box.dir, `state-${name}`), ...extra })

  test('data verify with no flag checks the extracted datasets it serves and says so; an empty directory fails', async () => {
    const served = await run(box.exe, ['data', 'verify'], box.dir, envWith('verify'))
    expect(served.code).toBe(0)
    expect(served.stderr).toContain(`verifying ${join(box.cache, compiled.key)}: the executable's own datasets, extracted`)
    expect(served.stderr).toContain('every artifact matches manifest.json')
    const empty = join(box.dir, 'empty-data')
    mkdirSync(empty)
    const none = await run(box.exe, ['data', 'verify', '--data-dir', empty], box.dir, envWith('verify'))
    expect(none.code).toBe(1)
    expect(none.stderr).toContain(`nothing to verify: ${empty} holds no manifest.json`)
    const build = await run(box.exe, ['data', 'build', '--only', 'ip', '--out', empty], box.dir, envWith('verify'))
    expect(build.code).toBe(2)
    expect(build.stderr).toContain('`almanac data pack --out FILE` there')
  })

  test('data pack reads the datasets from inside the executable when they are not extracted, extracting nothing', async () => {
    const never = join(box.dir, 'never-extracted')
    const bundle = join(box.dir, 'from-inside.almanac')
    const packed = await run(
      box.exe,
      ['data', 'pack', '--only', 'ip', '--out', bundle],
      box.dir,
      envWith('pack', { ALMANAC_DATA_DIR: never }),
    )
    expect(packed.code).toBe(0)
    expect(packed.stderr).toContain("the executable's own datasets, read from inside it")
    expect(existsSync(never)).toBe(false)
    // Unpacked (every artifact checked) and completed from the extracted datasets; no server runs there.
    const activated = await run(box.exe, ['data', 'activate', bundle], box.dir, envWith('pack'))
    expect(activated.code).toBe(0)
    expect(activated.stderr).toContain('ip, ip-lists from the bundle, every artifact checked')
    expect(activated.stderr).toContain('it is served from the next start')
  })

  test('a bundle packed in a checkout is swapped into the running executable, and rolled back to its own datasets', async () => {
    const env = envWith('update')
    const running = await start(box.exe, box.dir, env)
    try {
      const original = await countriesVersion(running.url)
      const next = countriesVariant(join(box.dir, 'next'), 'France (carried over)', '-carried')
      const bundle = join(box.dir, 'countries.almanac')
      const pack = Bun.spawnSync(['bun', 'src/main.ts', 'data', 'pack', '--data-dir', next, '--only', 'countries', '--out', bundle], {
        cwd: resolve(import.meta.dir, '../..'),
      })
      expect(pack.exitCode).toBe(0)
      const activated = await run(box.exe, ['data', 'activate', bundle], box.dir, env)
      expect(activated.code).toBe(0)
      expect(activated.stderr).toContain(`SIGHUP sent to pid ${running.pid}`)
      await until(running.url, `${original}-carried`)
      const back = await run(box.exe, ['data', 'rollback'], box.dir, env)
      expect(back.code).toBe(0)
      expect(back.stderr).toContain(`rolling back to ${join(box.cache, compiled.key)} (the executable's own datasets, extracted`)
      await until(running.url, original)
    } finally {
      expect(await running.stop()).toBe(0)
    }
  }, 120_000)
})
