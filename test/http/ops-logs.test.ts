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
}, 130_000)
