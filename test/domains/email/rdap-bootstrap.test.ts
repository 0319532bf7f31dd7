/**
 * The RDAP bootstrap is a dataset (`email-rdap`): built from IANA's dns.json when the build finds it,
 * else from the npm package whoisserver-world. Checked here:
 * - the built file covers every TLD the package gives an https RDAP server (read from the package's JSON
 *   directly, the oracle), at least 1,000, each base the package's `…/domain/` URL less `domain/`;
 * - with a dns.json served by a loopback upstream the build takes IANA's file as it is; without it, the
 *   package, and the manifest says IANA's file was unavailable;
 * - a TLD from the built file reaches a loopback RDAP server through the real app when
 *   ALMANAC_EMAIL_RDAP_BOOTSTRAP names a file that points that TLD there.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { buildDatasets } from '../../../src/data/build.ts'
import { openDataDir } from '../../../src/data/open.ts'
import { emailDomain } from '../../../src/domains/email/index.ts'
import { loadBootstrap, rdapBaseFor } from '../../../src/domains/email/rdap-bootstrap.ts'
import { RDAP_ARTIFACT, rdapBuilder } from '../../../src/domains/email/rdap-build.ts'
import { testApp } from '../../support/app.ts'
import { tempDirs } from '../../support/temp.ts'
import { startDnsServer, type DnsServer } from './dns-server.ts'
import { startRdapServer, type RdapFixture } from './rdap-server.ts'

const ROOT = resolve(import.meta.dir, '../../..')
const tempDir = tempDirs('almanac-rdap-bootstrap-')
const NOW = Date.parse('2026-11-23T12:00:00Z')
const quiet = () => {}

/** The package's own data: TLD -> its RDAP domain URLs. */
const packageData = JSON.parse(readFileSync(join(ROOT, 'node_modules/whoisserver-world/whoisservers.json'), 'utf8')) as Record<
  string,
  { rdapServers: string[] }
>
const packageHttps = Object.entries(packageData).filter(([, v]) => v.rdapServers.some((u) => u.startsWith('https://')))

describe('the built bootstrap', () => {
  const built = loadBootstrap(undefined, openDataDir().path(RDAP_ARTIFACT))

  test('covers every TLD the package gives an https RDAP server, at least 1,000', () => {
    expect(packageHttps.length).toBeGreaterThanOrEqual(1000)
    const https = [...built.servers.entries()].filter(([, base]) => base.startsWith('https://'))
    expect(https.length).toBeGreaterThanOrEqual(1000)
    for (const [tld, v] of packageHttps) {
      const url = v.rdapServers.find((u) => u.startsWith('https://'))!
      expect({ tld, url: `${rdapBaseFor(built, `example.${tld}`)}domain/` }).toEqual({ tld, url })
    }
    // The twelve TLDs of the hand-compiled subset are all there (uk, fr, nl from it: the package has none).
    const subset = JSON.parse(readFileSync(join(ROOT, 'src/domains/email/rdap-bootstrap.json'), 'utf8')) as {
      services: [string[], string[]][]
    }
    const subsetTlds = subset.services.flatMap(([tlds]) => tlds)
    expect(subsetTlds.length).toBe(12)
    for (const tld of subsetTlds) expect({ tld, has: built.servers.has(tld) }).toEqual({ tld, has: true })
    for (const tld of ['uk', 'fr', 'nl']) expect(packageData[tld]!.rdapServers).toEqual([])
    expect(built.servers.get('uk')).toBe('https://rdap.nominet.uk/uk/')
    // IDN TLDs by their A-label.
    expect(built.servers.get('xn--3bst00m')).toStartWith('https://')
  })

  test('the manifest records where it came from', () => {
    const entry = openDataDir().manifest.datasets['email-rdap']!
    expect(entry.counts.tlds).toBe(built.servers.size)
    expect(entry.sources.map((s) => s.id)).toContain('whoisserver-world')
  })
})

describe('building it', () => {
  const IANA = {
    description: 'a loopback copy of an IANA file',
    publication: '2026-12-01T00:00:00Z',
    version: '1.0',
    services: [[['example', 'test'], ['https://rdap.example.net/']]],
  }
  let server: ReturnType<typeof Bun.serve>
  let serveIana = true
  beforeAll(() => {
    server = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: (req) =>
        serveIana && new URL(req.url).pathname === '/data.iana.org/rdap/dns.json'
          ? Response.json(IANA)
          : new Response('no', { status: 404 }),
    })
  })
  afterAll(() => server?.stop(true))
  const build = async () => {
    const out = tempDir()
    const manifest = await buildDatasets([{ ...emailDomain(), builders: [rdapBuilder] }], {
      outDir: out,
      mirror: tempDir(),
      offline: false,
      upstreamBase: `http://127.0.0.1:${server.port}`,
      log: quiet,
    })
    return { entry: manifest.datasets['email-rdap']!, doc: JSON.parse(readFileSync(join(out, RDAP_ARTIFACT), 'utf8')) }
  }

  test("IANA's dns.json is preferred when the build finds it", async () => {
    serveIana = true
    const { entry, doc } = await build()
    expect(doc).toEqual(IANA)
    expect(entry.unavailable).toBeUndefined()
    expect(entry.version).toBe('2026-12-01')
    expect(entry.counts).toEqual({ tlds: 2, servers: 1 })
  })

  test('without it, whoisserver-world, and the manifest says which source was missing', async () => {
    serveIana = false
    const { entry, doc } = await build()
    expect(entry.unavailable!.map((u) => u.id)).toEqual(['iana-rdap-dns'])
    expect(entry.unavailable![0]!.reason).toContain('https://data.iana.org/rdap/dns.json')
    expect(entry.counts.tlds).toBe(Object.values(packageData).filter((v) => v.rdapServers.length).length + 3) // + uk, fr, nl
    expect(doc.description).toContain('whoisserver-world')
  })
})

describe('ALMANAC_EMAIL_RDAP_BOOTSTRAP', () => {
  let rdap: RdapFixture
  let dns: DnsServer
  // A TLD the hand-compiled subset never had, from the built file.
  const built = loadBootstrap(undefined, openDataDir().path(RDAP_ARTIFACT))
  const tld = ['museum', 'bank'].find((t) => built.servers.has(t))!
  const name = `almanac.${tld}`
  beforeAll(async () => {
    rdap = startRdapServer({ [name]: { days: 12 } }, NOW)
    dns = await startDnsServer({ [name]: { mx: [[10, `mx.${name}`]] } })
  })
  afterAll(async () => {
    await rdap?.stop()
    await dns?.close()
  })

  test('a TLD from the built bootstrap reaches a loopback RDAP server the override names', async () => {
    expect(built.servers.get(tld)).toStartWith('https://')
    const file = join(tempDir(), 'dns.json')
    writeFileSync(file, JSON.stringify({ publication: '2026-11-23T00:00:00Z', version: '1.0', services: [[[tld], [rdap.base]]] }))
    const app = await testApp({
      env: {
        ALMANAC_EMAIL_RDAP_BOOTSTRAP: file,
        ALMANAC_EMAIL_DNS_SERVERS: dns.address,
        ALMANAC_EMAIL_DNS_TIMEOUT_MS: '2000',
        ALMANAC_EMAIL_RDAP_TIMEOUT_MS: '2000',
        ALMANAC_STATE_DIR: tempDir(),
      },
      domains: [emailDomain({ now: () => NOW })],
    })
    try {
      const { status, body } = await app.json('POST', '/api/v1/email/risk', { body: { email: `someone@${name}` } })
      expect(status).toBe(200)
      expect(body.data.checks.domain_age).toMatchObject({ domain: name, age_days: 12, source: 'rdap', reason: null })
      expect(rdap.requests.get(name)).toBe(1)
    } finally {
      await app.close()
    }
  })
})
