/**
 * IP settings: the operator's own MaxMind databases and list files (docs/ip.md).
 * Declared once here and named by the descriptor (`settings` in index.ts); src/config.ts composes them under
 * `ip.*` (env names, defaults, the README table and `serve --help` come from these declarations).
 * Imports nothing of the domain: config reads it, and config sits below the domains.
 */
import { list, text } from '../../lib/parsers.ts'
import { optional, setting } from '../../lib/settings.ts'

export const ipSettings = {
  cityMmdb: optional(text, { env: 'ALMANAC_IP_CITY_MMDB', doc: 'Your own MaxMind City database; it takes precedence.' }),
  asnMmdb: optional(text, { env: 'ALMANAC_IP_ASN_MMDB', doc: 'Your own MaxMind ASN database; it takes precedence.' }),
  ispMmdb: optional(text, { env: 'ALMANAC_IP_ISP_MMDB', doc: 'Your own MaxMind ISP database; it takes precedence.' }),
  anonymousIpMmdb: optional(text, {
    env: 'ALMANAC_IP_ANONYMOUS_IP_MMDB',
    doc: 'Your own MaxMind Anonymous IP database; it takes precedence.',
  }),
  connectionTypeMmdb: optional(text, {
    env: 'ALMANAC_IP_CONNECTION_TYPE_MMDB',
    doc: 'Your own MaxMind Connection Type database; it takes precedence.',
  }),
  torListFiles: setting(list, {
    default: [],
    env: 'ALMANAC_IP_TOR_LISTS',
    doc: 'Extra Tor list files (address or CIDR per line), reloaded on SIGHUP.',
  }),
  vpnListFiles: setting(list, {
    default: [],
    env: 'ALMANAC_IP_VPN_LISTS',
    doc: 'Extra VPN list files (address or CIDR per line), reloaded on SIGHUP.',
  }),
  proxyListFiles: setting(list, {
    default: [],
    env: 'ALMANAC_IP_PROXY_LISTS',
    doc: 'Extra proxy list files (address or CIDR per line), reloaded on SIGHUP.',
  }),
  hostingListFiles: setting(list, {
    default: [],
    env: 'ALMANAC_IP_HOSTING_LISTS',
    doc: 'Extra hosting list files (address or CIDR per line), reloaded on SIGHUP.',
  }),
}
