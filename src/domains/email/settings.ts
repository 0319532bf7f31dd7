/**
 * Email settings: DNS and RDAP at request time, the RDAP cache's store, operator lists (docs/email.md).
 * Declared once here and named by the descriptor (`settings` in index.ts); src/config.ts composes them under
 * `email.*` (env names, defaults, the README table and `serve --help` come from these declarations).
 * Imports nothing of the domain: config reads it, and config sits below the domains.
 */
import { boolean, fail, httpUrl, integer, list, storeSetting, text } from '../../lib/parsers.ts'
import { optional, type Parser, setting } from '../../lib/settings.ts'

/**
 * Names the resolver is checked against: each certain to exist with an address, run by different operators
 * under different TLDs (IANA's own, a name RFC 2606 keeps for ever, the largest mail provider's), so one
 * outage cannot make a working resolver look broken.
 */
export const DEFAULT_DNS_CHECK_NAMES = ['iana.org', 'example.com', 'gmail.com']

/** Host names (labels of 1-63 letters, digits, `-` or `_`; at most 253 characters), comma-separated; `none` (or []): none. */
const hostNames: Parser<string[]> = (raw, name) =>
  (raw === 'none' ? [] : list(raw, name)).map((host) => {
    const labels = host.replace(/\.$/, '').split('.')
    if (host.length > 253 || !labels.every((l) => /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/i.test(l)))
      fail(name, `expected host names, got ${JSON.stringify(host)}`)
    return host.toLowerCase()
  })

export const emailSettings = {
  dnsServers: setting(list, {
    default: [],
    shown: "system's",
    env: 'ALMANAC_EMAIL_DNS_SERVERS',
    doc: 'DNS servers (`host[:port]`) for MX checks.',
  }),
  dnsTimeoutMs: setting(integer(50, 60000), {
    default: 2000,
    env: 'ALMANAC_EMAIL_DNS_TIMEOUT_MS',
    doc: "Deadline for one domain's whole MX check (MX, then A/AAAA), in milliseconds.",
  }),
  dnsCheckNames: setting(hostNames, {
    default: DEFAULT_DNS_CHECK_NAMES,
    env: 'ALMANAC_EMAIL_DNS_CHECK_NAMES',
    doc:
      'Well-known names (each with an A record) the resolver is asked at start and every 5 minutes; when none resolves, MX checks ' +
      'are unknown (`dns_resolver_unhealthy`) and /readyz warns. `none`: no check.',
  }),
  rdapUrl: optional(httpUrl, {
    env: 'ALMANAC_EMAIL_RDAP_URL',
    doc: 'One RDAP base for every domain (trusted as configured; redirects off it: https to public addresses only, 3 at most).',
  }),
  rdapBootstrap: optional(text, {
    shown: 'the built `email-rdap` dataset',
    env: 'ALMANAC_EMAIL_RDAP_BOOTSTRAP',
    doc: 'An IANA `dns.json` used instead of the built bootstrap.',
  }),
  rdapTimeoutMs: setting(integer(50, 60000), {
    default: 3000,
    env: 'ALMANAC_EMAIL_RDAP_TIMEOUT_MS',
    doc: 'Deadline for one RDAP lookup, in milliseconds.',
  }),
  rdapCache: optional(storeSetting(['memory', 'sqlite']), {
    shown: "the quota store's Redis when that is Redis, else `sqlite`",
    env: 'ALMANAC_EMAIL_RDAP_CACHE',
    doc:
      'Where RDAP answers are kept for 7 days: `memory` (this process), `sqlite` (the state dir) or `redis://…` (shared by many ' +
      'instances).',
  }),
  offline: setting(boolean, {
    default: false,
    env: 'ALMANAC_EMAIL_OFFLINE',
    doc: 'No DNS or RDAP at request time (air-gapped servers): those email checks answer "unknown".',
  }),
  dnsSlots: setting(integer(1, 100000), {
    default: 512,
    env: 'ALMANAC_EMAIL_DNS_SLOTS',
    doc: 'MX lookups under way at once; beyond, the check is unknown (`dns_busy`).',
  }),
  dnsSlotsPerCaller: optional(integer(1, 100000), {
    shown: 'an eighth (≥ 4)',
    env: 'ALMANAC_EMAIL_DNS_SLOTS_PER_CALLER',
    doc: 'MX lookups one caller (quota subject) may have under way; beyond, `dns_busy`.',
  }),
  rdapSlots: setting(integer(1, 100000), {
    default: 128,
    env: 'ALMANAC_EMAIL_RDAP_SLOTS',
    doc: 'RDAP lookups under way at once; beyond, `rdap_busy`.',
  }),
  rdapSlotsPerCaller: optional(integer(1, 100000), {
    shown: 'an eighth (≥ 4)',
    env: 'ALMANAC_EMAIL_RDAP_SLOTS_PER_CALLER',
    doc: 'RDAP lookups one caller may have under way; beyond, `rdap_busy`.',
  }),
  allowListFiles: setting(list, {
    default: [],
    env: 'ALMANAC_EMAIL_ALLOW_LISTS',
    doc: 'Operator allow-list files of email domains (one per line), reloaded on SIGHUP.',
  }),
  denyListFiles: setting(list, {
    default: [],
    env: 'ALMANAC_EMAIL_DENY_LISTS',
    doc: 'Operator deny-list files of email domains (one per line), reloaded on SIGHUP.',
  }),
}
