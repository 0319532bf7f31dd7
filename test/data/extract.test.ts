/**
 * The executable's first start, without compiling: embedded artifacts (here plain files, one zstd
 * compressed) are extracted once into `<root>/<key>`, atomically, checked by sha256; an unusable
 * directory is a clear DataDirError, never a crash.
 */
import { afterAll, afterEach, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { registerEmbeddedData, type EmbeddedData } from '../../src/data/embedded.ts'
import { cacheRoot, DataDirError, extractEmbedded, isExtracted, startExtraction } from '../../src/data/extract.ts'
import { currentManifest, resolveDataDir } from '../../src/data/open.ts'

const tmp = mkdtempSync(join(tmpdir(), 'almanac-extract-'))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))
afterEach(() => registerEmbeddedData(undefined))

const sha = (b: Uint8Array | string) => createHash('sha256').update(b).digest('hex')

/** A fake embedding: a 1 MB compressible artifact stored zstd, a tiny one raw, and a manifest. */
function embedding(name = 'emb'): EmbeddedData {
  const dir = join(tmp, name)
  mkdirSync(join(dir, 'sub'), { recursive: true })
  const big = Buffer.from(Array.from({ length: 40_000 }, (_, i) => `row ${i} ${i % 13}\n`).join(''))
  writeFileSync(join(dir, 'big.db.zst'), Bun.zstdCompressSync(big))
  writeFileSync(join(dir, 'tiny.json'), '{"ok":true}')
  const manifest = {
    generated: 'x',
    datasets: {
      demo: {
        id: 'demo',
        version: '5',
        date: '2026-05-05',
        built: '2026-05-06T00:00:00.000Z',
        revision: 1,
        inputs: '',
        sources: [],
        counts: { rows: 40000 },
        artifacts: [],
      },
    },
  }
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest))
  return {
    key: `k${sha(name).slice(0, 8)}`,
    manifest: join(dir, 'manifest.json'),
    files: [
      { name: 'demo/big.db', path: join(dir, 'big.db.zst'), bytes: big.length, sha256: sha(big), encoding: 'zstd' },
      { name: 'tiny.json', path: join(dir, 'tiny.json'), bytes: 11, sha256: sha('{"ok":true}'), encoding: 'raw' },
    ],
  }
}

describe('extractEmbedded', () => {
  test('writes every artifact, decompressed, plus the manifest, into <root>/<key>; once', async () => {
    const data = embedding('once')
    const root = join(tmp, 'root-once')
    const lines: string[] = []
    const dir = await extractEmbedded(data, root, (l) => lines.push(l))
    expect(dir).toBe(join(root, data.key))
    expect(sha(readFileSync(join(dir, 'demo/big.db')))).toBe(data.files[0]!.sha256)
    expect(readFileSync(join(dir, 'tiny.json'), 'utf8')).toBe('{"ok":true}')
    expect(JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')).datasets.demo.version).toBe('5')
    expect(lines[0]).toContain(`extracting 2 artifacts`)
    const mtime = statSync(join(dir, 'demo/big.db')).mtimeMs
    lines.length = 0
    await Bun.sleep(5)
    expect(await extractEmbedded(data, root, (l) => lines.push(l))).toBe(dir)
    expect(lines).toEqual([])
    expect(statSync(join(dir, 'demo/big.db')).mtimeMs).toBe(mtime)
    expect(readdirSync(root)).toEqual([data.key])
  })

  test('a damaged extraction (a truncated file) is replaced whole', async () => {
    const data = embedding('damaged')
    const root = join(tmp, 'root-damaged')
    const dir = await extractEmbedded(data, root)
    truncateSync(join(dir, 'demo/big.db'), 100)
    expect(isExtracted(dir, data)).toBe(false)
    await extractEmbedded(data, root)
    expect(sha(readFileSync(join(dir, 'demo/big.db')))).toBe(data.files[0]!.sha256)
    expect(readdirSync(root)).toEqual([data.key])
  })

  test('an embedded artifact that does not match its sha256 fails clearly and leaves nothing behind', async () => {
    const data = embedding('corrupt')
    data.files[1]!.sha256 = '0'.repeat(64)
    const root = join(tmp, 'root-corrupt')
    const error = await extractEmbedded(data, root).catch((e) => e)
    expect(error).toBeInstanceOf(DataDirError)
    expect(error.message).toContain('The embedded artifact tiny.json is damaged')
    expect(readdirSync(root)).toEqual([])
  })

  test('each artifact can be waited for alone; the manifest comes last; what was checked while written is listed', async () => {
    const data = embedding('each')
    const root = join(tmp, 'root-each')
    const extraction = startExtraction(data, root)
    expect(extraction.writing).toBe(true)
    await extraction.artifact('tiny.json')
    expect(readFileSync(join(extraction.dir, 'tiny.json'), 'utf8')).toBe('{"ok":true}')
    expect(extraction.verified.has('tiny.json')).toBe(true)
    await extraction.done
    expect(existsSync(join(extraction.dir, 'manifest.json'))).toBe(true)
    expect([...extraction.verified].sort()).toEqual(['demo/big.db', 'tiny.json'])
    // No temporary file is left beside the artifacts.
    expect(readdirSync(extraction.dir, { recursive: true }).sort()).toEqual(['demo', 'demo/big.db', 'manifest.json', 'tiny.json'])
    const again = startExtraction(data, root)
    expect(again.writing).toBe(false)
    expect(again.verified.size).toBe(0)
  })

  test('a failing artifact takes back the ones extracted beside it: no partial file, no folder that looks finished', async () => {
    const data = embedding('partial')
    data.files[0]!.sha256 = '0'.repeat(64) // the large one fails after the tiny one is in place
    const root = join(tmp, 'root-partial')
    const extraction = startExtraction(data, root)
    await extraction.artifact('tiny.json')
    const error = await extraction.done.catch((e) => e)
    expect(error).toBeInstanceOf(DataDirError)
    expect(error.message).toContain('The embedded artifact demo/big.db is damaged')
    expect(await extraction.artifact('demo/big.db').catch((e) => e)).toBe(error)
    expect(readdirSync(root)).toEqual([])
  })

  test('two processes starting at once end with one complete folder', async () => {
    const data = embedding('race')
    const root = join(tmp, 'root-race')
    const [a, b] = await Promise.all([extractEmbedded(data, root), extractEmbedded(data, root)])
    expect(a).toBe(b)
    expect(isExtracted(a, data)).toBe(true)
    expect(readdirSync(root)).toEqual([data.key])
  })

  test('a directory that cannot be created is a DataDirError that says what to do', async () => {
    writeFileSync(join(tmp, 'a-file'), '')
    const notDir = await extractEmbedded(embedding('nd'), join(tmp, 'a-file', 'cache')).catch((e) => e)
    expect(notDir).toBeInstanceOf(DataDirError)
    expect(notDir.message).toContain(
      `Cannot create the dataset directory ${join(tmp, 'a-file', 'cache')} (a path component is a file, not a directory)`,
    )
    expect(notDir.message).toContain('Set ALMANAC_DATA_DIR to a writable directory')
    // sysfs refuses mkdir even to root: an unwritable place on any Linux machine.
    const denied = await extractEmbedded(embedding('denied'), '/sys/almanac-test-cache').catch((e) => e)
    expect(denied).toBeInstanceOf(DataDirError)
    expect(denied.message).toMatch(
      /Cannot create the dataset directory \/sys\/almanac-test-cache \((permission denied|the file system is read-only)\)/,
    )
  })

  test('an already-extracted folder is reused without a single write (so a read-only deployment works)', async () => {
    const data = embedding('ro')
    const root = join(tmp, 'root-ro')
    const dir = await extractEmbedded(data, root)
    // Creating or removing anything in root (a temp folder) would change its mtime.
    const before = [statSync(root).mtimeMs, statSync(dir).mtimeMs]
    await Bun.sleep(10)
    const lines: string[] = []
    await extractEmbedded(data, root, (l) => lines.push(l))
    expect(lines).toEqual([])
    expect([statSync(root).mtimeMs, statSync(dir).mtimeMs]).toEqual(before)
  })
})

describe('resolveDataDir and cacheRoot', () => {
  test('cache root: ALMANAC_DATA_DIR, else XDG_CACHE_HOME/almanac, else ~/.cache/almanac', () => {
    expect(cacheRoot({ XDG_CACHE_HOME: '/x/cache', HOME: '/home/a' }, '/data')).toBe('/data')
    expect(cacheRoot({ XDG_CACHE_HOME: '/x/cache', HOME: '/home/a' })).toBe('/x/cache/almanac')
    expect(cacheRoot({ HOME: '/home/a' })).toBe('/home/a/.cache/almanac')
  })

  test('in the executable, datasets are extracted under ALMANAC_DATA_DIR and opened from there', async () => {
    const data = embedding('exe')
    registerEmbeddedData(data)
    const root = join(tmp, 'root-exe')
    const lines: string[] = []
    const dir = await resolveDataDir({ dataDir: root, env: {} }, (l) => lines.push(l))
    expect(dir.dir).toBe(join(root, data.key))
    expect(dir.manifest.datasets.demo?.version).toBe('5')
    expect(dir.has('demo/big.db')).toBe(true)
    // Every line in the one log format (lib/logger.ts): time, level, msg.
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({
      level: 'info',
      msg: `datasets: serving the embedded datasets from ${join(root, data.key)}`,
    })
    const xdg = await resolveDataDir({ env: { XDG_CACHE_HOME: join(tmp, 'xdg') } }, () => {})
    expect(xdg.dir).toBe(join(tmp, 'xdg', 'almanac', data.key))
  })

  test('an ALMANAC_DATA_DIR holding a manifest.json is served as it is (newer datasets, same executable)', async () => {
    registerEmbeddedData(embedding('override'))
    const built = join(tmp, 'built-elsewhere')
    mkdirSync(built, { recursive: true })
    writeFileSync(join(built, 'manifest.json'), JSON.stringify({ generated: 'y', datasets: { demo: { id: 'demo', version: '6' } } }))
    const lines: string[] = []
    const dir = await resolveDataDir({ dataDir: built, env: {} }, (l) => lines.push(l))
    expect(dir.dir).toBe(built)
    expect(dir.manifest.datasets.demo?.version).toBe('6')
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual([
      `datasets: using ${built} (it holds a manifest.json); the embedded datasets are not used`,
    ])
    expect(existsSync(join(built, 'k'))).toBe(false)
    expect(currentManifest({ dataDir: built }).manifest.datasets.demo?.version).toBe('6')
  })

  test('currentManifest reads the embedded manifest without extracting', () => {
    const data = embedding('peek')
    registerEmbeddedData(data)
    expect(currentManifest({})).toEqual({ manifest: JSON.parse(readFileSync(data.manifest, 'utf8')), from: 'embedded' })
  })

  test('a source run reads ALMANAC_DATA_DIR as it is and says when it holds no datasets', async () => {
    const lines: string[] = []
    const empty = join(tmp, 'empty-data')
    const dir = await resolveDataDir({ dataDir: empty, env: {} }, (l) => lines.push(l))
    expect(dir.dir).toBe(empty)
    expect(dir.manifest.datasets).toEqual({})
    expect(lines[0]).toContain(`datasets: ${empty} holds no manifest.json`)
  })
})
