/**
 * Mailbox syntax against a table of cases from the RFCs: RFC 5321 §4.1.2 grammar and §4.5.3.1 limits,
 * RFC 5322 atext, RFC 3696 §3 examples, RFC 6531 UTF-8 addresses with IANA's IDN test domains (their
 * A-labels as Python's `idna` codec computes them, not our output).
 */
import { describe, expect, test } from 'bun:test'
import { parseMailbox } from '../../../src/domains/email/syntax.ts'
import { rng } from '../../support/random.ts'

const l63 = 'a'.repeat(63)
const VALID: [string, string?][] = [
  ['simple@example.com'],
  ['very.common@example.com'],
  ['disposable.style.email.with+symbol@example.com'],
  ['other.email-with-hyphen@example.com'],
  ['x@example.com'],
  ['user-@example.org'],
  ['user%example.com@example.org'],
  // RFC 3696 §3
  ['customer/department=shipping@example.com'],
  ['$A12345@example.com'],
  ['!def!xyz%abc@example.com'],
  ['_somename@example.com'],
  // every atext character (RFC 5322 §3.2.3)
  ["!#$%&'*+-/=?^_`{|}~@example.org"],
  // Quoted-string (RFC 5321: qtextSMTP and quoted-pairSMTP)
  ['"much.more unusual"@example.com'],
  ['"very.unusual.@.unusual.com"@example.com'],
  ['"\\"quoted\\""@example.com'],
  ['" "@example.org'],
  ['"a\\ b"@example.com'],
  ['"()<>[]:,;@\\\\\\"!#$%&\'-/=?^_`{}| ~.a"@example.org'],
  ['"Abc@def"@example.com'],
  ['"Fred\\ Bloggs"@example.com'],
  // address-literal
  ['user@[192.168.2.1]', 'user@[192.168.2.1]'],
  ['user@[IPv6:2001:db8::1]', 'user@[IPv6:2001:db8::1]'],
  ['user@[IPv6:::ffff:192.0.2.1]'],
  // Domain: case is folded
  ['User@EXAMPLE.COM', 'User@example.com'],
  ['a@b.c'],
  ['a@1example.com'],
  ['a@xn--bcher-kva.example', 'a@xn--bcher-kva.example'],
  // limits: 64-octet local part, 63-octet labels, 254-octet address
  [`${'l'.repeat(64)}@example.com`],
  [`a@${l63}.com`],
  [`${'l'.repeat(64)}@${l63}.${l63}.${'b'.repeat(57)}.com`],
  // RFC 6531 UTF-8 (IANA test IDNs: their A-labels as IANA publishes them)
  ['用户@例子.测试', '用户@xn--fsqu00a.xn--0zwm56d'],
  ['用户@例子.广告', '用户@xn--fsqu00a.xn--4rr70v'],
  ['δοκιμή@παράδειγμα.δοκιμή', 'δοκιμή@xn--hxajbheg2az3al.xn--jxalpdlp'],
  ['Pelé@example.com', 'Pelé@example.com'],
  ['我買@屋企.香港'],
  ['"ünïcödé quoted"@example.com'],
]

const INVALID: [string, string][] = [
  ['', 'empty'],
  ['Abc.example.com', 'missing_at'],
  ['A@b@c@example.com', 'domain_invalid_character'],
  ['a"b(c)d,e:f;g<h>i[j\\k]l@example.com', 'local_part_invalid_character'],
  ['just"not"right@example.com', 'local_part_invalid_character'],
  ['this is"not\\allowed@example.com', 'local_part_invalid_character'],
  ['this\\ still\\"not\\\\allowed@example.com', 'local_part_invalid_character'],
  [`${'l'.repeat(65)}@example.com`, 'local_part_too_long'],
  ['john..doe@example.com', 'local_part_dot'],
  ['.john@example.com', 'local_part_dot'],
  ['john.@example.com', 'local_part_dot'],
  ['@example.com', 'local_part_empty'],
  ['john@', 'domain_empty'],
  ['john@example..com', 'label_empty'],
  ['john@.example.com', 'label_empty'],
  ['john@example.com.', 'label_empty'],
  ['john@-example.com', 'label_hyphen'],
  ['john@example-.com', 'label_hyphen'],
  [`john@${'a'.repeat(64)}.com`, 'label_too_long'],
  [`${'l'.repeat(64)}@${l63}.${l63}.${'b'.repeat(58)}.com`, 'too_long'],
  [`a@${l63}.${l63}.${l63}.${l63}.com`, 'domain_too_long'],
  ['john@exa_mple.com', 'domain_invalid_character'],
  // dotless is grammatical (RFC 5321 sub-domain) but no internet address
  ['postmaster@localhost', 'single_label_domain'],
  ['a@LOCALHOST', 'single_label_domain'],
  ['用户@例子', 'single_label_domain'],
  ['a@xn--fsqu00a', 'single_label_domain'],
  ['john@exa mple.com', 'domain_invalid_character'],
  ['john@1.2.3.4', 'numeric_tld'],
  ['user@[300.1.1.1]', 'address_literal_invalid'],
  ['user@[1.2.3]', 'address_literal_invalid'],
  ['user@[IPv6:2001:db8::g]', 'address_literal_invalid'],
  ['user@[IPv6:2001:db8::1%eth0]', 'address_literal_invalid'],
  ['user@[192.168.2.1', 'address_literal_invalid'],
  ['user@[x-tag:content]', 'address_literal_unregistered_tag'],
  ['"unterminated@example.com', 'quoted_string_unterminated'],
  ['"a"b@example.com', 'local_part_invalid_character'],
  ['"a\u0007"@example.com', 'quoted_string_invalid_character'],
  ['"a\\\u00e9"@example.com', 'quoted_string_invalid_character'],
  ['a\u0001b@example.com', 'local_part_invalid_character'],
  ['a\u0085@example.com', 'local_part_invalid_character'],
  ['\ud800@example.com', 'invalid_unicode'],
  ['user@例子..广告', 'label_empty'],
  ['user@ex\u0085ample.com', 'domain_invalid_character'],
  // RFC 5890 §2.3.2.1: an A-label must decode to a valid U-label
  ['user@xn--zz.example', 'invalid_idn'],
  ['user@xn--abc-.example', 'invalid_idn'],
  ['a b@example.com', 'local_part_invalid_character'],
]

describe('valid mailboxes', () => {
  test.each(VALID.map(([input, normalized]) => [input, normalized ?? null] as const))('%s', (input, normalized) => {
    const m = parseMailbox(input)
    expect(m).toMatchObject({ valid: true })
    if (normalized && m.valid) expect(m.normalized).toBe(normalized)
  })
})

describe('invalid mailboxes', () => {
  test.each(INVALID)('%s -> %s', (input, reason) => {
    expect(parseMailbox(input)).toEqual({ valid: false, reason: reason as never })
  })
})

test('the table holds at least 40 cases', () => {
  expect(VALID.length + INVALID.length).toBeGreaterThanOrEqual(40)
})

test('limits are counted in octets, not characters', () => {
  // 22 two-octet characters = 44 octets + 21 = 65 octets: over the 64-octet limit although 43 characters.
  expect(parseMailbox(`${'é'.repeat(22)}${'a'.repeat(21)}@example.com`)).toEqual({ valid: false, reason: 'local_part_too_long' })
  expect(parseMailbox(`${'é'.repeat(22)}${'a'.repeat(20)}@example.com`).valid).toBe(true)
  // 32 distinct CJK characters: a U-label of 32 characters whose A-label (Python's punycode codec) is 67 octets.
  const uLabel = Array.from({ length: 32 }, (_, i) => String.fromCharCode(0x4e00 + i * 7)).join('')
  expect(parseMailbox(`a@${uLabel}.com`)).toEqual({ valid: false, reason: 'label_too_long' })
  expect(parseMailbox(`a@${uLabel.slice(0, 28)}.com`).valid).toBe(true)
})

test('long hostile inputs are answered quickly (linear scans, no backtracking)', () => {
  const inputs = ['"' + '\\'.repeat(1023), 'a.'.repeat(512), 'a@' + '-.'.repeat(511), '@'.repeat(1024), 'a@[' + '1.'.repeat(511)]
  for (const s of inputs) expect(parseMailbox(s).valid).toBe(false)
})

test('random strings never throw, and every valid verdict satisfies the limits', () => {
  const random = rng(5321)
  const alphabet = [
    'a',
    'Z',
    '0',
    '.',
    '@',
    '"',
    '\\',
    '[',
    ']',
    ':',
    '-',
    '_',
    ' ',
    '\u0000',
    '\u007f',
    'é',
    '例',
    '\u0085',
    '\ud83d',
    '\ude00',
    '😀',
    '\u3002',
    'xn--',
    'I',
  ]
  for (let i = 0; i < 50_000; i++) {
    const length = Math.floor(random() * 40)
    let s = ''
    for (let j = 0; j < length; j++) s += alphabet[Math.floor(random() * alphabet.length)]
    if (random() < 0.3) s = `a${s}@example.com`
    const m = parseMailbox(s)
    if (m.valid) {
      expect(Buffer.byteLength(m.normalized)).toBeLessThanOrEqual(254)
      expect(m.normalized).toContain('@')
    } else expect(m.reason).toBeString()
  }
})
