/**
 * IP address and CIDR parsing with no dependencies, shared by the ip domain and client address
 * resolution. Addresses are numbers, not strings, so range tables and the MaxMind tree can be walked
 * without allocating: IPv4 is one unsigned 32-bit integer, IPv6 four (most significant first).
 * IPv4-mapped IPv6 (`::ffff:1.2.3.4`) is normalised to IPv4 everywhere.
 */

export interface IpAddress {
  version: 4 | 6
  /** Canonical text: dotted quad, or RFC 5952 (lower case, longest zero run as `::`). */
  text: string
  /** IPv4 as an unsigned 32-bit integer; 0 for IPv6. */
  v4: number
  /** IPv6 as four unsigned 32-bit words, most significant first; null for IPv4. */
  v6: number[] | null
}

export interface Cidr {
  version: 4 | 6
  prefix: number
  /** First and last address of the network (IPv4: word 3 only; words 0-2 are 0). */
  first: number[]
  last: number[]
}

/** Strict dotted quad (no leading zeros, which some parsers read as octal) -> u32, or -1. */
export function parseV4(s: string, from = 0, to = s.length): number {
  return dottedQuad(s, from, to)
}

function dottedQuad(s: string, from: number, to: number): number {
  let value = 0
  let octet = 0
  let digits = 0
  let dots = 0
  let leadingZero = false
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i)
    if (c === 46) {
      if (digits === 0 || dots === 3) return -1
      value = value * 256 + octet
      octet = 0
      digits = 0
      dots++
      continue
    }
    const d = c - 48
    if (d < 0 || d > 9) return -1
    if (digits === 0) leadingZero = d === 0
    else if (leadingZero || digits === 3) return -1
    octet = octet * 10 + d
    if (octet > 255) return -1
    digits++
  }
  if (dots !== 3 || digits === 0) return -1
  return value * 256 + octet
}

const hexValue = (c: number) => (c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1)

/** IPv6 text (with an optional trailing dotted quad) -> 8 groups, or null. */
export function parseV6Groups(s: string): number[] | null {
  const groups: number[] = []
  let gap = -1
  let i = 0
  const n = s.length
  if (n < 2) return null
  if (s.charCodeAt(0) === 58) {
    if (s.charCodeAt(1) !== 58) return null
    gap = 0
    i = 2
    if (i === n) return [0, 0, 0, 0, 0, 0, 0, 0]
  }
  while (i < n) {
    if (groups.length >= 8) return null
    // A dotted quad may end the address in place of the last two groups.
    let j = i
    let value = 0
    while (j < n) {
      const h = hexValue(s.charCodeAt(j))
      if (h < 0) break
      value = value * 16 + h
      j++
    }
    if (j < n && s.charCodeAt(j) === 46) {
      if (groups.length > 6) return null
      const v4 = parseV4(s, i, n)
      if (v4 < 0) return null
      groups.push(v4 >>> 16, v4 & 0xffff)
      i = n
      break
    }
    if (j === i || j - i > 4) return null
    groups.push(value)
    i = j
    if (i === n) break
    if (s.charCodeAt(i) !== 58) return null
    i++
    if (i < n && s.charCodeAt(i) === 58) {
      if (gap >= 0) return null
      gap = groups.length
      i++
      if (i === n) break
    } else if (i === n) return null // a single trailing colon
  }
  if (gap < 0) return groups.length === 8 ? groups : null
  if (groups.length > 7) return null
  const zeros = new Array(8 - groups.length).fill(0)
  return [...groups.slice(0, gap), ...zeros, ...groups.slice(gap)]
}

export const formatV4 = (v: number) => `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`

/** RFC 5952: lower case, no leading zeros, the longest run (>= 2) of zero groups as `::`. */
export function formatV6(words: number[]): string {
  const g = [words[0]! >>> 16, words[0]! & 0xffff, words[1]! >>> 16, words[1]! & 0xffff, words[2]! >>> 16, words[2]! & 0xffff, words[3]! >>> 16, words[3]! & 0xffff]
  let bestStart = -1
  let bestLen = 1
  for (let i = 0; i < 8; ) {
    if (g[i] !== 0) {
      i++
      continue
    }
    let j = i
    while (j < 8 && g[j] === 0) j++
    if (j - i > bestLen) {
      bestStart = i
      bestLen = j - i
    }
    i = j
  }
  let out = ''
  for (let i = 0; i < 8; i++) {
    if (i === bestStart) {
      out += '::'
      i += bestLen - 1
      continue
    }
    if (out !== '' && !out.endsWith(':')) out += ':'
    out += g[i]!.toString(16)
  }
  return out
}

const groupsToWords = (g: number[]) => [((g[0]! << 16) | g[1]!) >>> 0, ((g[2]! << 16) | g[3]!) >>> 0, ((g[4]! << 16) | g[5]!) >>> 0, ((g[6]! << 16) | g[7]!) >>> 0]

/**
 * Parses an address. Returns the address, or a sentence saying what is wrong with the input (a port, a
 * zone, a network, or simply not an address) — callers turn that into a problem naming the field.
 */
export function parseIp(input: string): IpAddress | string {
  const v4 = dottedQuad(input, 0, input.length)
  if (v4 >= 0) return { version: 4, text: input, v4, v6: null }
  const s = input.trim()
  if (s !== input && s) {
    const inner = parseIp(s)
    return inner
  }
  if (!s) return 'is empty; expected an IPv4 or IPv6 address'
  if (s.indexOf(':') >= 0) {
    const groups = parseV6Groups(s)
    if (groups) {
      const words = groupsToWords(groups)
      if (words[0] === 0 && words[1] === 0 && words[2] === 0xffff) return { version: 4, text: formatV4(words[3]!), v4: words[3]!, v6: null }
      return { version: 6, text: formatV6(words), v4: 0, v6: words }
    }
  } else if (parseV4Loose(s)) {
    return 'is not a valid IPv4 address: each of the four parts must be 0-255 without leading zeros'
  }
  return describeBadAddress(s)
}

/** Four dot-separated digit groups, whatever their values (to give a more precise message). */
const parseV4Loose = (s: string) => /^\d+\.\d+\.\d+\.\d+$/.test(s)

function describeBadAddress(s: string): string {
  const zone = s.indexOf('%')
  if (zone > 0 && typeof parseIp(s.slice(0, zone)) !== 'string') return `carries a zone index (${s.slice(zone)}); zones are local to one host, send the address alone`
  const slash = s.indexOf('/')
  if (slash > 0 && typeof parseIp(s.slice(0, slash)) !== 'string') return 'is a network (CIDR notation), not a single address'
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(s)
  if (bracketed) {
    if (typeof parseIp(bracketed[1]!) === 'string') return 'is not an IPv4 or IPv6 address'
    return bracketed[2] ? `carries a port (:${bracketed[2]}); send the address alone` : 'is bracketed; send the address without brackets'
  }
  const port = /^(\d+\.\d+\.\d+\.\d+):(\d+)$/.exec(s)
  if (port && parseV4(port[1]!) >= 0) return `carries a port (:${port[2]}); send the address alone`
  return 'is not an IPv4 or IPv6 address'
}

/** Parses `address` or `address/prefix`, v4 or v6; returns the network or a sentence saying what is wrong. */
export function parseCidr(input: string): Cidr | string {
  const s = input.trim()
  const slash = s.indexOf('/')
  const addr = parseIp(slash < 0 ? s : s.slice(0, slash))
  if (typeof addr === 'string') return addr
  const max = addr.version === 4 ? 32 : 128
  let prefix = max
  if (slash >= 0) {
    const p = s.slice(slash + 1)
    if (!/^\d{1,3}$/.test(p)) return `has a bad prefix length /${p}`
    prefix = Number(p)
    // An IPv4-mapped network written in IPv6 (::ffff:10.0.0.0/104) is the IPv4 network /8.
    if (addr.version === 4 && s.slice(0, slash).includes(':')) prefix -= 96
    if (prefix < 0 || prefix > max) return `has a prefix length outside 0-${max}`
  }
  const words = addr.version === 4 ? [0, 0, 0, addr.v4] : addr.v6!
  const first: number[] = []
  const last: number[] = []
  const base = addr.version === 4 ? 96 : 0
  for (let w = 0; w < 4; w++) {
    const bitsBefore = w * 32 - base
    const keep = Math.max(0, Math.min(32, prefix - bitsBefore))
    const mask = keep === 0 ? 0 : keep === 32 ? 0xffffffff : (0xffffffff << (32 - keep)) >>> 0
    if (addr.version === 4 && w < 3) {
      first.push(0)
      last.push(0)
      continue
    }
    first.push((words[w]! & mask) >>> 0)
    last.push((words[w]! | ~mask) >>> 0)
  }
  return { version: addr.version, prefix, first, last }
}

/** Lexicographic comparison of two 4-word addresses. */
export function compareWords(a: ArrayLike<number>, b: ArrayLike<number>): number {
  for (let i = 0; i < 4; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1
  return 0
}

export function cidrContains(cidr: Cidr, ip: IpAddress): boolean {
  if (cidr.version !== ip.version) return false
  if (ip.version === 4) return ip.v4 >= cidr.first[3]! && ip.v4 <= cidr.last[3]!
  return compareWords(ip.v6!, cidr.first) >= 0 && compareWords(ip.v6!, cidr.last) <= 0
}
