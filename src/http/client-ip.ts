/**
 * The client's address: the TCP peer, unless the peer is a proxy the operator trusts
 * (`ALMANAC_TRUSTED_PROXIES`, addresses or CIDRs, IPv4 and IPv6). Only then are `Forwarded` (RFC 7239,
 * preferred) or `X-Forwarded-For` believed, walked from the right — the hop nearest to us — skipping
 * hops that are themselves trusted proxies. The first untrusted hop is the client; anything left of it
 * was written by the client and could be forged.
 *
 * The peer comes from Elysia's `server?.requestIP(request)`; without a server (app.handle in tests, or
 * a Unix socket) the peer is unknown and so is the client.
 */
import { cidrContains, parseCidr, parseIp, type Cidr, type IpAddress } from '../lib/ip-address.ts'

export interface TrustedProxies {
  readonly networks: readonly Cidr[]
  contains(ip: IpAddress): boolean
}

/** Parses the configured list; throws naming the bad entry (so a typo cannot silently trust nobody). */
export function trustedProxies(entries: readonly string[], settingName = 'ALMANAC_TRUSTED_PROXIES'): TrustedProxies {
  const networks = entries.map((entry) => {
    const cidr = parseCidr(entry)
    if (typeof cidr === 'string') throw new Error(`${settingName}: ${JSON.stringify(entry)} ${cidr}`)
    return cidr
  })
  return { networks, contains: (ip) => networks.some((n) => cidrContains(n, ip)) }
}

export interface ClientAddress {
  /** The client's address, or null when the peer is unknown. */
  ip: IpAddress | null
  /** Where it was read: the TCP peer, or a forwarding header sent by a trusted proxy. */
  via: 'peer' | 'forwarded' | 'x-forwarded-for' | 'unknown'
}

/** Strips brackets and a port from one hop (`[2001:db8::1]:443`, `1.2.3.4:80`, quoted forms). */
function hopAddress(raw: string): IpAddress | null {
  let s = raw.trim()
  if (s.startsWith('"') && s.endsWith('"') && s.length >= 2) s = s.slice(1, -1).trim()
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

/** The `for=` values of a Forwarded header, in order (unparseable hops as null). */
function forwardedChain(header: string): (IpAddress | null)[] {
  const out: (IpAddress | null)[] = []
  for (const element of header.split(',')) {
    let hop: IpAddress | null | undefined
    for (const pair of element.split(';')) {
      const eq = pair.indexOf('=')
      if (eq < 0 || pair.slice(0, eq).trim().toLowerCase() !== 'for') continue
      hop = hopAddress(pair.slice(eq + 1))
    }
    if (hop !== undefined) out.push(hop)
  }
  return out
}

const xffChain = (header: string) =>
  header
    .split(',')
    .filter((s) => s.trim())
    .map(hopAddress)

/**
 * Resolves the client address of one request. `peer` is what the server says the TCP peer is
 * (`server?.requestIP(request)?.address`); pass null when there is no server.
 */
export function clientAddress(headers: Headers, peer: string | null | undefined, trusted: TrustedProxies): ClientAddress {
  if (!peer) return { ip: null, via: 'unknown' }
  const parsed = parseIp(peer)
  if (typeof parsed === 'string') return { ip: null, via: 'unknown' }
  if (!trusted.contains(parsed)) return { ip: parsed, via: 'peer' }

  const forwarded = headers.get('forwarded')
  const xff = forwarded ? null : headers.get('x-forwarded-for')
  const chain = forwarded ? forwardedChain(forwarded) : xff ? xffChain(xff) : []
  const via = forwarded ? 'forwarded' : 'x-forwarded-for'
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
  return { ip: client, via: fromHeader ? via : 'peer' }
}
