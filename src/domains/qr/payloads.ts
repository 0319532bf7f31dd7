/**
 * The text each preset encodes, with the escaping its readers expect. Pure functions over bodies the
 * route schema already bounded; semantic checks (a URL's scheme, a WPA key's length) throw 422 naming
 * the field. docs/qr.md shows every format.
 */
import { invalid } from '../../lib/errors.ts'

export const PRESETS = ['text', 'url', 'wifi', 'vcard', 'email', 'sms', 'geo'] as const
export type Preset = (typeof PRESETS)[number]

export const LIMITS = {
  text: 4296,
  url: 2048,
  ssid: 32,
  password: 63,
  wpaMin: 8,
  sms: 160,
  name: 200,
  phone: 32,
  email: 254,
  org: 200,
  address: 500,
  subject: 500,
  body: 2000,
} as const

/** C0 controls, DEL and C1 controls: never part of a URL, phone number or address. */
const hasControl = (s: string) => {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return true
  }
  return false
}

/** text: verbatim. */
export const textPayload = (body: { text: string }) => body.text

/**
 * url: verbatim, once it is an absolute URL: a scheme (`https:`, `mailto:`, `otpauth:` ...) that the WHATWG
 * URL parser accepts, and no spaces or control characters (RFC 3986 has none).
 */
export function urlPayload(body: { url: string }, field = 'url'): string {
  const url = body.url
  if (!/^[A-Za-z][A-Za-z0-9+.-]{0,31}:/.test(url)) throw invalid(field, 'must be an absolute URL beginning with a scheme such as https:')
  if (hasControl(url) || url.includes(' ')) throw invalid(field, 'must not contain spaces or control characters; percent-encode them (%20)')
  if (!URL.canParse(url)) throw invalid(field, 'is not a valid URL')
  return url
}

/** WiFi (ZXing's WIFI: format): `\ ; , : "` in the SSID and password are escaped with a backslash. */
export const wifiEscape = (s: string) => s.replace(/[\\;,:"]/g, (c) => '\\' + c)

export interface WifiBody {
  ssid: string
  password?: string
  encryption?: 'WPA' | 'WEP' | 'nopass'
  hidden?: boolean
}

/**
 * The SPEC makes `password` optional and WPA the default. With neither `encryption` nor a password, the
 * network asked for is an open one: it is encoded as `T:nopass` (ZXing reads a missing or `nopass` type as
 * open) and `warn` says so. A WPA network named without a passphrase, or WEP without a key, cannot be
 * encoded: 422.
 */
export function wifiPayload(body: WifiBody, warn: (warning: string) => void = () => {}): string {
  const password = body.password ?? ''
  let encryption = body.encryption
  if (encryption === undefined) {
    encryption = password ? 'WPA' : 'nopass'
    if (!password)
      warn('no password and no encryption given: encoded as an open network (T:nopass); send encryption and password for a protected one')
  }
  const ssidBytes = Buffer.byteLength(body.ssid, 'utf8')
  if (ssidBytes > 32) throw invalid('ssid', `is ${ssidBytes} bytes of UTF-8; an SSID holds at most 32 bytes`)
  if (encryption === 'nopass' && password) throw invalid('password', 'must be absent for an open network (encryption nopass)')
  if (encryption === 'WPA' && [...password].length < LIMITS.wpaMin)
    throw invalid('password', `a WPA passphrase is ${LIMITS.wpaMin} to ${LIMITS.password} characters`)
  if (encryption === 'WEP' && !password) throw invalid('password', 'is required for WEP')
  const p = encryption === 'nopass' ? '' : `P:${wifiEscape(password)};`
  return `WIFI:T:${encryption};S:${wifiEscape(body.ssid)};${p}H:${body.hidden ? 'true' : 'false'};;`
}

/** vCard TEXT value escaping (RFC 6350 3.4, as RFC 2426 for 3.0): `\`, `,`, `;` and newlines. */
export const vcardEscape = (s: string) =>
  s.replace(/\r\n|[\r\n\\,;]/g, (c) => (c === '\\' ? '\\\\' : c === ',' ? '\\,' : c === ';' ? '\\;' : '\\n'))

/**
 * Folds a content line at 75 octets (RFC 6350 3.2): continuation lines start with one space and carry
 * up to 74 octets of the rest, never splitting a UTF-8 sequence (a surrogate pair stays whole).
 */
export function foldLine(line: string): string {
  if (Buffer.byteLength(line, 'utf8') <= 75) return line
  const out: string[] = []
  let current = ''
  let bytes = 0
  let limit = 75
  for (const ch of line) {
    const size = Buffer.byteLength(ch, 'utf8')
    if (bytes + size > limit) {
      out.push(current)
      current = ''
      bytes = 0
      limit = 74
    }
    current += ch
    bytes += size
  }
  out.push(current)
  return out.join('\r\n ')
}

export interface VcardBody {
  name: string
  phone?: string
  email?: string
  org?: string
  address?: string
  url?: string
}

const PHONE = /^\+?[0-9][0-9 ().-]*$/

function checkPhone(phone: string, field: string) {
  if (!PHONE.test(phone) || phone.replace(/\D/g, '').length > 20)
    throw invalid(field, 'a phone number is digits with an optional leading +, spaces, dots, dashes and parentheses (at most 20 digits)')
}

/** addr-spec shape: one @, a non-empty local part and a dotted or bracketed domain; no spaces or controls. */
function checkEmail(email: string, field: string) {
  const at = email.lastIndexOf('@')
  if (at < 1 || at === email.length - 1 || hasControl(email) || /[\s,<>]/.test(email) || email.indexOf('@') !== at)
    throw invalid(field, 'must be one email address such as name@example.com')
}

/**
 * vCard 3.0. N is split at the last space (family name last, the rest given names: a heuristic, stated
 * in the docs); FN is the name as given; ADR carries the address as its street component.
 */
export function vcardPayload(body: VcardBody): string {
  const name = body.name.trim()
  if (!name) throw invalid('name', 'must not be blank')
  if (body.phone) checkPhone(body.phone, 'phone')
  if (body.email) checkEmail(body.email, 'email')
  if (body.url) urlPayload({ url: body.url }, 'url')
  const space = name.lastIndexOf(' ')
  const family = space < 0 ? name : name.slice(space + 1)
  const given = space < 0 ? '' : name.slice(0, space).trim()
  const lines = ['BEGIN:VCARD', 'VERSION:3.0', `N:${vcardEscape(family)};${vcardEscape(given)};;;`, `FN:${vcardEscape(name)}`]
  if (body.org) lines.push(`ORG:${vcardEscape(body.org)}`)
  if (body.phone) lines.push(`TEL:${body.phone}`)
  if (body.email) lines.push(`EMAIL:${vcardEscape(body.email)}`)
  if (body.address) lines.push(`ADR:;;${vcardEscape(body.address)};;;;`)
  if (body.url) lines.push(`URL:${body.url}`)
  lines.push('END:VCARD')
  return lines.map(foldLine).join('\r\n') + '\r\n'
}

/** Percent-encodes the UTF-8 bytes of every character outside `keep` (RFC 3986 unreserved at least). */
function percentEncode(s: string, keep: RegExp): string {
  let out = ''
  for (const ch of s) {
    if (keep.test(ch)) out += ch
    else for (const b of Buffer.from(ch, 'utf8')) out += '%' + b.toString(16).toUpperCase().padStart(2, '0')
  }
  return out
}

const UNRESERVED = /^[A-Za-z0-9\-._~]$/
const ADDRESS = /^[A-Za-z0-9\-._~@+]$/

/**
 * mailto: (RFC 6068): the address with `@` and `+` kept and anything else outside the unreserved set
 * percent-encoded; `subject` and `body` percent-encoded byte by byte as UTF-8 (a space is %20, never +),
 * line breaks in the body as %0D%0A.
 */
export function emailPayload(body: { to: string; subject?: string; body?: string }): string {
  checkEmail(body.to, 'to')
  const fields: string[] = []
  if (body.subject) fields.push('subject=' + percentEncode(body.subject, UNRESERVED))
  if (body.body) fields.push('body=' + percentEncode(body.body.replace(/\r\n|\r|\n/g, '\r\n'), UNRESERVED))
  return `mailto:${percentEncode(body.to, ADDRESS)}${fields.length ? '?' + fields.join('&') : ''}`
}

/** SMSTO:<phone>:<message> (ZXing's format). The message is verbatim: the format has no escaping. */
export function smsPayload(body: { phone: string; message?: string }): string {
  checkPhone(body.phone, 'phone')
  return `SMSTO:${body.phone}:${body.message ?? ''}`
}

/** A coordinate in plain decimal (RFC 5870 allows no exponent), at most 7 decimals (about 1 cm). */
export function coordinate(n: number): string {
  const s = n.toFixed(7).replace(/\.?0+$/, '')
  return s === '-0' ? '0' : s
}

/** geo: URI (RFC 5870), WGS-84 latitude then longitude. */
export const geoPayload = (body: { latitude: number; longitude: number }) =>
  `geo:${coordinate(body.latitude)},${coordinate(body.longitude)}`
