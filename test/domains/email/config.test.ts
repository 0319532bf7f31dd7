/** The email domain's settings: parsed from the environment, and bad values named as the operator wrote them. */
import { expect, test } from 'bun:test'
import { ConfigError, loadConfig } from '../../../src/config.ts'
import emailDomain from '../../../src/domains/email/index.ts'
import { testApp } from '../../support/app.ts'

test('ALMANAC_EMAIL_* settings', () => {
  const c = loadConfig({
    env: {
      ALMANAC_EMAIL_DNS_SERVERS: '127.0.0.1:5353, [::1]:53',
      ALMANAC_EMAIL_DNS_TIMEOUT_MS: '750',
      ALMANAC_EMAIL_RDAP_URL: 'http://127.0.0.1:8081/rdap',
      ALMANAC_EMAIL_RDAP_TIMEOUT_MS: '900',
      ALMANAC_EMAIL_OFFLINE: 'yes',
      ALMANAC_EMAIL_ALLOW_LISTS: '/a,/b',
      ALMANAC_EMAIL_DNS_SLOTS: '64',
      ALMANAC_EMAIL_DNS_SLOTS_PER_CALLER: '6',
      ALMANAC_EMAIL_RDAP_SLOTS: '32',
      ALMANAC_EMAIL_DNS_CHECK_NAMES: 'Resolver-Check.example., _probe.example.net',
    },
  })
  expect(c.email).toEqual({
    dnsServers: ['127.0.0.1:5353', '[::1]:53'],
    dnsTimeoutMs: 750,
    dnsCheckNames: ['resolver-check.example.', '_probe.example.net'],
    rdapUrl: 'http://127.0.0.1:8081/rdap/',
    rdapTimeoutMs: 900,
    offline: true,
    dnsSlots: 64,
    dnsSlotsPerCaller: 6,
    rdapSlots: 32,
    allowListFiles: ['/a', '/b'],
    denyListFiles: [],
  })
  expect(loadConfig({ env: {} }).email).toMatchObject({
    dnsServers: [],
    dnsTimeoutMs: 2000,
    rdapTimeoutMs: 3000,
    offline: false,
    dnsSlots: 512,
    rdapSlots: 128,
    dnsCheckNames: ['iana.org', 'example.com', 'gmail.com'],
  })
  expect(loadConfig({ env: { ALMANAC_EMAIL_DNS_CHECK_NAMES: 'none' } }).email.dnsCheckNames).toEqual([])
})

test('bad values name the setting', () => {
  expect(() => loadConfig({ env: { ALMANAC_EMAIL_RDAP_URL: 'ftp://x' } })).toThrow(
    new ConfigError('ALMANAC_EMAIL_RDAP_URL: expected an http(s) URL, got "ftp://x"'),
  )
  expect(() => loadConfig({ env: { ALMANAC_EMAIL_DNS_TIMEOUT_MS: '0' } })).toThrow('ALMANAC_EMAIL_DNS_TIMEOUT_MS')
  for (const bad of ['iana.org,bad..name', 'under score-.example', `${'a'.repeat(64)}.example`, 'a/b.example'])
    expect(() => loadConfig({ env: { ALMANAC_EMAIL_DNS_CHECK_NAMES: bad } })).toThrow('ALMANAC_EMAIL_DNS_CHECK_NAMES: expected host names')
})

test('a DNS server that is not an address disables the domain, naming the setting', async () => {
  const app = await testApp({ env: { ALMANAC_EMAIL_DNS_SERVERS: 'dns.example:53' }, domains: [emailDomain] })
  try {
    const { status, body } = await app.json('POST', '/api/v1/email/risk', { body: { email: 'a@b.example' } })
    expect(status).toBe(503)
    expect(body.error.detail).toContain('ALMANAC_EMAIL_DNS_SERVERS')
  } finally {
    await app.close()
  }
})
