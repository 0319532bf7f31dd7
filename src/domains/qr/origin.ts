/**
 * The origin absolute download links are made for: `ALMANAC_PUBLIC_URL` when set; else the request's
 * own scheme and Host, with `Forwarded` (proto=, host=) or `X-Forwarded-Proto`/`X-Forwarded-Host`
 * believed only when the TCP peer is a trusted proxy (`ALMANAC_TRUSTED_PROXIES`), like the client address
 * in `http/client-ip.ts`. The nearest proxy's value (the last one) wins.
 */
import { parseIp } from '../../lib/ip-address.ts'
import type { TrustedProxies } from '../../http/client-ip.ts'

/** A host[:port] as it may appear in a URL: letters, digits, dots, dashes, a bracketed IPv6, a port. */
const HOST = /^(?:[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,20}|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/

const last = (header: string | null) => header?.split(',').at(-1)?.trim() || undefined

/** `proto` and `host` of the last element of a Forwarded header (RFC 7239). */
function forwarded(header: string | null): { proto?: string; host?: string } {
  const element = last(header)
  if (!element) return {}
  const out: { proto?: string; host?: string } = {}
  for (const pair of element.split(';')) {
    const eq = pair.indexOf('=')
    if (eq < 0) continue
    const key = pair.slice(0, eq).trim().toLowerCase()
    let value = pair.slice(eq + 1).trim()
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1)
    if (key === 'proto' || key === 'host') out[key] = value
  }
  return out
}

export function publicOrigin(request: Request, peer: string | null | undefined, trusted: TrustedProxies, configured?: string): string {
  if (configured) return configured
  const own = new URL(request.url)
  let proto = own.protocol.slice(0, -1)
  // Bun builds request.url from the Host header; reading the header also serves requests made in-process.
  const hostHeader = request.headers.get('host')
  let host = hostHeader && hostHeader.length <= 300 && HOST.test(hostHeader) ? hostHeader : own.host
  const peerIp = peer ? parseIp(peer) : null
  if (peerIp && typeof peerIp !== 'string' && trusted.contains(peerIp)) {
    const f = forwarded(request.headers.get('forwarded'))
    const p = (f.proto ?? last(request.headers.get('x-forwarded-proto')))?.toLowerCase()
    const h = f.host ?? last(request.headers.get('x-forwarded-host'))
    if (p === 'http' || p === 'https') proto = p
    if (h && h.length <= 300 && HOST.test(h)) host = h
  }
  return `${proto}://${host}`
}
