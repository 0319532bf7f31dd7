/** The local store's sweeper and bookkeeping, on a real folder with an injected clock. */
import { expect, test } from 'bun:test'
import { existsSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createLocalStore } from '../../../src/domains/qr/local-store.ts'
import { createSigner } from '../../../src/domains/qr/signing.ts'
import { tempDirs } from '../../support/temp.ts'
import { qrApp } from './harness.ts'

const tempDir = tempDirs('almanac-qr-store-')

const T0 = 2_000_000_000_000
function store(maxBytes = 1 << 20) {
  const dir = tempDir()
  const clock = { ms: T0 }
  const fsClock = { ms: Date.now() }
  const s = createLocalStore({ dir, maxBytes, signer: createSigner('s'.repeat(32), dir), now: () => clock.ms, fsNow: () => fsClock.ms })
  return { s, dir, clock, fsClock }
}
const name = (c: string, ext = 'png') => `${c.repeat(64)}.${ext}`
const object = (c: string, size = 10) => ({ name: name(c), bytes: new Uint8Array(size), contentType: 'image/png' })

test('the sweeper deletes expired objects and stale temp files, keeps live ones and foreign files', async () => {
  const { s, dir, clock, fsClock } = store()
  await s.put(object('a'), T0 / 1000 + 60)
  await s.put(object('b'), T0 / 1000 + 3600)
  writeFileSync(join(dir, 'README'), 'not ours')
  writeFileSync(join(dir, '.tmp-1-crashed'), 'half')
  expect(s.bytes).toBe(20)
  clock.ms = T0 + 60_000
  expect(await s.sweep()).toEqual({ deleted: 1, objects: 1, bytes: 10 })
  expect(readdirSync(dir).sort()).toEqual(['.tmp-1-crashed', 'README', name('b')])
  // A temp file is left alone for 10 minutes (a write may be in flight), then swept.
  fsClock.ms += 11 * 60_000
  await s.sweep()
  expect(readdirSync(dir).sort()).toEqual(['README', name('b')])
})

test('an expired object asked for again is written afresh', async () => {
  const { s, dir, clock } = store()
  await s.put(object('c'), T0 / 1000 + 60)
  clock.ms = T0 + 120_000
  await s.put(object('c'), T0 / 1000 + 600)
  expect(readdirSync(dir)).toEqual([name('c')])
  clock.ms = T0 + 300_000
  expect((await s.sweep()).objects).toBe(1)
})

test('the byte ceiling counts what is stored, and sweeping makes room again', async () => {
  const { s, clock } = store(25)
  await s.put(object('d'), T0 / 1000 + 60)
  await s.put(object('e'), T0 / 1000 + 600)
  await expect(s.put(object('f'), T0 / 1000 + 600)).rejects.toMatchObject({ kind: 'unavailable' })
  clock.ms = T0 + 61_000
  await s.put(object('f'), T0 / 1000 + 600) // the put sweeps d away before refusing
  expect(s.bytes).toBe(20)
})

test('a link whose object is gone is a 404 problem', async () => {
  const app = await qrApp()
  try {
    const { body } = await app.json('POST', '/api/v1/qr/text', { body: { text: 'gone' }, form: 'bare' })
    const dir = join(app.stateDir, 'qr')
    for (const f of readdirSync(dir)) rmSync(join(dir, f))
    const res = await app.download(body.url)
    expect(res.status).toBe(404)
    expect(existsSync(dir)).toBe(true)
  } finally {
    await app.close()
  }
})

test('mtime is the expiry: a file made by hand with a future mtime is kept', async () => {
  const { s, dir, clock } = store()
  writeFileSync(join(dir, name('9')), 'x')
  utimesSync(join(dir, name('9')), T0 / 1000 + 10, T0 / 1000 + 10)
  expect(await s.sweep()).toEqual({ deleted: 0, objects: 1, bytes: 1 })
  clock.ms = T0 + 10_000
  expect((await s.sweep()).deleted).toBe(1)
})

test('a sweep over many files lets other work run in between, and one sweep at a time', async () => {
  const { s, dir, clock } = store()
  for (let i = 0; i < 1000; i++) {
    const file = join(dir, `${i.toString(16).padStart(64, '0')}.png`)
    writeFileSync(file, 'x')
    utimesSync(file, T0 / 1000 + 1, T0 / 1000 + 1)
  }
  clock.ms = T0 + 2000
  const order: string[] = []
  const pass = s.sweep().then((r) => (order.push('sweep done'), r))
  expect(s.sweep()).toBe(s.sweep()) // a second caller shares the running pass
  setImmediate(() => order.push('other work'))
  expect((await pass).deleted).toBe(1000)
  expect(order).toEqual(['other work', 'sweep done'])
  expect(readdirSync(dir)).toEqual([])
})
