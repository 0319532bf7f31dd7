/**
 * Operators' own MaxMind databases (ALMANAC_IP_*_MMDB) read back against MaxMind's official test
 * databases, field by field, with the expected values taken from the JSON the databases were built from.
 * Each network's first and last address is looked up; its expected record is the most specific network
 * of the JSON holding it.
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { loadConfig } from '../../../src/config.ts'
import { openDataDir } from '../../../src/data/open.ts'
import { openIpService, type IpRecord, type IpService } from '../../../src/domains/ip/service.ts'
import { compareWords, formatV4, formatV6, parseCidr, type Cidr } from '../../../src/lib/ip-address.ts'
import ipDomain from '../../../src/domains/ip/index.ts'
import { testApp } from '../../support/app.ts'
import { MIRROR } from '../../support/mirror.ts'

const MM = `${MIRROR}/maxmind-test`
const data = openDataDir()

interface Network {
  cidr: Cidr
  record: any
}

/** The JSON's networks; `::a.b.c.d/n` (n >= 96) is the IPv4 network a.b.c.d/(n-96). */
function networks(name: string): Network[] {
  const entries = JSON.parse(readFileSync(`${MM}/source-data/${name}.json`, 'utf8')) as Record<string, unknown>[]
  return entries.flatMap((entry) =>
    Object.entries(entry).map(([key, record]) => {
      let cidr = parseCidr(key) as Cidr
      if (typeof cidr === 'string') throw new Error(`${name}: ${key}: ${cidr}`)
      if (cidr.version === 6 && cidr.prefix >= 96 && cidr.first[0] === 0 && cidr.first[1] === 0 && cidr.first[2] === 0) {
        cidr = { version: 4, prefix: cidr.prefix - 96, first: cidr.first, last: cidr.last }
      }
      return { cidr, record }
    }),
  )
}

const inside = (c: Cidr, version: number, w: number[]) =>
  c.version === version && compareWords(w, c.first) >= 0 && compareWords(w, c.last) <= 0

/** Sample addresses with their expected record (most specific network holding each). */
function samples(nets: Network[]): { ip: string; record: any }[] {
  const out: { ip: string; record: any }[] = []
  for (const n of nets) {
    for (const w of [n.cidr.first, n.cidr.last]) {
      const best = nets.filter((m) => inside(m.cidr, n.cidr.version, w)).sort((a, b) => b.cidr.prefix - a.cidr.prefix)[0]!
      out.push({ ip: n.cidr.version === 4 ? formatV4(w[3]!) : formatV6(w), record: best.record })
    }
  }
  return out
}

const service = (env: Record<string, string>) => openIpService(loadConfig({ env }), data)
const db = (name: string) => `${MM}/test-data/${name}.mmdb`

/** Looks up each sample that is not in a special-purpose range; returns how many were checked. */
function each(s: IpService, list: { ip: string; record: any }[], check: (r: IpRecord, expected: any, ip: string) => void) {
  let n = 0
  for (const { ip, record } of list) {
    const r = s.lookup(ip)
    if (r.reserved) continue
    check(r, record, ip)
    n++
  }
  return n
}

describe('bring your own MaxMind databases', () => {
  for (const name of ['GeoIP2-City-Test', 'GeoLite2-City-Test']) {
    test(`${name} as ALMANAC_IP_CITY_MMDB: every location field`, () => {
      const s = service({ ALMANAC_IP_CITY_MMDB: db(name) })
      let represented = 0
      const checked = each(s, samples(networks(name)), (r, e, ip) => {
        const p = r.place
        const got = {
          ip,
          country: p?.country?.iso_code ?? null,
          country_name: p?.country?.name ?? null,
          eu: p?.country?.is_in_european_union ?? false,
          continent: p?.continent?.code ?? null,
          continent_name: p?.continent?.name ?? null,
          city: p?.city ?? null,
          region: p?.region ?? null,
          region_code: p?.region_code ?? null,
          postal: p?.postal_code ?? null,
          lat: p?.latitude ?? null,
          lon: p?.longitude ?? null,
          radius: p?.accuracy_radius ?? null,
          tz: p?.time_zone ?? null,
          registered: p?.registered_country?.iso_code ?? null,
          registered_name: p?.registered_country?.name ?? null,
          represented: p?.represented_country?.iso_code ?? null,
          represented_type: p?.represented_country?.type ?? null,
        }
        if (p?.represented_country) represented++
        expect(got).toEqual({
          ip,
          country: e.country?.iso_code ?? null,
          country_name: e.country?.names?.en ?? null,
          eu: e.country?.is_in_european_union ?? false,
          continent: e.continent?.code ?? null,
          continent_name: e.continent?.names?.en ?? null,
          city: e.city?.names?.en ?? null,
          region: e.subdivisions?.[0]?.names?.en ?? null,
          region_code: e.subdivisions?.[0]?.iso_code ?? null,
          postal: e.postal?.code ?? null,
          lat: e.location?.latitude ?? null,
          lon: e.location?.longitude ?? null,
          radius: e.location?.accuracy_radius ?? null,
          tz: e.location?.time_zone ?? null,
          registered: e.registered_country?.iso_code ?? null,
          registered_name: e.registered_country?.names?.en ?? null,
          represented: e.represented_country?.iso_code ?? null,
          represented_type: e.represented_country?.type ?? null,
        })
      })
      expect(checked).toBeGreaterThan(100)
      // MaxMind's test City database has networks that represent another country (military bases).
      if (name === 'GeoIP2-City-Test') expect(represented).toBeGreaterThan(0)
    })
  }

  test('GeoLite2-ASN-Test as ALMANAC_IP_ASN_MMDB', () => {
    const s = service({ ALMANAC_IP_ASN_MMDB: db('GeoLite2-ASN-Test') })
    const checked = each(s, samples(networks('GeoLite2-ASN-Test')), (r, e, ip) => {
      expect({ ip, asn: r.network?.asn, org: r.network?.asn_organization }).toEqual({
        ip,
        asn: e.autonomous_system_number ?? null,
        org: e.autonomous_system_organization ?? null,
      })
    })
    expect(checked).toBeGreaterThan(100)
  })

  test('GeoIP2-ISP-Test as ALMANAC_IP_ISP_MMDB: its fields take precedence', () => {
    const s = service({ ALMANAC_IP_ISP_MMDB: db('GeoIP2-ISP-Test') })
    const checked = each(s, samples(networks('GeoIP2-ISP-Test')), (r, e, ip) => {
      const n = r.network!
      if (e.isp !== undefined) expect({ ip, isp: n.isp }).toEqual({ ip, isp: e.isp })
      if (e.organization !== undefined) expect({ ip, org: n.organization }).toEqual({ ip, org: e.organization })
      if (e.autonomous_system_number !== undefined) expect({ ip, asn: n.asn }).toEqual({ ip, asn: e.autonomous_system_number })
      if (e.autonomous_system_organization !== undefined)
        expect({ ip, o: n.asn_organization }).toEqual({ ip, o: e.autonomous_system_organization })
    })
    expect(checked).toBeGreaterThan(1000)
  })

  test('GeoIP2-Connection-Type-Test as ALMANAC_IP_CONNECTION_TYPE_MMDB', () => {
    const s = service({ ALMANAC_IP_CONNECTION_TYPE_MMDB: db('GeoIP2-Connection-Type-Test') })
    const checked = each(s, samples(networks('GeoIP2-Connection-Type-Test')), (r, e, ip) => {
      expect({ ip, ct: r.network?.connection_type ?? null }).toEqual({ ip, ct: e.connection_type ?? null })
    })
    expect(checked).toBeGreaterThan(20)
  })

  test(
    'GeoIP2-Anonymous-IP-Test as ALMANAC_IP_ANONYMOUS_IP_MMDB: flags (ORed with the open lists), residential proxy, source ' + 'named',
    () => {
      const plain = service({})
      const s = service({ ALMANAC_IP_ANONYMOUS_IP_MMDB: db('GeoIP2-Anonymous-IP-Test') })
      const flags = [
        'is_anonymous',
        'is_anonymous_vpn',
        'is_hosting_provider',
        'is_public_proxy',
        'is_residential_proxy',
        'is_tor_exit_node',
      ] as const
      const checked = each(s, samples(networks('GeoIP2-Anonymous-IP-Test')), (r, e, ip) => {
        const lists = plain.lookup(ip).security
        for (const f of flags) expect({ ip, f, v: r.security[f] }).toEqual({ ip, f, v: (e[f] ?? false) || lists[f] })
        if (flags.some((f) => e[f])) expect(r.security.sources).toContain('maxmind-anonymous-ip')
      })
      expect(checked).toBeGreaterThan(10)
    },
  )

  test('through HTTP: a record of the City test database in both forms', async () => {
    const app = await testApp({
      env: { ALMANAC_IP_CITY_MMDB: db('GeoIP2-City-Test'), ALMANAC_IP_CONNECTION_TYPE_MMDB: db('GeoIP2-Connection-Type-Test') },
      domains: [ipDomain],
    })
    try {
      const expected = samples(networks('GeoIP2-City-Test')).find((x) => x.record.city && x.record.postal && x.ip.includes('.'))!
      const a = await app.json('POST', '/api/v1/ip', { body: { ip: expected.ip } })
      expect(a.body.data.country.iso_code).toBe(expected.record.country.iso_code)
      expect(a.body.data.location.city).toBe(expected.record.city.names.en)
      expect(a.body.data.location.postal_code).toBe(expected.record.postal.code)
      expect(a.body.data.location.timezone).toBe(expected.record.location.time_zone)
      const b = await app.json('POST', '/api/v1/ip', { body: { ip: expected.ip }, form: 'bare' })
      expect(b.body.city).toBe(expected.record.city.names.en)
      expect(b.body.latitude).toBe(expected.record.location.latitude)
    } finally {
      await app.close()
    }
  })

  test('a missing or broken database disables the domain with a message naming the setting', async () => {
    const app = await testApp({ env: { ALMANAC_IP_ISP_MMDB: '/nonexistent/GeoIP2-ISP.mmdb' }, domains: [ipDomain] })
    try {
      const { status, body } = await app.json('POST', '/api/v1/ip', { body: { ip: '8.8.8.8' } })
      expect(status).toBe(503)
      expect(body.error.detail).toContain('ALMANAC_IP_ISP_MMDB')
      // The operator's file layout stays in the log.
      expect(body.error.detail).not.toContain('/')
    } finally {
      await app.close()
    }
    expect(() => service({ ALMANAC_IP_CITY_MMDB: `${MM}/source-data/GeoIP2-City-Test.json` })).toThrow(
      /ALMANAC_IP_CITY_MMDB.*not a MaxMind DB/,
    )
  })
})
