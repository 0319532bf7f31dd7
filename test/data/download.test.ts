/**
 * Downloads an operator can watch, against loopback upstreams: one that accepts connections and never
 * answers, one that goes silent after the headers, one that sends its file slowly in pieces, one that
 * fails twice (503) before it serves, and one that says 404. Deadlines and back-off are parameters set
 * short here; nothing is timed in the assertions: they read what was logged, thrown and counted.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { createServer, type Server, type Socket } from 'node:net'
import { join } from 'node:path'
import { buildDatasets } from '../../src/data/build.ts'
import { download } from '../../src/data/download.ts'
import type { Source } from '../../src/data/types.ts'
import type { Domain } from '../../src/domains/types.ts'
import { formatBytes } from '../../src/lib/progress.ts'
import { tempDirs } from '../support/temp.ts'

const tempDir = tempDirs('almanac-download-')
const BODY = new Uint8Array(5000).map((_, i) => (i * 7) % 251)
const SHA = createHash('sha256').update(BODY).digest('hex')

const source = (id: string, sha256?: string): Source => ({
  id,
  version: '1',
  date: '2026-01-01',
  url: `https://upstream.example/files/${id}.bin`,
  ...(sha256 ? { sha256 } : {}),
  license: 'CC0-1.0',
  attribution: 'test',
})

/** Accepts connections and never writes a byte. */
let silent: Server
const sockets: Socket[] = []
let silentConnections = 0
let http: ReturnType<typeof Bun.serve>
const hits = new Map<string, number>()
let stalled: (() => void)[] = []

beforeAll(async () => {
  silent = createServer((socket) => {
    silentConnections++
    sockets.push(socket)
  })
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  http = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(req) {
      const name = new URL(req.url).pathname.split('/').pop()!.replace('.bin', '')
      const n = (hits.get(name) ?? 0) + 1
      hits.set(name, n)
      if (name === 'flaky' && n <= 2) return new Response('busy', { status: 503 })
      if (name === 'flaky') return new Response(BODY)
      if (name === 'gone') return new Response('not here', { status: 404 })
      if (name === 'slow' || name === 'stalls') {
        // Five pieces, each sent when the previous one was read; `stalls` sends one and then nothing.
        let i = 0
        const stream = new ReadableStream<Uint8Array>({
          async pull(c) {
            if (name === 'stalls' && i === 1) return new Promise<void>((resolve) => stalled.push(resolve))
            if (i === 5) return c.close()
            await Bun.sleep(5)
            c.enqueue(BODY.slice(i * 1000, ++i * 1000))
          },
        })
        return new Response(stream, { headers: { 'content-length': String(BODY.length) } })
      }
      return new Response('?', { status: 400 })
    },
  })
})
afterAll(() => {
  for (const s of sockets) s.destroy()
  silent?.close()
  for (const r of stalled) r()
  stalled = []
  http?.stop(true)
})

const httpBase = () => `http://127.0.0.1:${http.port}`
const silentBase = () => `http://127.0.0.1:${(silent.address() as { port: number }).port}`

describe('download', () => {
  test('a server that never answers: a short connect deadline, a few tries, then which source and how to supply it', async () => {
    const lines: string[] = []
    const dir = tempDir()
    const s = source('never')
    const error = await download(s, join(dir, 'never.bin'), (l) => lines.push(l), {
      base: silentBase(),
      connectTimeoutMs: 150,
      timeoutMs: 60_000,
      tries: 3,
      backoffMs: 1,
    }).catch((e: Error) => e)
    expect(error).toBeInstanceOf(Error)
    const message = (error as Error).message
    expect(message).toContain('3 tries failed')
    expect(message).toContain('no answer within 0.1 s')
    expect(message).toContain(`To supply never by hand: download ${s.url} yourself`)
    expect(message).toContain('$ALMANAC_MIRROR/upstream/never/never.bin')
    expect(message).toContain('almanac data fetch --to DIR')
    expect(silentConnections).toBe(3)
    expect(lines.filter((l) => l.includes('trying again'))).toHaveLength(2)
    expect(readdirSync(dir)).toEqual([]) // no .part left behind
  })

  test('a file that arrives slowly shows bytes, share and rate as it comes', async () => {
    const lines: string[] = []
    const path = join(tempDir(), 'slow.bin')
    const sha = await download(source('slow', SHA), path, (l) => lines.push(l), {
      base: httpBase(),
      connectTimeoutMs: 5_000,
      tty: false,
      progressEveryMs: 0,
    })
    expect(sha).toBe(SHA)
    expect(readFileSync(path)).toEqual(Buffer.from(BODY))
    const progress = lines.filter((l) => l.startsWith('slow: ') && !l.includes('downloading'))
    // A streamed answer has no length: bytes so far and the rate.
    expect(progress.length).toBeGreaterThanOrEqual(2) // as pieces arrive (the network may join some), and the last
    for (const l of progress) expect(l).toMatch(/^slow: [\d.]+ kB \([\d.]+ (B|kB|MB)\/s\)$/)
    expect(progress.at(-1)).toMatch(/^slow: 5\.00 kB \([\d.]+ (B|kB|MB)\/s\)$/)
  })

  test('with a Content-Length, the share of the file and an ETA', async () => {
    const lines: string[] = []
    hits.set('flaky', 2) // serves at once
    await download(source('flaky', SHA), join(tempDir(), 'sized.bin'), (l) => lines.push(l), {
      base: httpBase(),
      tty: false,
      progressEveryMs: 0,
    })
    expect(lines.filter((l) => l.includes('/s')).at(-1)).toMatch(/^flaky: 5\.00 kB\/5\.00 kB 100% [\d.]+ (B|kB|MB)\/s ETA 0s$/)
    hits.delete('flaky')
  })

  test('a server that goes silent after the headers is given up on the connect deadline, not the whole-file one', async () => {
    const error = await download(source('stalls'), join(tempDir(), 'stalls.bin'), () => {}, {
      base: httpBase(),
      connectTimeoutMs: 150,
      timeoutMs: 600_000,
      tries: 1,
    }).catch((e: Error) => e)
    expect((error as Error).message).toContain('no data for 0.1 s')
    expect((error as Error).message).not.toContain('tries failed')
  })

  test('a server that fails twice then serves: tried again with back-off, the file kept', async () => {
    const lines: string[] = []
    const path = join(tempDir(), 'flaky.bin')
    const sha = await download(source('flaky', SHA), path, (l) => lines.push(l), { base: httpBase(), tries: 3, backoffMs: 1 })
    expect(sha).toBe(SHA)
    expect(hits.get('flaky')).toBe(3)
    expect(lines.filter((l) => l.includes('answered HTTP 503; trying again'))).toHaveLength(2)
    expect(lines.some((l) => l.includes('(try 3 of 3)'))).toBe(true)
    expect(existsSync(path)).toBe(true)
  })

  test('a 404 is not tried again', async () => {
    const error = await download(source('gone'), join(tempDir(), 'gone.bin'), () => {}, { base: httpBase(), tries: 3, backoffMs: 1 }).catch(
      (e: Error) => e,
    )
    expect((error as Error).message).toContain('answered HTTP 404')
    expect((error as Error).message).toContain('To supply gone by hand')
    expect(hits.get('gone')).toBe(1)
  })

  test('bytes are shown in decimal units', () => {
    expect([999, 1000, 12_345, 1_234_567, 2_500_000_000].map(formatBytes)).toEqual(['999 B', '1.00 kB', '12.3 kB', '1.23 MB', '2.50 GB'])
  })
})

test('data build against an upstream that never answers fails that dataset naming the source, its URL and where to put it', async () => {
  const s = source('moon-table')
  const domain = {
    name: 'moons',
    builders: [{ id: 'moons', sources: [s.id], artifacts: ['moons.txt'], revision: 1, build: async () => ({ counts: {} }) }],
  } as unknown as Domain
  const lines: string[] = []
  const error = await buildDatasets([domain], {
    outDir: tempDir(),
    mirror: tempDir(),
    offline: false,
    upstreamBase: silentBase(),
    downloads: { connectTimeoutMs: 100, tries: 2, backoffMs: 1 },
    sources: () => s,
    log: (l) => lines.push(l),
  }).catch((e: Error) => e)
  const message = (error as Error).message
  expect(message).toContain('1 dataset failed to build')
  expect(message).toContain('Source moon-table (1, 2026-01-01) is missing')
  expect(message).toContain('2 tries failed: ')
  expect(message).toContain(`download ${s.url} yourself and put it at $ALMANAC_MIRROR/upstream/moon-table/moon-table.bin`)
  expect(lines.some((l) => l.startsWith('moon-table: downloading '))).toBe(true)
})
