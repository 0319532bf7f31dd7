/**
 * A state directory that cannot be written at start (here: a file-size limit of 1 KiB, so SQLite's first
 * page write fails as on a full disk) stops the server with one line naming ALMANAC_STATE_DIR, not a stack.
 */
import { expect, test } from 'bun:test'
import { resolve } from 'node:path'
import { tempDirs } from '../support/temp.ts'

const ROOT = resolve(import.meta.dir, '../..')
const tempDir = tempDirs('almanac-full-state-')

test('a full disk at start: one line naming ALMANAC_STATE_DIR, exit 1, no stack trace', async () => {
  const dir = tempDir()
  // ulimit -f 1: writes past 1 KiB fail with EFBIG; SIGXFSZ is ignored so the write fails instead of killing.
  const child = Bun.spawn(['bash', '-c', 'ulimit -f 1; trap "" XFSZ; exec bun src/main.ts serve --port 0 --host 127.0.0.1'], {
    cwd: ROOT,
    env: {
      ...process.env,
      ALMANAC_QUOTA_STORE: 'sqlite',
      ALMANAC_STATE_DIR: dir,
      ALMANAC_API_KEYS: 'state-key-0123456789',
      ALMANAC_ACCESS_LOG: 'false',
      ALMANAC_SHUTDOWN_DELAY: '0',
    },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [code, stderr] = await Promise.all([child.exited, new Response(child.stderr).text()])
  expect(code).toBe(1)
  // The key database is opened first (before any dataset), so it is the one named.
  expect(stderr).toContain(`almanac: ALMANAC_STATE_DIR: cannot open ${dir}/keys.sqlite`)
  expect(stderr).not.toMatch(/^\s+at /m)
}, 30_000)

test('a state dir that cannot be made (under a file), with the memory quota store: fatal at start, before datasets open', async () => {
  const dir = tempDir()
  const file = `${dir}/not-a-dir`
  await Bun.write(file, 'x')
  const child = Bun.spawn(['bun', 'src/main.ts', 'serve', '--port', '0', '--host', '127.0.0.1'], {
    cwd: ROOT,
    env: {
      ...process.env,
      ALMANAC_STATE_DIR: `${file}/state`,
      ALMANAC_API_KEYS: 'state-key-0123456789',
      ALMANAC_ACCESS_LOG: 'false',
      ALMANAC_SHUTDOWN_DELAY: '0',
    },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [code, stderr] = await Promise.all([child.exited, new Response(child.stderr).text()])
  expect(code).toBe(1)
  expect(stderr.trim().split('\n')).toHaveLength(1)
  expect(stderr).toContain(`almanac: ALMANAC_STATE_DIR: cannot open ${file}/state/keys.sqlite`)
  expect(stderr).not.toContain('listening')
}, 30_000)

test('keys left in keys.sqlite when ALMANAC_KEY_STORE follows a Redis quota store: a warning with their count', async () => {
  const { openKeyStore } = await import('../../src/stores/keys.ts')
  const dir = tempDir()
  const old = openKeyStore(dir)
  for (const name of ['one', 'two', 'gone']) old.create({ name, plan: null })
  old.revoke('gone')
  old.close()
  // Redis is dialled on the first request that needs it, so an address nobody answers at is enough here.
  const child = Bun.spawn(['bun', 'src/main.ts', 'serve', '--port', '0', '--host', '127.0.0.1'], {
    cwd: ROOT,
    env: {
      ...process.env,
      ALMANAC_STATE_DIR: dir,
      ALMANAC_QUOTA_STORE: 'redis://127.0.0.1:9',
      ALMANAC_ACCESS_LOG: 'false',
      ALMANAC_SHUTDOWN_DELAY: '0',
    },
    stdout: 'ignore',
    stderr: 'pipe',
  })
  let seen = ''
  const decoder = new TextDecoder()
  for await (const chunk of child.stderr as ReadableStream<Uint8Array>) {
    seen += decoder.decode(chunk)
    if (seen.includes('"msg":"listening"')) break
  }
  child.kill('SIGTERM')
  await child.exited
  const warning = seen.split('\n').find((l) => l.includes('keys.sqlite'))
  expect(JSON.parse(warning!)).toMatchObject({
    level: 'warn',
    msg: expect.stringContaining('the 2 active key(s) in keys.sqlite are not accepted; set ALMANAC_KEY_STORE=sqlite'),
  })
}, 30_000)
