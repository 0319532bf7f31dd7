/**
 * What a trusted proxy says about the request: the client's address, and the scheme and host the client
 * asked for. The TCP peer is the client unless it is a proxy the operator trusts (`ALMANAC_TRUSTED_PROXIES`,
 * addresses or CIDRs, IPv4 and IPv6). Only then is the one forwarding header that proxy sets believed
 * (`ALMANAC_TRUSTED_PROXY_HEADER`): `X-Forwarded-For` (with `X-Forwarded-Proto`/`X-Forwarded-Host`) or
 * `Forwarded` (RFC 7239, its for=, proto=, host=). The other is ignored entirely: a proxy that only appends
 * `X-Forwarded-For` passes the client's own `Forwarded` through untouched, so believing both let any client
 * choose its address and the host of its links.
 *
 * Addresses are walked from the right — the hop nearest to us — skipping hops that are themselves trusted
 * proxies. The first untrusted hop is the client; anything left of it was written by the client and could
 * be forged. Scheme and host are the nearest proxy's (the last value).
 *
 * The peer comes from Elysia's `server?.requestIP(request)`; without a server (app.handle in tests, or
 * a Unix socket) the peer is unknown and so is the client.
 */
import { cidrContains, parseCidr, parseIp, type Cidr, type IpAddress } from '../../lib/ip-address.ts'

/** The forwarding headers a trusted proxy may be set to speak, as `ALMANAC_TRUSTED_PROXY_HEADER` names them. */
export const PROXY_HEADERS = ['x-forwarded-for', 'forwarded'] as const
export type ProxyHeader = (typeof PROXY_HEADERS)[number]

export interface TrustedProxies {
  readonly networks: readonly Cidr[]
  /** The one forwarding header believed from them. */
  readonly header: ProxyHeader
  contains(ip: IpAddress): boolean
}

/** Parses the configured list; throws naming the bad entry (so a typo cannot silently trust nobody). */
export function trustedProxies(
  entries: readonly string[],
  header: ProxyHeader = 'x-forwarded-for',
  settingName = 'ALMANAC_TRUSTED_PROXIES',
): TrustedProxies {
  const networks = entries.map((entry) => {
    const cidr = parseCidr(entry)
    if (typeof cidr === 'string') throw new Error(`${settingName}: ${JSON.stringify(entry)} ${cidr}`)
    return cidr
  })
  return { networks, header, contains: (ip) => networks.some((n) => cidrContains(n, ip)) }
}

export interface ClientAddress {
  /** The client's address, or null when the peer is unknown. */
  ip: IpAddress | null
  /** Where it was read: the TCP peer, or the forwarding header the trusted proxy sets. */
  via: 'peer' | ProxyHeader | 'unknown'
}

/** Whether the TCP peer is a trusted proxy, whose forwarding header may be read. */
function peerIsTrusted(peer: string | null | undefined, trusted: TrustedProxies): IpAddress | null {
  if (!peer) return null
  const ip = parseIp(peer)
  return typeof ip !== 'string' && trusted.contains(ip) ? ip : null
}

const unquote = (s: string) => (s.startsWith('"') && s.endsWith('"') && s.length >= 2 ? s.slice(1, -1).trim() : s)

/** Strips brackets and a port from one hop (`[2001:db8::1]:443`, `1.2.3.4:80`, quoted forms). */
function hopAddress(raw: string): IpAddress | null {
  const s = unquote(raw.trim())
  const direct = parseIp(s)
  if (typeof direct !== 'string') return direct
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(s)
  if (bracketed) {
    const ip = parseIp(bracketed[1]!)
    return typeof ip === 'string' ? null : ip
  }
  const v4port = /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(s)
  if (v4port) {
    const ip = parseIp(v4port[1]!)
    return typeof ip === 'string' ? null : ip
  }
  return null
}

/** The elements of a Forwarded header (RFC 7239), each as its lower-cased parameter names and unquoted values. */
function forwardedElements(header: string): Map<string, string>[] {
  return header.split(',').map((element) => {
    const pairs = new Map<string, string>()
    for (const pair of element.split(';')) {
      const eq = pair.indexOf('=')
      if (eq > 0) pairs.set(pair.slice(0, eq).trim().toLowerCase(), unquote(pair.slice(eq + 1).trim()))
    }
    return pairs
  })
}

/** The hops the named header lists, in order (unparseable hops as null). */
function chainOf(headers: Headers, header: ProxyHeader): (IpAddress | null)[] {
  const value = headers.get(header)
  if (!value) return []
  if (header === 'forwarded') return forwardedElements(value).flatMap((pairs) => (pairs.has('for') ? [hopAddress(pairs.get('for')!)] : []))
  return value
    .split(',')
    .filter((s) => s.trim())
    .map(hopAddress)
}

/**
 * Resolves the client address of one request. `peer` is what the server says the TCP peer is
 * (`server?.requestIP(request)?.address`); pass null when there is no server.
 */
export function clientAddress(headers: Headers, peer: string | null | undefined, trusted: TrustedProxies): ClientAddress {
  if (!peer) return { ip: null, via: 'unknown' }
  const parsed = parseIp(peer)
  if (typeof parsed === 'string') return { ip: null, via: 'unknown' }
  if (!trusted.contains(parsed)) return { ip: parsed, via: 'peer' }

  const chain = chainOf(headers, trusted.header)
  // Walk from the right. An unreadable hop ("unknown", an obfuscated name) ends the walk: what lies
  // beyond it cannot be checked, so the last address we could vouch for is the answer.
  let client: IpAddress = parsed
  let fromHeader = false
  for (let i = chain.length - 1; i >= 0; i--) {
    const hop = chain[i]
    if (!hop) break
    client = hop
    fromHeader = true
    if (!trusted.contains(hop)) break
  }
  return { ip: client, via: fromHeader ? trusted.header : 'peer' }
}

const lastValue = (header: string | null) => header?.split(',').at(-1)?.trim() || undefined

/**
 * The scheme and host the client asked the trusted proxy for, as that proxy's header says (the nearest
 * proxy's value), unchecked; nothing when the peer is not a trusted proxy.
 */
export function proxiedOrigin(
  headers: Headers,
  peer: string | null | undefined,
  trusted: TrustedProxies,
): { proto?: string; host?: string } {
  if (!peerIsTrusted(peer, trusted)) return {}
  if (trusted.header === 'forwarded') {
    const value = headers.get('forwarded')
    const nearest = value ? forwardedElements(value).at(-1) : undefined
    return { proto: nearest?.get('proto'), host: nearest?.get('host') }
  }
  return { proto: lastValue(headers.get('x-forwarded-proto')), host: lastValue(headers.get('x-forwarded-host')) }
}
