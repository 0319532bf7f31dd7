/**
 * The origin absolute download links are made for: `ALMANAC_PUBLIC_URL` when set; else the request's
 * own scheme and Host, with the scheme and host a trusted proxy reports (`http/edge/client-ip.ts`: only the
 * forwarding header `ALMANAC_TRUSTED_PROXY_HEADER` names, only from `ALMANAC_TRUSTED_PROXIES`).
 */
import { proxiedOrigin, type TrustedProxies } from '../../http/edge/client-ip.ts'

/** A host[:port] as it may appear in a URL: letters, digits, dots, dashes, a bracketed IPv6, a port. */
const HOST = /^(?:[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,20}|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/

const validHost = (h: string | null | undefined): h is string => !!h && h.length <= 300 && HOST.test(h)

export function publicOrigin(request: Request, peer: string | null | undefined, trusted: TrustedProxies, configured?: string): string {
  if (configured) return configured
  const own = new URL(request.url)
  let proto = own.protocol.slice(0, -1)
  // Bun builds request.url from the Host header; reading the header also serves requests made in-process.
  const hostHeader = request.headers.get('host')
  let host = validHost(hostHeader) ? hostHeader : own.host
  const proxied = proxiedOrigin(request.headers, peer, trusted)
  const p = proxied.proto?.toLowerCase()
  if (p === 'http' || p === 'https') proto = p
  if (validHost(proxied.host)) host = proxied.host
  return `${proto}://${host}`
}
