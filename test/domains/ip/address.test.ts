/** Address parsing: canonical forms checked against the WHATWG URL parser's IPv6 serialiser (RFC 5952). */
import { describe, expect, test } from 'bun:test'
import { isIP } from 'node:net'
import { cidrContains, parseCidr, parseIp, type Cidr, type IpAddress } from '../../../src/lib/ip-address.ts'
import { rng } from '../../support/random.ts'

const ok = (s: string) => {
  const r = parseIp(s)
  if (typeof r === 'string') throw new Error(`${s}: ${r}`)
  return r
}
const urlCanonical = (s: string) => new URL(`http://[${s}]/`).hostname.slice(1, -1)

describe('parseIp', () => {
  test('IPv4 dotted quads become u32', () => {
    expect(ok('8.8.8.8')).toEqual({ version: 4, text: '8.8.8.8', v4: 0x08080808, v6: null })
    expect(ok('255.255.255.255').v4).toBe(0xffffffff)
    expect(ok('0.0.0.0').v4).toBe(0)
  })

  test('IPv6 is written the RFC 5952 way, as the URL parser writes it', () => {
    const inputs = [
      '2001:4860:4860:0:0:0:0:8888',
      '2001:DB8:0:0:1:0:0:1',
      '::1',
      '::',
      '1::',
      'fe80::1:2',
      '2001:0db8:0000:0000:0000:ff00:0042:8329',
      '1:0:0:2:0:0:0:3',
      '0:0:1:0:0:1:0:0',
      'a:b:c:d:e:f:1:2',
      '::1.2.3.4',
      '64:ff9b::192.0.2.33',
    ]
    for (const s of inputs) {
      expect(isIP(s)).toBe(6)
      expect(ok(s).version).toBe(6)
      expect(ok(s).text).toBe(urlCanonical(s))
    }
  })

  test('IPv4-mapped IPv6 is normalised to IPv4', () => {
    expect(ok('::ffff:8.8.4.4')).toEqual({ version: 4, text: '8.8.4.4', v4: 0x08080404, v6: null })
    expect(ok('::FFFF:0808:0404').text).toBe('8.8.4.4')
  })

  test('random IPv6 addresses round-trip through the URL parser', () => {
    const random = rng(2001)
    for (let i = 0; i < 500; i++) {
      const groups = Array.from({ length: 8 }, () => (random() < 0.4 ? 0 : Math.floor(random() * 0x10000)).toString(16))
      const s = groups.join(':')
      const parsed = ok(s)
      if (parsed.version === 4) continue // randomly hit ::ffff:0:0/96
      expect(parsed.text).toBe(urlCanonical(s))
    }
  })

  test('bad input says what is wrong', () => {
    const why = (s: string) => parseIp(s) as string
    expect(why('1.2.3.4:80')).toContain('port')
    expect(why('[2001:db8::1]:443')).toContain('port')
    expect(why('fe80::1%eth0')).toContain('zone')
    expect(why('10.0.0.0/8')).toContain('network')
    expect(why('256.1.1.1')).toContain('0-255')
    expect(why('01.2.3.4')).toContain('leading zeros')
    expect(why('example.com')).toContain('not an IPv4 or IPv6 address')
    expect(why('')).toContain('empty')
    for (const s of ['1.2.3', '1.2.3.4.5', '1::2::3', ':::', '1:2:3:4:5:6:7:8:9', '12345::', 'g::1', '::1:'] as const) {
      expect(typeof parseIp(s)).toBe('string')
      expect(isIP(s)).toBe(0)
    }
  })
})

describe('parseCidr', () => {
  const contains = (c: string, ip: string) => cidrContains(parseCidr(c) as Cidr, ok(ip) as IpAddress)
  test('IPv4 and IPv6 networks and single addresses', () => {
    expect(contains('10.0.0.0/8', '10.255.1.2')).toBe(true)
    expect(contains('10.0.0.0/8', '11.0.0.0')).toBe(false)
    expect(contains('127.0.0.1', '127.0.0.1')).toBe(true)
    expect(contains('127.0.0.1', '127.0.0.2')).toBe(false)
    expect(contains('2001:db8::/32', '2001:db8:ffff::1')).toBe(true)
    expect(contains('2001:db8::/32', '2001:db9::1')).toBe(false)
    expect(contains('::/0', '::1')).toBe(true)
    expect(contains('0.0.0.0/0', '::1')).toBe(false)
    expect(contains('::ffff:10.0.0.0/104', '10.9.9.9')).toBe(true)
  })
  test('bad networks are described', () => {
    expect(parseCidr('10.0.0.0/33')).toContain('prefix')
    expect(parseCidr('10.0.0.0/x')).toContain('prefix')
    expect(typeof parseCidr('nope')).toBe('string')
  })
})
