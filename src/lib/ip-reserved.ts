/**
 * Special-purpose ranges (IANA IPv4/IPv6 Special-Purpose Address Registries, RFC 6890 and successors).
 * The ip domain answers them with the range's name and no location, never a guessed place; outbound
 * requests made on a caller's behalf (the email domain's RDAP redirects) refuse them (`isPublicAddress`).
 * Ranges that are globally routable despite being special (6to4, Teredo, AS112) are not listed: the
 * databases answer for them, and they reach the internet.
 */
import { parseCidr, type Cidr, type IpAddress } from './ip-address.ts'

export type ReservedKind =
  | 'unspecified'
  | 'this_network'
  | 'private'
  | 'shared_address_space'
  | 'loopback'
  | 'link_local'
  | 'protocol_assignments'
  | 'documentation'
  | 'benchmarking'
  | 'multicast'
  | 'reserved'
  | 'broadcast'
  | 'unique_local'
  | 'discard_only'
  | 'ipv4_ipv6_translation'

const RANGES: [string, ReservedKind][] = [
  ['0.0.0.0/8', 'this_network'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'shared_address_space'], // carrier-grade NAT, RFC 6598
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link_local'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'protocol_assignments'],
  ['192.0.2.0/24', 'documentation'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['255.255.255.255/32', 'broadcast'],
  ['240.0.0.0/4', 'reserved'],
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['64:ff9b::/96', 'ipv4_ipv6_translation'],
  ['64:ff9b:1::/48', 'ipv4_ipv6_translation'],
  ['100::/64', 'discard_only'],
  ['2001:db8::/32', 'documentation'],
  ['3fff::/20', 'documentation'],
  ['fc00::/7', 'unique_local'],
  ['fe80::/10', 'link_local'],
  ['ff00::/8', 'multicast'],
]

const NETWORKS: { cidr: Cidr; kind: ReservedKind }[] = RANGES.map(([text, kind]) => ({ cidr: parseCidr(text) as Cidr, kind }))
const V4 = NETWORKS.filter((n) => n.cidr.version === 4).map((n) => ({ first: n.cidr.first[3]!, last: n.cidr.last[3]!, kind: n.kind }))
const V6 = NETWORKS.filter((n) => n.cidr.version === 6)

/** First octets that meet a special-purpose IPv4 range: the others skip the scan. */
const V4_OCTETS = new Uint8Array(256)
for (const r of V4) for (let o = r.first >>> 24; o <= r.last >>> 24; o++) V4_OCTETS[o] = 1
/**
 * IPv6 by the first 16 bits: 0 for most public addresses (one array read), else 1 + the index of the
 * few ranges that bucket meets in V6_CANDIDATES. A CIDR block is a product of per-word intervals, so
 * membership is four word comparisons.
 */
const V6_TOPS = new Uint16Array(65536)
const V6_CANDIDATES: { first: number[]; last: number[]; kind: ReservedKind }[][] = []
for (const r of V6) {
  for (let t = r.cidr.first[0]! >>> 16; t <= r.cidr.last[0]! >>> 16; t++) {
    if (V6_TOPS[t] === 0) V6_TOPS[t] = V6_CANDIDATES.push([]) // 1 + index
    V6_CANDIDATES[V6_TOPS[t]! - 1]!.push({ first: r.cidr.first, last: r.cidr.last, kind: r.kind })
  }
}

const inV6 = (w: number[], first: number[], last: number[]) =>
  w[0]! >= first[0]! &&
  w[0]! <= last[0]! &&
  w[1]! >= first[1]! &&
  w[1]! <= last[1]! &&
  w[2]! >= first[2]! &&
  w[2]! <= last[2]! &&
  w[3]! >= first[3]! &&
  w[3]! <= last[3]!

/** The special-purpose range holding the address, or null for an ordinary one. */
export function reservedKind(ip: IpAddress): ReservedKind | null {
  if (ip.version === 4) {
    const v = ip.v4
    if (V4_OCTETS[v >>> 24] === 0) return null
    for (const r of V4) if (v >= r.first && v <= r.last) return r.kind
    return null
  }
  const w = ip.v6!
  const bucket = V6_TOPS[w[0]! >>> 16]!
  if (bucket === 0) return null
  for (const r of V6_CANDIDATES[bucket - 1]!) if (inV6(w, r.first, r.last)) return r.kind
  return null
}

export const RESERVED_NETWORKS = RANGES

/**
 * An address on the public internet: in no special-purpose range (loopback, private, link-local,
 * unique-local, multicast, documentation …), and not IPv4-compatible IPv6 (`::a.b.c.d`, ::/96, deprecated
 * by RFC 4291, which some stacks still reach as the IPv4 address it holds).
 */
export const isPublicAddress = (ip: IpAddress): boolean =>
  reservedKind(ip) === null && !(ip.version === 6 && ip.v6![0] === 0 && ip.v6![1] === 0 && ip.v6![2] === 0)
