/**
 * `almanac state backup | restore` against real servers: a server keeps creating keys and spending credits
 * while `state backup` copies its state dir; the backup goes into a fresh dir, and a server started there
 * accepts the keys of the backup (and refuses those made after its snapshot), reports the same usage, and
 * has the same QR signing key and active-data pointer. Restore refuses the dir of a running server, and
 * over a dir a killed server left (a WAL beside its databases) it leaves nothing of the old state.
 * The data dir is empty: hash and QR need no dataset, and nothing else is asked.
 */
import { expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { recordActivated } from '../../src/data/activation.ts'
import { waitFor } from '../support/redis-topologies.ts'
import { cli, servedProcesses } from '../support/served.ts'
import { tempDirs } from '../support/temp.ts'

const serve = servedProcesses()
const tempDir = tempDirs('almanac-state-')
const data = tempDir()
const env = (state: string) => ({
  ALMANAC_STATE_DIR: state,
  ALMANAC_DATA_DIR: data,
  ALMANAC_QUOTA_STORE: 'sqlite',
  ALMANAC_KEY_STORE: 'sqlite',
})

async function createKey(name: string, state: string): Promise<string> {
  const made = await cli(['keys', 'create', '--name', name], env(state))
  expect({ name, code: made.code, err: made.code ? made.err : '' }).toEqual({ name, code: 0, err: '' })
  return made.out.trim()
}

const sha256 = (url: string, key: string) =>
  fetch(`${url}/api/v1/hash/sha256`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ input: 'backup' }),
  })

/** The hash requests and credits the server reports for `key` over the last 90 days (with the rows the server has not yet written). */
async function hashUsage(url: string, key: string) {
  const res = await fetch(`${url}/api/v1/usage?days=90`, { headers: { 'x-api-key': key, 'x-response-form': 'bare' } })
  expect(res.status).toBe(200)
  const body = (await res.json()) as { days: { domains: { domain: string; requests: number; credits: number }[] }[] }
  const hash = body.days.flatMap((d) => d.domains).filter((d) => d.domain === 'hash')
  return { requests: hash.reduce((n, d) => n + d.requests, 0), credits: hash.reduce((n, d) => n + d.credits, 0) }
}

const keyNames = (state: string) => {
  const db = new Database(join(state, 'keys.sqlite'), { readonly: true })
  try {
    return (db.query('SELECT name FROM api_keys').all() as { name: string }[]).map((r) => r.name).sort()
  } finally {
    db.close()
  }
}

test('a backup taken while a server writes restores into a fresh dir that a server serves with the same keys and usage', async () => {
  const stateA = tempDir()
  const a = await serve([], env(stateA))
  const before = await createKey('before', stateA)
  for (let i = 0; i < 5; i++) expect((await sha256(a.url, before)).status).toBe(200)
  // A png makes the QR signing key; the pointer is what `almanac data activate` records.
  const qr = await fetch(`${a.url}/api/v1/qr/text`, {
    method: 'POST',
    headers: { 'x-api-key': before, 'content-type': 'application/json' },
    body: JSON.stringify({ text: 'backup', format: 'png' }),
  })
  expect(qr.status).toBe(200)
  recordActivated(stateA, data)
  const usageBefore = await hashUsage(a.url, before)
  expect(usageBefore).toEqual({ requests: 5, credits: 5 })
  // The route reads without writing: the backup below must find the ledger's rows in usage.sqlite.
  await waitFor('the ledger written', async () => /^almanac_usage_pending_rows 0$/m.test(await (await fetch(`${a.url}/metrics`)).text()))

  // While the backup runs, keys keep being created and another key keeps spending.
  const busy = await createKey('busy', stateA)
  const during: { name: string; key: string }[] = []
  let backingUp = true
  const writer = (async () => {
    while (backingUp) {
      const name = `during-${during.length}`
      during.push({ name, key: await createKey(name, stateA) })
      expect((await sha256(a.url, busy)).status).toBe(200)
    }
  })()
  const backupDir = join(tempDir(), 'backup')
  const backup = await cli(['state', 'backup', '--to', backupDir], env(stateA))
  backingUp = false
  await writer
  expect({ code: backup.code, err: backup.err }).toEqual({ code: 0, err: '' })
  for (const name of [
    'keys.sqlite',
    'usage.sqlite',
    'quota.sqlite',
    'qr-shares.sqlite',
    'qr-signing-key',
    'active-data',
    'previous-data',
    'backup.json',
  ])
    expect({ name, there: existsSync(join(backupDir, name)) }).toEqual({ name, there: true })

  // Not over the running server's state.
  const refused = await cli(['state', 'restore', '--from', backupDir], env(stateA))
  expect(refused.code).toBe(1)
  expect(refused.err).toContain(`pid ${a.child.pid}`)
  expect(keyNames(stateA)).toContain(`during-${during.length - 1}`)

  const stateC = join(tempDir(), 'state')
  const restored = await cli(['state', 'restore', '--from', backupDir], env(stateC))
  expect({ code: restored.code, err: restored.err }).toEqual({ code: 0, err: '' })
  expect(readFileSync(join(stateC, 'qr-signing-key'), 'utf8')).toBe(readFileSync(join(stateA, 'qr-signing-key'), 'utf8'))
  expect(readFileSync(join(stateC, 'active-data'), 'utf8')).toBe(readFileSync(join(stateA, 'active-data'), 'utf8'))

  const c = await serve([], env(stateC))
  expect(await hashUsage(c.url, before)).toEqual(usageBefore)
  expect((await sha256(c.url, before)).status).toBe(200)
  expect((await sha256(c.url, busy)).status).toBe(200)
  // keys.sqlite is one snapshot: the keys made during the backup that it holds are the first ones, and each works.
  const names = new Set(keyNames(stateC))
  const kept = during.filter((d) => names.has(d.name))
  expect(kept.map((d) => d.name)).toEqual(during.slice(0, kept.length).map((d) => d.name))
  for (const d of during)
    expect({ name: d.name, status: (await sha256(c.url, d.key)).status }).toEqual({ name: d.name, status: names.has(d.name) ? 200 : 401 })
  // The busy key's usage in the backup is a snapshot too: no more than the server had counted once the writer stopped.
  const busyOnA = await hashUsage(a.url, busy)
  const busyOnC = await hashUsage(c.url, busy)
  expect(busyOnC.requests - 1).toBeLessThanOrEqual(busyOnA.requests)
  expect(await a.stop()).toBe(0)
  expect(await c.stop()).toBe(0)
}, 120_000)

test('restore over the state a killed server left: the databases are the backup, nothing of the old WAL comes back', async () => {
  const state = tempDir()
  const first = await serve([], env(state))
  const kept = await createKey('kept', state)
  const backupDir = join(tempDir(), 'backup')
  expect((await cli(['state', 'backup', '--to', backupDir], env(state))).code).toBe(0)
  // A full backup folder is not overwritten.
  const again = await cli(['state', 'backup', '--to', backupDir], env(state))
  expect(again.code).toBe(1)
  expect(again.err).toContain('not empty')
  const later = await createKey('later', state)
  expect((await sha256(first.url, later)).status).toBe(200)
  first.child.kill('SIGKILL')
  await first.child.exited
  expect(existsSync(join(state, 'keys.sqlite-wal'))).toBe(true)

  const restored = await cli(['state', 'restore', '--from', backupDir], env(state))
  expect({ code: restored.code, err: restored.err }).toEqual({ code: 0, err: '' })
  expect(keyNames(state)).toEqual(['kept'])
  const second = await serve([], env(state))
  expect((await sha256(second.url, kept)).status).toBe(200)
  expect((await sha256(second.url, later)).status).toBe(401)
  expect(await second.stop()).toBe(0)
}, 60_000)

test('restore refuses a folder without a complete backup', async () => {
  const folder = tempDir()
  const res = await cli(['state', 'restore', '--from', folder], env(tempDir()))
  expect(res.code).toBe(1)
  expect(res.err).toContain('backup.json')
})
