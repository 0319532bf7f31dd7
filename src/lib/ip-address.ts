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

/** Hex digit values by character code, either case (-1: not a hex digit). */
const HEX = new Int8Array(128).fill(-1)
for (let c = 0; c < 10; c++) HEX[48 + c] = c
for (let c = 0; c < 6; c++) HEX[97 + c] = HEX[65 + c] = 10 + c

/**
 * The IPv6 scanner's output: the eight 16-bit groups of the last address scanned. One buffer for the
 * process (JS runs one call at a time), so scanning allocates nothing.
 */
const GROUPS = new Int32Array(8)

const NOT_V6 = -1
const NOT_CANONICAL = 0
const CANONICAL = 1

/**
 * Scans IPv6 text (an optional trailing dotted quad in place of the last two groups) into GROUPS in
 * one pass, without split, regex or allocation. Returns NOT_V6, or whether the text is already the
 * RFC 5952 form (lower case, no leading zeros, the longest run of two or more zero groups — the first
 * of equal runs — written `::`, no dotted quad), so the canonical text is built only when it differs.
 */
function scanV6(s: string): number {
  const n = s.length
  if (n < 2) return NOT_V6
  let i = 0
  let count = 0
  let gap = -1
  let canonical = true
  // Digits and lower-case hex letters have bit 0x20 set, upper-case ones do not: ANDed over every
  // digit, it says whether any was upper case without a branch in the loop (a branch there costs 2x).
  let lower = 0x20
  if (s.charCodeAt(0) === 58) {
    if (s.charCodeAt(1) !== 58) return NOT_V6
    gap = 0
    i = 2
  }
  while (i < n) {
    if (count === 8) return NOT_V6
    const start = i
    let value = 0
    let c = 0
    for (; i < n; i++) {
      c = s.charCodeAt(i)
      const h = c < 128 ? HEX[c]! : -1
      if (h < 0) break
      value = (value << 4) | h
      lower &= c
    }
    const digits = i - start
    if (i < n && c === 46) {
      // A dotted quad ends the address in place of the last two groups.
      if (count > 6) return NOT_V6
      const v4 = dottedQuad(s, start, n)
      if (v4 < 0) return NOT_V6
      GROUPS[count++] = v4 >>> 16
      GROUPS[count++] = v4 & 0xffff
      canonical = false
      break
    }
    if (digits === 0 || digits > 4) return NOT_V6
    if (digits > 1 && s.charCodeAt(start) === 48) canonical = false
    GROUPS[count++] = value
    if (i === n) break
    if (c !== 58) return NOT_V6
    if (++i === n) return NOT_V6 // one trailing colon
    if (s.charCodeAt(i) === 58) {
      if (gap >= 0) return NOT_V6 // a second `::`
      gap = count
      i++
    }
  }
  if (gap < 0) {
    if (count !== 8) return NOT_V6
  } else {
    if (count > 7) return NOT_V6
    // Open the gap: move the groups after `::` to the end, zeros between.
    const fill = 8 - count
    for (let k = count - 1; k >= gap; k--) GROUPS[k + fill] = GROUPS[k]!
    for (let k = gap; k < gap + fill; k++) GROUPS[k] = 0
  }
  if (!canonical || (lower & 0x20) === 0) return NOT_CANONICAL
  const best = longestZeroRun(GROUPS)
  if (best < 0) return gap < 0 ? CANONICAL : NOT_CANONICAL
  // The `::` must stand exactly for the longest run: same start, same length.
  return gap === (best & 15) && 8 - count === best >>> 4 ? CANONICAL : NOT_CANONICAL
}

/** The longest run of two or more zero groups (the first of equal ones) as start | length << 4, or -1. */
function longestZeroRun(g: ArrayLike<number>): number {
  let bestStart = -1
  let bestLen = 1
  for (let i = 0; i < 8; ) {
    if (g[i] !== 0) {
      i++
      continue
    }
    let j = i + 1
    while (j < 8 && g[j] === 0) j++
    if (j - i > bestLen) {
      bestStart = i
      bestLen = j - i
    }
    i = j
  }
  return bestStart < 0 ? -1 : bestStart | (bestLen << 4)
}

export const formatV4 = (v: number) => `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`

/** RFC 5952 text of eight groups: lower case, no leading zeros, the longest run (>= 2) of zero groups as `::`. */
function formatGroups(g: ArrayLike<number>): string {
  const best = longestZeroRun(g)
  const bestStart = best < 0 ? -1 : best & 15
  const bestEnd = best < 0 ? -1 : bestStart + (best >>> 4)
  let out = ''
  for (let i = 0; i < 8; i++) {
    if (i === bestStart) {
      out += '::'
      i = bestEnd - 1
      continue
    }
    if (i !== 0 && i !== bestEnd) out += ':'
    const v = g[i]!
    out += GROUP_TEXT[v] ?? (GROUP_TEXT[v] = v.toString(16))
  }
  return out
}

/** Hex text of group values met so far (at most 65,536 short strings): formatting then allocates only the result. */
const GROUP_TEXT: (string | undefined)[] = new Array(65536)

/** RFC 5952 text of an IPv6 address given as four u32 words. */
export function formatV6(words: ArrayLike<number>): string {
  const g = SPLIT
  for (let k = 0; k < 4; k++) {
    g[2 * k] = words[k]! >>> 16
    g[2 * k + 1] = words[k]! & 0xffff
  }
  return formatGroups(g)
}
const SPLIT = new Int32Array(8)

/** The address in GROUPS, just scanned from `input` (`canonical`: the text can be kept as it is). */
function fromGroups(input: string, canonical: boolean): IpAddress {
  const g = GROUPS
  const w0 = ((g[0]! << 16) | g[1]!) >>> 0
  const w1 = ((g[2]! << 16) | g[3]!) >>> 0
  const w2 = ((g[4]! << 16) | g[5]!) >>> 0
  const w3 = ((g[6]! << 16) | g[7]!) >>> 0
  if (w0 === 0 && w1 === 0 && w2 === 0xffff) return { version: 4, text: formatV4(w3), v4: w3, v6: null }
  return { version: 6, text: canonical ? input : formatGroups(g), v4: 0, v6: [w0, w1, w2, w3] }
}

/**
 * Parses an address. Returns the address, or a sentence saying what is wrong with the input (a port, a
 * zone, a network, or simply not an address) — callers turn that into a problem naming the field.
 * The common case — a plain address — is one scan with no intermediate strings or arrays; the text is
 * the input itself when it is already canonical.
 */
export function parseIp(input: string): IpAddress | string {
  const v4 = dottedQuad(input, 0, input.length)
  if (v4 >= 0) return { version: 4, text: input, v4, v6: null }
  const scan = scanV6(input)
  if (scan !== NOT_V6) return fromGroups(input, scan === CANONICAL)
  const s = input.trim()
  if (!s) return 'is empty; expected an IPv4 or IPv6 address'
  if (s !== input) return parseIp(s)
  if (s.indexOf(':') < 0 && parseV4Loose(s))
    return 'is not a valid IPv4 address: each of the four parts must be 0-255 without leading zeros'
  return describeBadAddress(s)
}

/** Four dot-separated digit groups, whatever their values (to give a more precise message). */
const parseV4Loose = (s: string) => /^\d+\.\d+\.\d+\.\d+$/.test(s)

function describeBadAddress(s: string): string {
  const zone = s.indexOf('%')
  if (zone > 0 && typeof parseIp(s.slice(0, zone)) !== 'string')
    return `carries a zone index (${s.slice(zone)}); zones are local to one host, send the address alone`
  const slash = s.indexOf('/')
  if (slash > 0 && typeof parseIp(s.slice(0, slash)) !== 'string') return 'is a network (CIDR notation), not a single address'
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(s)
  if (bracketed) {
    if (typeof parseIp(bracketed[1]!) === 'string') return 'is not an IPv4 or IPv6 address'
    return bracketed[2] ? `carries a port (:${bracketed[2]}); send the address alone` : 'is bracketed; send the address without brackets'
  }
  const port = /^(\d+\.\d+\.\d+\.\d+):(\d+)$/.exec(s)
  if (port && dottedQuad(port[1]!, 0, port[1]!.length) >= 0) return `carries a port (:${port[2]}); send the address alone`
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
