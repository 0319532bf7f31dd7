/**
 * Bible domain figures: database size and build time, RSS when the domain opens and after the query
 * set, search p50/p95 over a fixed query set (keyword, phrase, prefix; one translation and all), CPU per
 * search of the peers benchmark's KJV words with the answer cache off and on (filled), chapter and verse
 * fetches, each against a baseline measured in the same run (the bare FTS5 MATCH of the same
 * query with bun:sqlite, a bare primary-key SELECT), then HTTP against a hello-world.
 * The machine is shared (2 cores, other engineers' builds and tests): figures are noisy.
 * `BASE=<another checkout>` adds an A/B over HTTP: that checkout's server and this one's, alternated (ROUNDS, default 3),
 * on the peers benchmark's rare words and mixed queries without the answer cache (random query per request).
 * Prints figures; asserts nothing. Run: `bun bench/bible.ts` (after `bun run data`), `--build` to time
 * a full build from the mirror too.
 */
import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openReadonlySqlite } from '../src/data/sqlite.ts'
import { BIBLE_ARTIFACT } from '../src/domains/bible/artifacts.ts'
import { parseQuery } from '../src/domains/bible/query.ts'
import { openBibleService } from '../src/domains/bible/service.ts'
import { MIRROR } from '../test/support/mirror.ts'
import { compareWithHello, linesFile, percentile, ROOT, randomLineScript, range, versusBase } from './lib.ts'
import { kjvVerses, searchQueries } from './peers/inputs.ts'

const mib = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`
function memory() {
  const status = Bun.file('/proc/self/status')
  return status.text().then((s) => {
    const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(s)?.[1] ?? 0) * 1024
    return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile') }
  })
}

const path = join(ROOT, 'datasets/out', BIBLE_ARTIFACT)
console.log(`Database: ${mib(statSync(path).size)} (${statSync(path).size.toLocaleString('en')} bytes)`)

// Executable growth: the compile step embeds the artifact zstd-compressed (build/compile.ts, level 12);
// its cached copy is named by the artifact's sha256.
const sha = (
  JSON.parse(readFileSync(join(ROOT, 'datasets/out/manifest.json'), 'utf8')).datasets.bible.artifacts as { name: string; sha256: string }[]
).find((a) => a.name === BIBLE_ARTIFACT)!.sha256
const cached = join(ROOT, 'dist/.embed', `${sha}.zst`)
if (existsSync(cached)) console.log(`Executable growth: ${mib(statSync(cached).size)} (the zstd copy \`bun run compile\` embeds)`)
else if (process.argv.includes('--build')) {
  const t = performance.now()
  const packed = Bun.zstdCompressSync(readFileSync(path), { level: 12 })
  console.log(
    `Executable growth: ${mib(packed.length)} (zstd level 12 as \`bun run compile\` embeds it; compressed ` +
      `in ${((performance.now() - t) / 1000).toFixed(1)} s)`,
  )
} else console.log('Executable growth: run `bun run compile` (or pass --build) to measure')

if (process.argv.includes('--build')) {
  // In a child process, so the build's heap does not count in this process's RSS below.
  const out = `/tmp/almanac-bench-bible-${process.pid}.sqlite`
  const script =
    `import { buildBibleDatabase } from '${ROOT}/src/domains/bible/artifacts.ts'
await buildBibleDatabase({ mirror: (f) => '${MIRROR}/' + f, versification: '${MIRROR}/bible/versification', ` +
    `locales: '${MIRROR}/bible/book-names/sword-locales', out: '${out}' })`
  const t = performance.now()
  const child = Bun.spawnSync(['bun', '-e', script], { stderr: 'inherit' })
  console.log(
    `Build from the mirror (34 translations, index, VACUUM): ${((performance.now() - t) / 1000).toFixed(1)} s${
      child.exitCode ? ' ' + '(FAILED)' : ''
    }`,
  )
  await Bun.file(out)
    .delete()
    .catch(() => {})
}

Bun.gc(true)
const before = await memory()
const db = openReadonlySqlite(path)
const service = openBibleService(db)
Bun.gc(true)
const opened = await memory()
console.log(
  `\nRSS before opening ${mib(before.rss)}; after opening ${mib(opened.rss)} (+${mib(opened.rss - before.rss)}; anonymous ` +
    `+${mib(opened.anon - before.anon)})`,
)

const QUERIES: Record<string, string[]> = {
  keyword: ['love', 'shepherd', 'faith hope', 'Jerusalem', 'light darkness', 'water', 'Gott', 'Господь', '神愛', 'الله'],
  phrase: ['"in the beginning"', '"the lord is my shepherd"', '"only begotten son"', '"kingdom of heaven"', '"und Gott sprach"'],
  prefix: ['bless*', 'shep*', 'righteous*', 'forgiv*', 'créa*'],
  'common word (the)': ['the'],
}

function timeSearch(label: string, translations: string[] | undefined, queries: string[], rounds: number) {
  const ours: number[] = []
  const bare: number[] = []
  const raw = db.query('SELECT rowid FROM verses_fts WHERE verses_fts MATCH ? ORDER BY rank LIMIT 20')
  for (let r = 0; r < rounds; r++) {
    for (const q of queries) {
      let t = performance.now()
      service.search(q, translations, 'relevance', { limit: 20, offset: 0 })
      ours.push(performance.now() - t)
      const fts = parseQuery(q).fts
      t = performance.now()
      raw.all(fts)
      bare.push(performance.now() - t)
    }
  }
  const p50 = percentile(ours, 50)
  console.log(
    `| ${label} | ${ours.length} | ${p50.toFixed(2)} | ${percentile(ours, 95).toFixed(2)} | ${percentile(bare, 50).toFixed(2)} ` +
      `| ${(p50 / percentile(bare, 50)).toFixed(1)} |`,
  )
}

console.log('\nSearch, in process (limit 20, relevance; baseline: bare FTS5 MATCH ... ORDER BY rank LIMIT 20 over the whole index)')
console.log('| query set | calls | p50 ms | p95 ms | baseline p50 ms | ratio |')
console.log('|---|---:|---:|---:|---:|---:|')
for (const [kind, qs] of Object.entries(QUERIES)) {
  timeSearch(`${kind}, one translation (kjv)`, ['kjv'], qs, 20)
  timeSearch(`${kind}, all 34 translations`, undefined, qs, kind.startsWith('common') ? 5 : 20)
}

// The peers benchmark's KJV words (bench/peers/inputs.ts), CPU per search without and with the answer cache,
// alternated in rounds: a benchmark of a few dozen distinct questions measures the cache when it is on.
{
  const { rare, mixed } = searchQueries(kjvVerses())
  const cached = openBibleService(db, { searchCacheBytes: 16 * 2 ** 20 })
  const cpu = (words: string[], search: (w: string) => unknown, calls: number) => {
    const start = process.cpuUsage()
    for (let i = 0; i < calls; i++) search(words[i % words.length]!)
    const used = process.cpuUsage(start)
    return (used.user + used.system) / calls
  }
  const page = { limit: 20, offset: 0 }
  console.log('\nKJV search, in process, µs CPU per search (3 rounds, cache off and on alternated)')
  console.log('| query set | cache off | cache on |')
  console.log('|---|---:|---:|')
  for (const [label, words, calls] of [
    [`${rare.length} rare words (1–10 hits)`, rare, 5000],
    [`${mixed.length} mixed queries`, mixed, 1000],
  ] as const) {
    const off: number[] = []
    const on: number[] = []
    for (const w of words) cached.searchAnywhere(w, ['kjv'], 'relevance', page, 'translation') // the cache filled first
    for (let round = 0; round < 3; round++) {
      off.push(cpu(words, (w) => service.search(w, ['kjv'], 'relevance', page), calls))
      on.push(cpu(words, (w) => cached.searchAnywhere(w, ['kjv'], 'relevance', page, 'translation'), calls))
    }
    console.log(`| ${label} | ${range(off, 1)} | ${range(on, 1)} |`)
  }
}

function timeFetch(label: string, rounds: number, fn: (i: number) => unknown, base: (i: number) => unknown) {
  const ours: number[] = []
  const bare: number[] = []
  for (let i = 0; i < rounds; i++) {
    let t = performance.now()
    fn(i)
    ours.push(performance.now() - t)
    t = performance.now()
    base(i)
    bare.push(performance.now() - t)
  }
  console.log(
    `| ${label} | ${rounds} | ${percentile(ours, 50).toFixed(3)} | ${percentile(ours, 95).toFixed(3)} ` +
      `| ${percentile(bare, 50).toFixed(3)} |`,
  )
}
const books = service.booksOf('kjv').books
const pk = db.query('SELECT text FROM verses WHERE id = ?')
console.log('\nFetches, in process (baseline: one verse by primary key)')
console.log('| call | calls | p50 ms | p95 ms | baseline p50 ms |')
console.log('|---|---:|---:|---:|---:|')
timeFetch(
  'chapter (random kjv book, chapter 1)',
  5000,
  (i) => service.chapter('kjv', books[i % books.length]!.book.abbr, 1),
  (i) => pk.get(books[i % books.length]!.firstId),
)
timeFetch(
  'Psalm 119 (176 verses)',
  2000,
  () => service.chapter('kjv', 'ps', 119),
  () => pk.get(65536),
)
timeFetch(
  'verse range John 3:16-18',
  5000,
  () => service.passage('kjv', 'jn', 3, '16-18'),
  () => pk.get(65536),
)
timeFetch(
  'daily verse',
  5000,
  () => service.daily({}, 'daily'),
  () => pk.get(65536),
)

Bun.gc(true)
const after = await memory()
console.log(
  `\nRSS after the query set ${mib(after.rss)} (+${mib(after.rss - before.rss)} over the process before opening: anonymous ` +
    `+${mib(after.anon - before.anon)}, file-backed (mapped database pages, shared page cache) +${mib(after.file - before.file)})`,
)

await compareWithHello('HTTP (Form B), 3 s each', [
  { name: 'GET /bible/kjv/john/3/16', path: '/api/v1/bible/kjv/john/3/16', headers: { 'x-response-form': 'bare' }, seconds: 3 },
  { name: 'GET /bible/kjv/ps/119', path: '/api/v1/bible/kjv/ps/119', headers: { 'x-response-form': 'bare' }, seconds: 3 },
  {
    name: 'GET /bible/kjv/search?q=shepherd',
    path: '/api/v1/bible/kjv/search?q=shepherd',
    headers: { 'x-response-form': 'bare' },
    seconds: 3,
  },
  { name: 'GET /bible/search?q=love (all)', path: '/api/v1/bible/search?q=love', headers: { 'x-response-form': 'bare' }, seconds: 3 },
])

if (process.env.BASE) {
  const { rare, mixed } = searchQueries(kjvVerses())
  const dir = mkdtempSync(join(tmpdir(), 'almanac-bench-bible-'))
  const words = (name: string, qs: string[]) =>
    randomLineScript(dir, linesFile(dir, name, qs.map(encodeURIComponent)), 'GET', '/api/v1/bible/kjv/search?q=', false)
  await versusBase(
    process.env.BASE,
    [
      [`GET /bible/kjv/search, ${rare.length} rare words, answer cache off`, { script: words('rare', rare), warmupSeconds: 3 }],
      [`GET /bible/kjv/search, ${mixed.length} mixed queries, answer cache off`, { script: words('mixed', mixed), warmupSeconds: 3 }],
    ],
    // As bench/peers.ts: the 32 connections share one key, and the default cap of heavy searches per caller would answer 503.
    { ALMANAC_BIBLE_SEARCH_CACHE_BYTES: '0', ALMANAC_QUERY_JOBS_PER_CALLER: '64' },
    Number(process.env.ROUNDS ?? 3),
  )
}
