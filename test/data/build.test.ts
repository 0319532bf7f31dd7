/**
 * The dataset build runner with small builders of the test's own (no real domain): incremental by
 * content, deterministic, atomic on failure, clear about missing sources, `--only` and `--force`.
 */
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildDatasets, DatasetBuildError } from '../../src/data/build.ts'
import { verifyDataDir } from '../../src/data/verify.ts'
import type { DatasetBuilder, Source } from '../../src/data/types.ts'
import { defineDomain, type Domain } from '../../src/domains/types.ts'
import { progress } from '../../src/lib/progress.ts'

const tmp = mkdtempSync(join(tmpdir(), 'almanac-build-'))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

const sha = (bytes: string | Buffer) => createHash('sha256').update(bytes).digest('hex')

let mirror: string
let out: string
let runs: Record<string, number>
let lines: string[]
const log = (l: string) => lines.push(l)

const SOURCES: Record<string, Source> = {
  words: {
    id: 'words',
    version: '1.0',
    date: '2026-01-02',
    mirror: 'words/words.txt',
    license: 'CC-BY-4.0',
    attribution: 'Words by Example Org, CC BY 4.0',
    duties: 'Credit Example Org.',
  },
  numbers: {
    id: 'numbers',
    version: '7',
    date: '2025-12-31',
    mirror: 'numbers.txt',
    npm: { package: 'almanac-no-such-package', path: 'numbers.txt' },
    url: 'https://example.invalid/numbers.txt',
    license: 'ODbL-1.0',
    attribution: '© Numbers contributors, ODbL',
  },
  pinned: {
    id: 'pinned',
    version: '1',
    date: '2026-02-02',
    mirror: 'words/words.txt',
    sha256: '0'.repeat(64),
    license: 'MIT',
    attribution: 'Pinned',
  },
}
const lookup = (id: string) => {
  const s = SOURCES[id]
  if (!s) throw new Error(`no source ${id}`)
  return s
}

/** Upper-cases every line of its source into `<id>.txt`, sorted, so the output depends only on the input. */
const upper = (id: string, source: string, extra: Partial<DatasetBuilder> = {}): DatasetBuilder => ({
  id,
  sources: [source],
  artifacts: [`${id}.txt`],
  revision: 1,
  async build(ctx) {
    runs[id] = (runs[id] ?? 0) + 1
    const input = readFileSync((await ctx.source(source)).path, 'utf8')
      .split('\n')
      .filter(Boolean)
    const p = ctx.progress('lines', input.length)
    for (const _ of input) p.tick()
    p.done()
    await Bun.sleep(5)
    writeFileSync(
      ctx.out(`${id}.txt`),
      input
        .map((l) => l.toUpperCase())
        .sort()
        .join('\n') + '\n',
    )
    return { counts: { lines: input.length } }
  },
  ...extra,
})

const domain = (name: string, builders: DatasetBuilder[]): Domain =>
  defineDomain({ name, prefixes: [`/${name}`], datasets: builders.map((b) => b.id), open: () => null, routes: () => null as any, builders })

const build = (domains: Domain[], o: Parameters<typeof buildDatasets>[1] = {}) =>
  buildDatasets(domains, { outDir: out, mirror, sources: lookup, log, offline: true, ...o })

beforeEach(() => {
  const dir = mkdtempSync(join(tmp, 'case-'))
  mirror = join(dir, 'mirror')
  out = join(dir, 'out')
  mkdirSync(join(mirror, 'words'), { recursive: true })
  writeFileSync(join(mirror, 'words/words.txt'), 'pear\napple\nfig\n')
  writeFileSync(join(mirror, 'numbers.txt'), 'one\ntwo\n')
  runs = {}
  lines = []
})

describe('data build', () => {
  test('writes artifacts and a manifest with versions, dates, counts, sha256, licence and attribution', async () => {
    const manifest = await build([domain('alpha', [upper('alpha', 'words')])])
    const body = readFileSync(join(out, 'alpha.txt'))
    expect(body.toString()).toBe('APPLE\nFIG\nPEAR\n')
    const entry = manifest.datasets.alpha!
    expect(entry.version).toBe('1.0')
    expect(entry.date).toBe('2026-01-02')
    expect(entry.counts).toEqual({ lines: 3 })
    expect(entry.artifacts).toEqual([{ name: 'alpha.txt', bytes: body.length, sha256: sha(body) }])
    expect(entry.sources[0]).toMatchObject({
      id: 'words',
      version: '1.0',
      date: '2026-01-02',
      via: 'mirror',
      license: 'CC-BY-4.0',
      duties: 'Credit Example Org.',
      sha256: sha('pear\napple\nfig\n'),
    })
    expect(entry.license).toBe('CC-BY-4.0')
    expect(entry.attribution).toEqual(['Words by Example Org, CC BY 4.0'])
    expect(new Date(entry.built).getTime()).toBeGreaterThan(Date.now() - 60_000)
    expect(JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')).datasets.alpha.inputs).toBe(entry.inputs)
    expect((await verifyDataDir(out)).problems).toEqual([])
  })

  test('unchanged inputs rebuild nothing, even when a source file is touched; changed content rebuilds', async () => {
    const d = [domain('alpha', [upper('alpha', 'words')])]
    await build(d)
    const first = statSync(join(out, 'alpha.txt'))
    const manifestBefore = readFileSync(join(out, 'manifest.json'), 'utf8')
    await build(d)
    expect(runs.alpha).toBe(1)
    expect(lines.at(-2)).toContain('alpha: up to date (3 lines)')
    expect(lines.at(-1)).toBe('datasets: everything is up to date')

    const later = new Date(Date.now() + 120_000)
    utimesSync(join(mirror, 'words/words.txt'), later, later)
    await build(d)
    expect(runs.alpha).toBe(1)
    expect(statSync(join(out, 'alpha.txt')).mtimeMs).toBe(first.mtimeMs)
    expect(readFileSync(join(out, 'manifest.json'), 'utf8')).toBe(manifestBefore)

    writeFileSync(join(mirror, 'words/words.txt'), 'pear\napple\nfig\nkiwi\n')
    const manifest = await build(d)
    expect(runs.alpha).toBe(2)
    expect(manifest.datasets.alpha!.counts).toEqual({ lines: 4 })
  })

  test('a new builder revision, a damaged artifact, or --force rebuilds; the same inputs give the same bytes', async () => {
    await build([domain('alpha', [upper('alpha', 'words')])])
    const sum = sha(readFileSync(join(out, 'alpha.txt')))
    await build([domain('alpha', [upper('alpha', 'words', { revision: 2 })])])
    expect(runs.alpha).toBe(2)
    writeFileSync(join(out, 'alpha.txt'), 'APPLE\nFIG\nPEAX\n')
    await build([domain('alpha', [upper('alpha', 'words', { revision: 2 })])])
    expect(runs.alpha).toBe(3)
    expect(sha(readFileSync(join(out, 'alpha.txt')))).toBe(sum)
    await build([domain('alpha', [upper('alpha', 'words', { revision: 2 })])], { force: true })
    expect(runs.alpha).toBe(4)
    expect(sha(readFileSync(join(out, 'alpha.txt')))).toBe(sum)
    expect(lines.some((l) => l.includes('not deterministic'))).toBe(false)
  })

  test('a builder whose output changes between runs of the same inputs is reported as not deterministic', async () => {
    let n = 0
    const wobbly: DatasetBuilder = {
      ...upper('alpha', 'words'),
      build: async (ctx) => (writeFileSync(ctx.out('alpha.txt'), String(n++)), { counts: {} }),
    }
    await build([domain('alpha', [wobbly])])
    await build([domain('alpha', [wobbly])], { force: true })
    expect(lines.some((l) => l.includes('alpha: warning: alpha.txt differs from the previous build of the same inputs'))).toBe(true)
  })

  test('--only builds the named domains; an unknown name is refused with the list of domains', async () => {
    const ds = [domain('alpha', [upper('alpha', 'words')]), domain('beta', [upper('beta', 'numbers')])]
    await build(ds, { only: ['beta'] })
    expect(runs).toEqual({ beta: 1 })
    expect(existsSync(join(out, 'alpha.txt'))).toBe(false)
    await expect(build(ds, { only: ['gamma'] })).rejects.toThrow('--only: unknown domain gamma (domains: alpha, beta)')
  })

  test('a failing builder leaves the previous artifact and manifest entry untouched and no staging behind', async () => {
    await build([domain('alpha', [upper('alpha', 'words')])])
    const before = readFileSync(join(out, 'alpha.txt'), 'utf8')
    const manifestBefore = readFileSync(join(out, 'manifest.json'), 'utf8')
    const broken = upper('alpha', 'words', {
      revision: 9,
      async build(ctx) {
        writeFileSync(ctx.out('alpha.txt'), 'HALF')
        throw new Error('upstream row 17 is malformed')
      },
    })
    await expect(build([domain('alpha', [broken])])).rejects.toThrow(DatasetBuildError)
    expect(readFileSync(join(out, 'alpha.txt'), 'utf8')).toBe(before)
    expect(readFileSync(join(out, 'manifest.json'), 'utf8')).toBe(manifestBefore)
    expect(readdirSync(out).filter((n) => n.startsWith('.staging'))).toEqual([])
    expect(lines.some((l) => l.includes('alpha: FAILED') && l.includes('upstream row 17 is malformed'))).toBe(true)
  })

  test('a builder that writes an undeclared artifact, or forgets one, fails clearly', async () => {
    const stray = upper('alpha', 'words', { build: async (ctx) => (writeFileSync(ctx.out('other.txt'), ''), { counts: {} }) })
    await expect(build([domain('alpha', [stray])])).rejects.toThrow(
      'builder alpha asked to write other.txt, which is not among its artifacts (alpha.txt)',
    )
    const lazy = upper('alpha', 'words', { build: async () => ({ counts: {} }) })
    await expect(build([domain('alpha', [lazy])])).rejects.toThrow('builder alpha did not write its artifact alpha.txt')
  })

  test('a missing source names the file and every way to supply it; the other datasets still build', async () => {
    rmSync(join(mirror, 'numbers.txt'))
    const ds = [domain('alpha', [upper('alpha', 'words')]), domain('beta', [upper('beta', 'numbers')])]
    const error = await build(ds).catch((e) => e)
    expect(error).toBeInstanceOf(DatasetBuildError)
    const message = (error as Error).message
    expect(message).toContain('1 dataset failed to build')
    expect(message).toContain('Source numbers (7, 2025-12-31) is missing')
    expect(message).toContain(`ALMANAC_MIRROR=${mirror} holds no numbers.txt`)
    expect(message).toContain('npm package almanac-no-such-package is not installed')
    expect(message).toContain('ALMANAC_OFFLINE is set, so https://example.invalid/numbers.txt was not downloaded')
    expect(message).toContain(
      'To supply it: point ALMANAC_MIRROR at a mirror folder holding numbers.txt; or install the npm package almanac-no-such-package ' +
        '(bun install); or let this machine download https://example.invalid/numbers.txt',
    )
    expect(runs).toEqual({ alpha: 1 })
    expect(existsSync(join(out, 'alpha.txt'))).toBe(true)
  })

  test('without ALMANAC_MIRROR the message says so', async () => {
    const error = await build([domain('alpha', [upper('alpha', 'words')])], { mirror: '' }).catch((e) => e)
    expect((error as Error).message).toContain('Source words (1.0, 2026-01-02) is missing: ALMANAC_MIRROR is not set')
  })

  test('a file that does not match its pinned sha256 is refused, naming both hashes', async () => {
    const error = await build([domain('alpha', [upper('alpha', 'pinned')])]).catch((e) => e)
    expect((error as Error).message).toContain(
      `has sha256 ${sha('pear\napple\nfig\n')}, but its domain's sources.ts pins ${'0'.repeat(64)}`,
    )
  })

  test('two builds at once keep both manifest entries (the manifest is merged under a lock)', async () => {
    await Promise.all([build([domain('alpha', [upper('alpha', 'words')])]), build([domain('beta', [upper('beta', 'numbers')])])])
    const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8'))
    expect(Object.keys(manifest.datasets)).toEqual(['alpha', 'beta'])
    expect(existsSync(join(out, '.manifest.lock'))).toBe(false)
  })

  test('a builder killed mid-build in another process leaves no trace after the next build', async () => {
    mkdirSync(join(out, '.staging-alpha-999999999'), { recursive: true })
    writeFileSync(join(out, '.staging-alpha-999999999', 'alpha.txt'), 'HALF')
    await build([domain('alpha', [upper('alpha', 'words')])])
    expect(readdirSync(out).filter((n) => n.startsWith('.staging'))).toEqual([])
  })
})

describe('progress', () => {
  test('plain lines carry the count, total, share and ETA', () => {
    const got: string[] = []
    const p = progress('postal: rows', 200, (l) => got.push(l), false)
    p.tick(50)
    p.done()
    expect(got[0]).toMatch(/^postal: rows: 50\/200 25% ETA \d+s$/)
    expect(got.at(-1)).toMatch(/^postal: rows: 50\/200 25% ETA \d+s$/)
  })

  test('on a terminal the line is a redrawn bar', () => {
    const written: string[] = []
    const original = process.stderr.write
    process.stderr.write = ((s: string) => (written.push(s), true)) as typeof process.stderr.write
    try {
      const p = progress('ip: ranges', 10, () => {}, true)
      p.tick(10)
      p.done()
    } finally {
      process.stderr.write = original
    }
    expect(written.at(-1)).toMatch(/^\rip: ranges: \[#{24}\] 10\/10 100% ETA 0s\x1b\[K\n$/)
  })
})
