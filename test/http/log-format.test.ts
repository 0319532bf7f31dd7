/**
 * One log format (issue 25): every line the server writes, on stdout (access log) and stderr (everything
 * else), is a JSON object with `time` and `level`. A real `almanac serve` process with one dataset missing
 * (its domain is disabled: an `error` line), answering requests (access lines), reloading on SIGHUP and
 * stopping on SIGTERM; a start that fails; and the 500 line, through a domain that throws.
 */
import { afterAll, expect, test } from 'bun:test'
import { spawn, type Subprocess } from 'bun'
import { copyFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { Elysia } from 'elysia'
import { createLogger } from '../../src/lib/logger.ts'
import { openDataDir } from '../../src/data/open.ts'
import { createAuthenticator } from '../../src/http/admission/auth.ts'
import { createApp } from '../../src/server.ts'
import { openDomains } from '../../src/domains/mount.ts'
import { createQuotaStore } from '../../src/stores/index.ts'
import { TEST_KEY, testConfig } from '../support/app.ts'
import { tempDirs } from '../support/temp.ts'

const ROOT = resolve(import.meta.dir, '../..')
const DATA = join(ROOT, 'datasets/out')
const KEY = 'log-format-key-0123456789'
const tempDir = tempDirs('almanac-logfmt-')
const LEVELS = ['debug', 'info', 'warn', 'error']

/** Reads a pipe into lines as they come. */
function collect(stream: ReadableStream<Uint8Array>, lines: string[]): Promise<void> {
  return (async () => {
    const decoder = new TextDecoder()
    let rest = ''
    for await (const chunk of stream) {
      rest += decoder.decode(chunk, { stream: true })
      const parts = rest.split('\n')
      rest = parts.pop()!
      lines.push(...parts)
    }
    if (rest) lines.push(rest)
  })()
}

/** Waits (polling, bounded) until a line matches; the test's assertions are on the lines, not on time. */
async function until(lines: string[], pattern: RegExp, child: Subprocess): Promise<string> {
  for (let i = 0; i < 3000; i++) {
    const found = lines.find((l) => pattern.test(l))
    if (found) return found
    if (child.exitCode !== null) break
    await Bun.sleep(20)
  }
  throw new Error(`no line matching ${pattern}:\n${lines.join('\n')}`)
}

function checkAll(lines: string[]) {
  for (const line of lines.filter(Boolean)) {
    let parsed: Record<string, unknown>
    try {
      parsed = JSON.parse(line)
    } catch {
      throw new Error(`not JSON: ${line}`)
    }
    expect({ line, time: Number.isFinite(Date.parse(parsed.time as string)), level: LEVELS.includes(parsed.level as string) }).toEqual({
      line,
      time: true,
      level: true,
    })
    expect(Object.keys(parsed).slice(0, 2)).toEqual(['time', 'level'])
  }
}

const children: Subprocess[] = []
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL')
})

const env = (extra: Record<string, string>) => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: tempDir(),
  ALMANAC_HOST: '127.0.0.1',
  PORT: '0',
  ALMANAC_API_KEYS: `${KEY}:t`,
  ALMANAC_PLANS: 't:100000/1d',
  ALMANAC_DEFAULT_PLAN: 't',
  ALMANAC_SHUTDOWN_DELAY: '0',
  ...extra,
})

test('start, a disabled dataset, access lines, a SIGHUP reload and the stop are all JSON with time and level', async () => {
  // The datasets, but for timezones.json: its domain cannot open.
  const data = tempDir()
  for (const name of readdirSync(DATA)) {
    if (name === 'timezones.json' || name.startsWith('.')) continue
    if (name === 'manifest.json') copyFileSync(join(DATA, name), join(data, name))
    else symlinkSync(join(DATA, name), join(data, name))
  }
  const child = spawn({
    cmd: [process.execPath, 'src/main.ts', 'serve'],
    cwd: ROOT,
    env: env({ ALMANAC_STATE_DIR: tempDir(), ALMANAC_DATA_DIR: data, ALMANAC_ACCESS_LOG: 'true' }),
    stdout: 'pipe',
    stderr: 'pipe',
  })
  children.push(child)
  const out: string[] = []
  const err: string[] = []
  const reading = Promise.all([collect(child.stdout as ReadableStream<Uint8Array>, out), collect(child.stderr, err)])
  const url = /"url":"([^"]+)"/.exec(await until(err, /"msg":"listening"/, child))![1]!

  expect((await fetch(`${url}/healthz`)).status).toBe(200)
  expect((await fetch(`${url}/api/v1/countries/FR`, { headers: { 'x-api-key': KEY } })).status).toBe(200)
  expect((await fetch(`${url}/api/v1/timezones/Europe/Paris`, { headers: { 'x-api-key': KEY } })).status).toBe(503)
  await until(out, /"path":"\/api\/v1\/timezones/, child)

  child.kill('SIGHUP')
  const reloaded = await until(err, /activat/, child)
  child.kill('SIGTERM')
  expect(await child.exited).toBe(0)
  await reading

  checkAll([...out, ...err])
  expect(out.length).toBe(3)
  for (const line of out) expect(JSON.parse(line)).toMatchObject({ level: 'info', msg: 'request' })
  const disabled = err.map((l) => JSON.parse(l)).find((l) => /timezones domain is disabled/.test(l.msg))
  expect(disabled).toMatchObject({ level: 'error', domain: 'timezones' })
  expect(JSON.parse(reloaded).level).toMatch(/info|warn|error/)
  expect(err.map((l) => JSON.parse(l).msg)).toContain('stopped')
}, 120_000)

test('a server that cannot start says why in a JSON error line', async () => {
  const file = join(tempDir(), 'not-a-dir')
  writeFileSync(file, 'x')
  const child = spawn({
    cmd: [process.execPath, 'src/main.ts', 'serve'],
    cwd: ROOT,
    env: env({ ALMANAC_STATE_DIR: join(file, 'state') }),
    stdout: 'pipe',
    stderr: 'pipe',
  })
  children.push(child)
  const lines: string[] = []
  await Promise.all([collect(child.stdout as ReadableStream<Uint8Array>, lines), collect(child.stderr, lines)])
  expect(await child.exited).toBe(1)
  checkAll(lines)
  expect(lines.map((l) => JSON.parse(l)).at(-1)).toMatchObject({ level: 'error' })
  expect(lines.at(-1)).toContain('ALMANAC_STATE_DIR')
}, 60_000)

test('a 500 is logged as an error line with time and level', async () => {
  const lines: string[] = []
  const broken = {
    name: 'broken',
    prefixes: ['/broken'],
    datasets: [],
    builders: [],
    sources: [],
    open: async () => ({}),
    routes: () =>
      new Elysia().get('/broken', () => {
        throw new Error('connect failed')
      }),
  }
  // The app's 500 path writes through the log it is handed: here the logger serve() hands it, capturing.
  const config = testConfig()
  const data = openDataDir(config.dataDir)
  const mounted = await openDomains(config, data, [broken as any], () => {})
  const quota = createQuotaStore(config)
  const logged = createApp(
    config,
    {
      data,
      domains: [broken as any],
      authenticator: createAuthenticator(config),
      quota,
      log: createLogger((l) => lines.push(l)),
    },
    mounted,
  )
  const res = await logged.handle(new Request('http://localhost/api/v1/broken', { headers: { 'x-api-key': TEST_KEY } }))
  expect(res.status).toBe(500)
  checkAll(lines)
  expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'error', msg: 'unhandled', path: '/api/v1/broken' })
  await quota.close()
})
