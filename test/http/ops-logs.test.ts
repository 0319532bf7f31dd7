/**
 * The server's own log, from start to finish, as an operator's collector reads it: every stderr line one
 * JSON object with a time; `listening` names the address the socket is bound to (the port the system chose
 * for port 0); SIGTERM writes `stopping` and, once drained, `stopped`, then exit 0.
 */
import { expect, test } from 'bun:test'
import { SMOKE_KEY } from '../../build/smoke.ts'
import { startFromSource } from '../support/source-server.ts'
import { tempDirs } from '../support/temp.ts'

const tempDir = tempDirs('almanac-logs-')

test('start-up, listening, stopping and stopped are JSON lines with the real bind address', async () => {
  const server = await startFromSource(tempDir, { ALMANAC_API_KEYS: SMOKE_KEY })
  const port = Number(new URL(server.url).port)
  expect(port).toBeGreaterThan(0)
  expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
  expect(await server.stop()).toBe(0)
  const lines = server.lines.filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>)
  for (const l of lines) expect(Date.parse(l.time as string)).toBeGreaterThan(0)
  const listening = lines.find((l) => l.msg === 'listening')!
  expect(listening).toMatchObject({ level: 'info', address: `127.0.0.1:${port}`, url: `http://127.0.0.1:${port}`, pid: server.pid })
  const msgs = lines.map((l) => l.msg)
  expect(msgs.indexOf('stopping')).toBeGreaterThan(msgs.indexOf('listening'))
  expect(msgs.at(-1)).toBe('stopped')
  expect(lines.find((l) => l.msg === 'stopping')).toMatchObject({ signal: 'SIGTERM', grace_seconds: 10 })
  // A key is configured: no warning about keys.
  expect(lines.filter((l) => String(l.msg).startsWith('No API keys'))).toEqual([])
}, 130_000)

test('a server with no API keys says so at start (one warn line) and in /readyz, still ready; a key created with `almanac keys create` ' +
  'ends the warning', async () => {
  const stateDir = tempDir()
  // No resolver check: this test is about the auth warning alone (a host without DNS would add the email one).
  const server = await startFromSource(tempDir, {
    ALMANAC_API_KEYS: '',
    ALMANAC_STATE_DIR: stateDir,
    ALMANAC_EMAIL_DNS_CHECK_NAMES: 'none',
  })
  try {
    const lines = server.lines.filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>)
    const warned = lines.filter((l) => String(l.msg).startsWith('No API keys'))
    expect(warned).toHaveLength(1)
    expect(warned[0]!.level).toBe('warn')
    expect(warned[0]!.msg).toContain('ALMANAC_API_KEYS')
    expect(warned[0]!.msg).toContain('almanac keys create')
    const ready = await fetch(`${server.url}/readyz`)
    expect(ready.status).toBe(200)
    const body = (await ready.json()) as any
    expect(body.status).toBe('ready')
    expect(body.warnings).toEqual([{ component: 'auth', problem: warned[0]!.msg }])
    expect((await fetch(`${server.url}/api/v1/countries/FR`)).status).toBe(401)

    const create = Bun.spawn([process.execPath, 'src/main.ts', 'keys', 'create', '--name', 'first'], {
      cwd: `${import.meta.dir}/../..`,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: tempDir(),
        ALMANAC_STATE_DIR: stateDir,
        ALMANAC_PLANS: 'smoke:1000/1d',
        ALMANAC_DEFAULT_PLAN: 'smoke',
      },
      stdout: 'pipe',
    })
    const key = (await new Response(create.stdout).text()).trim()
    expect(await create.exited).toBe(0)
    expect((await fetch(`${server.url}/api/v1/countries/FR`, { headers: { 'x-api-key': key } })).status).toBe(200)
    const after = (await (await fetch(`${server.url}/readyz`)).json()) as any
    expect(after.warnings).toBeUndefined()
  } finally {
    await server.stop()
  }
}, 130_000)
