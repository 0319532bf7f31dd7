/**
 * Mailbox syntax per RFC 5321 §4.1.2 (Local-part "@" ( Domain / address-literal )) with the RFC 6531
 * extensions (UTF-8 in atext and qtext, U-labels in the domain), and the size limits of §4.5.3.1.
 * Hand-written, one pass per part, no regular expressions: the input is bounded by the route schema and
 * every loop is linear in it. U-labels are turned into A-labels with WHATWG `domainToASCII` (UTS #46),
 * and the limits on labels and the domain are counted on the A-label form, the one DNS sees. One rule
 * beyond the grammar: the domain must have at least two labels (an internet address; see parseMailbox).
 */
import { domainToASCII } from 'node:url'
import { parseIp } from '../../lib/ip-address.ts'

/** Why an address is not a valid mailbox; documented in docs/email.md. */
export type SyntaxReason =
  | 'empty'
  | 'too_long'
  | 'invalid_unicode'
  | 'missing_at'
  | 'local_part_empty'
  | 'local_part_too_long'
  | 'local_part_invalid_character'
  | 'local_part_dot'
  | 'quoted_string_unterminated'
  | 'quoted_string_invalid_character'
  | 'domain_empty'
  | 'domain_too_long'
  | 'domain_invalid_character'
  | 'label_empty'
  | 'label_too_long'
  | 'label_hyphen'
  | 'invalid_idn'
  | 'numeric_tld'
  | 'single_label_domain'
  | 'address_literal_invalid'
  | 'address_literal_unregistered_tag'

export type Mailbox =
  | {
      valid: true
      /** Lower-case A-label domain, or the address literal with its brackets. */
      domain: string
      addressLiteral: boolean
      /** `local@domain` with the local part as written and the A-label domain: what the checks use. */
      normalized: string
    }
  | { valid: false; reason: SyntaxReason }

const invalid = (reason: SyntaxReason): Mailbox => ({ valid: false, reason })

/** RFC 5322 atext, ASCII part: ALPHA / DIGIT / "!#$%&'*+-/=?^_`{|}~". */
const ATEXT = new Uint8Array(128)
for (const c of "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-/=?^_`{|}~") ATEXT[c.charCodeAt(0)] = 1

const isLetDig = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122)

/** UTF-8 octets of a well-formed JS string (lone surrogates are rejected before this is called). */
function utf8Length(s: string, from = 0, to = s.length): number {
  let n = 0
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x80) n += 1
    else if (c < 0x800) n += 2
    else if (c >= 0xd800 && c <= 0xdbff) {
      n += 4
      i++
    } else n += 3
  }
  return n
}

/** False for lone surrogates (not encodable as UTF-8, so not RFC 6531 text). */
function wellFormed(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1)
      if (!(next >= 0xdc00 && next <= 0xdfff)) return false
      i++
    } else if (c >= 0xdc00 && c <= 0xdfff) return false
  }
  return true
}

/**
 * RFC 6531 UTF8-non-ascii, as JS code units: anything from U+0080 except the C1 controls (U+0080-U+009F),
 * which RFC 6531 §3.3 leaves out by reference to RFC 6532 ("MUST NOT" be used in the mail header).
 */
const isUtf8NonAscii = (c: number) => c >= 0xa0

/** Scans a Dot-string local part from 0; returns the index of the `@` or a reason. */
function scanDotString(s: string): number | SyntaxReason {
  let atomLength = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c === 64) {
      if (i === 0) return 'local_part_empty'
      if (atomLength === 0) return 'local_part_dot'
      return i
    }
    if (c === 46) {
      if (atomLength === 0) return 'local_part_dot'
      atomLength = 0
      continue
    }
    if (c < 128 ? ATEXT[c] === 1 : isUtf8NonAscii(c)) atomLength++
    else return 'local_part_invalid_character'
  }
  return 'missing_at'
}

/** Scans a Quoted-string local part from 0 (s[0] is `"`); returns the index of the `@` or a reason. */
function scanQuotedString(s: string): number | SyntaxReason {
  for (let i = 1; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c === 92) {
      // quoted-pairSMTP = %d92 %d32-126
      const next = s.charCodeAt(i + 1)
      if (!(next >= 32 && next <= 126)) return i + 1 >= s.length ? 'quoted_string_unterminated' : 'quoted_string_invalid_character'
      i++
      continue
    }
    if (c === 34) {
      if (i + 1 >= s.length) return 'missing_at'
      return s.charCodeAt(i + 1) === 64 ? i + 1 : 'local_part_invalid_character'
    }
    // qtextSMTP = %d32-33 / %d35-91 / %d93-126, plus UTF8-non-ascii
    if (!((c >= 32 && c <= 126) || isUtf8NonAscii(c))) return 'quoted_string_invalid_character'
  }
  return 'quoted_string_unterminated'
}

/** Snum 3("." Snum), Snum = 1*3DIGIT with a value up to 255. */
function isIpv4Literal(s: string): boolean {
  const parts = s.split('.')
  if (parts.length !== 4) return false
  for (const p of parts) {
    if (p.length < 1 || p.length > 3) return false
    for (let i = 0; i < p.length; i++) if (p.charCodeAt(i) < 48 || p.charCodeAt(i) > 57) return false
    if (Number(p) > 255) return false
  }
  return true
}

function checkAddressLiteral(inner: string): SyntaxReason | null {
  if (isIpv4Literal(inner)) return null
  const colon = inner.indexOf(':')
  if (colon < 0) return 'address_literal_invalid'
  const tag = inner.slice(0, colon)
  if (tag.toLowerCase() === 'ipv6') {
    const ip = parseIp(inner.slice(colon + 1))
    // Zones and prefixes are not IPv6-addr; parseIp refuses them. An IPv4-mapped address parses as IPv4.
    return typeof ip !== 'string' && (ip.version === 6 || inner.slice(colon + 1).includes(':')) ? null : 'address_literal_invalid'
  }
  // General-address-literal = Standardized-tag ":" 1*dcontent; IANA has registered no tag besides IPv6.
  for (let i = 0; i < tag.length; i++) {
    const c = tag.charCodeAt(i)
    if (!(isLetDig(c) || c === 45)) return 'address_literal_invalid'
  }
  if (!tag.length || tag.endsWith('-') || colon + 1 >= inner.length) return 'address_literal_invalid'
  for (let i = colon + 1; i < inner.length; i++) {
    const c = inner.charCodeAt(i)
    // dcontent = %d33-90 / %d94-126
    if (!((c >= 33 && c <= 90) || (c >= 94 && c <= 126))) return 'address_literal_invalid'
  }
  return 'address_literal_unregistered_tag'
}

/** Checks an A-label domain: LDH labels of 1-63 octets, not starting or ending with a hyphen. */
function checkAsciiDomain(domain: string): SyntaxReason | null {
  if (domain.length > 253) return 'domain_too_long'
  let labelStart = 0
  let allDigits = true
  for (let i = 0; i <= domain.length; i++) {
    const c = i < domain.length ? domain.charCodeAt(i) : 46
    if (c === 46) {
      const length = i - labelStart
      if (length === 0) return 'label_empty'
      if (length > 63) return 'label_too_long'
      if (domain.charCodeAt(labelStart) === 45 || domain.charCodeAt(i - 1) === 45) return 'label_hyphen'
      if (i === domain.length && allDigits) return 'numeric_tld'
      labelStart = i + 1
      allDigits = true
      continue
    }
    if (c >= 48 && c <= 57) continue
    allDigits = false
    if (!(isLetDig(c) || c === 45)) return 'domain_invalid_character'
  }
  return null
}

export function parseMailbox(input: string): Mailbox {
  if (input.length === 0) return invalid('empty')
  if (!wellFormed(input)) return invalid('invalid_unicode')

  const at = input.charCodeAt(0) === 34 ? scanQuotedString(input) : scanDotString(input)
  if (typeof at === 'string') return invalid(at)
  if (utf8Length(input, 0, at) > 64) return invalid('local_part_too_long')
  const local = input.slice(0, at)
  const rawDomain = input.slice(at + 1)
  if (!rawDomain.length) return invalid('domain_empty')

  if (rawDomain.charCodeAt(0) === 91) {
    if (rawDomain.charCodeAt(rawDomain.length - 1) !== 93) return invalid('address_literal_invalid')
    const reason = checkAddressLiteral(rawDomain.slice(1, -1))
    if (reason) return invalid(reason)
    if (utf8Length(local) + 1 + rawDomain.length > 254) return invalid('too_long')
    return { valid: true, domain: rawDomain, addressLiteral: true, normalized: `${local}@${rawDomain}` }
  }

  let ascii = true
  for (let i = 0; i < rawDomain.length; i++) {
    const c = rawDomain.charCodeAt(i)
    if (c >= 128) ascii = false
    else if (!(isLetDig(c) || c === 45 || c === 46)) return invalid('domain_invalid_character')
  }
  let domain = rawDomain
  if (!ascii) {
    // Empty labels first: UTS #46 would quietly drop a trailing dot.
    if (rawDomain.startsWith('.') || rawDomain.endsWith('.') || rawDomain.includes('..')) return invalid('label_empty')
    for (let i = 0; i < rawDomain.length; i++)
      if (rawDomain.charCodeAt(i) >= 128 && !isUtf8NonAscii(rawDomain.charCodeAt(i))) return invalid('domain_invalid_character')
    domain = domainToASCII(rawDomain)
    if (!domain) return invalid('invalid_idn')
  } else {
    domain = rawDomain.toLowerCase()
    // An A-label must be valid Punycode of a valid U-label (RFC 5890 §2.3.2.1): `xn--zz` is not.
    if (domain.includes('xn--') && !domainToASCII(domain)) return invalid('invalid_idn')
  }
  const reason = checkAsciiDomain(domain)
  if (reason) return invalid(!ascii && reason === 'domain_invalid_character' ? 'invalid_idn' : reason)
  // RFC 5321's grammar allows a dotless domain (`postmaster@localhost`), but it names no internet host:
  // it resolves only by a local search list, and dotless mail domains are barred for TLDs (ICANN SAC053).
  if (!domain.includes('.')) return invalid('single_label_domain')
  // 256-octet path including "<" and ">" (RFC 5321 §4.5.3.1.3), counted with the A-label domain.
  if (utf8Length(local) + 1 + domain.length > 254) return invalid('too_long')
  return { valid: true, domain, addressLiteral: false, normalized: `${local}@${domain}` }
}
