/**
 * The hand-written address scanner against two independent parsers: CPython's `ipaddress` module (which
 * addresses are valid, and their canonical RFC 5952 text; IPv4-mapped ones read as IPv4 through its
 * `ipv4_mapped`) and Bun's `node:net` isIP (validity). The inputs are a seeded corpus: every spelling of
 * random addresses (compressed anywhere, upper case, leading zeros, embedded dotted quads, mapped
 * IPv4) plus mutations of them, and hand-picked edge cases.
 */
import { describe, expect, test } from 'bun:test'
import { isIP } from 'node:net'
import { parseIp } from '../../../src/lib/ip-address.ts'
import { pythonJson } from '../../support/python.ts'
import { rng } from '../../support/random.ts'

// Reads a JSON array of strings on stdin; prints, per input, null (invalid) or [version, text].
const CANONICAL = `
import sys, json, ipaddress
out = []
for s in json.load(sys.stdin):
    try:
        a = ipaddress.ip_address(s)
    except ValueError:
        out.append(None)
        continue
    if a.version == 6 and a.ipv4_mapped is not None:
        out.append([4, str(a.ipv4_mapped)])
    else:
        out.append([a.version, str(a)])
print(json.dumps(out))
`

const EDGE_CASES = [
  '::',
  '::1',
  '1::',
  '::0',
  '0::0',
  '0:0:0:0:0:0:0:0',
  '0000:0000:0000:0000:0000:0000:0000:0000',
  '::0:0',
  '1:0:0:2:0:0:0:3',
  '1:0:0:0:2:0:0:3',
  '0:0:1:0:0:1:0:0',
  '1::2:3:4:5:6:7',
  '1:2:3:4:5:6:7::',
  '::2:3:4:5:6:7:8',
  '1:2:3:4:5:6::8',
  '1:2:3:4:5:6:7:8',
  '2001:db8::1',
  '2001:DB8::1',
  '2001:0db8::0001',
  '2001:db8:0:0:1::1',
  '2001:db8::1:0:0:1',
  '2001:db8:0:1:1:1:1:1',
  '2001:db8::1:1:1:1:1',
  'fe80::',
  'FE80::1',
  'fF02::1',
  '::ffff:1.2.3.4',
  '::FFFF:1.2.3.4',
  '::ffff:0102:0304',
  '0:0:0:0:0:ffff:1.2.3.4',
  '::ffff:0:0',
  '::ffff:255.255.255.255',
  '::1.2.3.4',
  '64:ff9b::192.0.2.33',
  '1:2:3:4:5:6:1.2.3.4',
  '1:2:3:4:5::1.2.3.4',
  '::ffff:01.2.3.4',
  '::ffff:1.2.3.04',
  '::ffff:1.2.3',
  '::ffff:1.2.3.4.5',
  '::ffff:256.1.1.1',
  '1:2:3:4:5:6:7:1.2.3.4',
  '1.2.3.4::',
  '::1.2.3.4:1',
  ':::',
  '::::',
  '1:::2',
  '1::2::3',
  ':1::2',
  '1::2:',
  ':1:2:3:4:5:6:7:8',
  '1:2:3:4:5:6:7:8:',
  '1:2:3:4:5:6:7:8:9',
  '1:2:3:4:5:6:7',
  '1:2:3:4:5:6:7:8::',
  '::1:2:3:4:5:6:7:8',
  '12345::',
  '1:2:3:4:5:6:7:00000',
  'g::1',
  '::g',
  ':',
  '1',
  '1:',
  ':1',
  '',
  ' ',
  '::1 ',
  '[::1]',
  '::1/128',
  'fe80::1%eth0',
  '1.2.3.4',
  '0.0.0.0',
  '255.255.255.255',
  '01.2.3.4',
  '1.2.3.04',
  '1.2.3.0',
  '256.1.1.1',
  '1.2.3',
  '1.2.3.4.',
  '.1.2.3.4',
  '1..2.3',
  '1.2.3.4:80',
  '0x1.2.3.4',
  '1e2.1.1.1',
  '１.2.3.4',
  '::１',
  '1:2:3:4:5:6:7:８',
  '-1.2.3.4',
  '+1.2.3.4',
]

/** Random spellings of random addresses, valid and not. */
function corpus(count: number): string[] {
  const r = rng(0x1b5)
  const out: string[] = []
  const hex = (g: number) => g.toString(16)
  for (let n = 0; n < count; n++) {
    const groups = Array.from({ length: 8 }, () => (r() < 0.45 ? 0 : r() < 0.3 ? Math.floor(r() * 16) : Math.floor(r() * 65536)))
    if (r() < 0.1) groups.splice(0, 6, 0, 0, 0, 0, 0, 0xffff) // IPv4-mapped
    let parts = groups.map((g) => {
      let t = hex(g)
      if (r() < 0.15) t = t.padStart(1 + Math.floor(r() * 4), '0') // leading zeros, at most 4 digits
      return r() < 0.15 ? t.toUpperCase() : t
    })
    let tail = ''
    if (r() < 0.15) {
      // a dotted quad in place of the last two groups
      tail = [groups[6]! >> 8, groups[6]! & 255, groups[7]! >> 8, groups[7]! & 255].join('.')
      parts = parts.slice(0, 6)
    }
    let text = parts.join(':')
    if (r() < 0.7) {
      // compress some run of zero groups (not necessarily the longest, not necessarily two or more)
      const zeros = [...parts.keys()].filter((i) => /^0+$/.test(parts[i]!))
      if (zeros.length) {
        const start = zeros[Math.floor(r() * zeros.length)]!
        let end = start
        while (end + 1 < parts.length && /^0+$/.test(parts[end + 1]!) && r() < 0.8) end++
        text = `${parts.slice(0, start).join(':')}::${parts.slice(end + 1).join(':')}`
      }
    }
    if (tail) text += text.endsWith(':') ? tail : `:${tail}`
    out.push(text)
    if (r() < 0.4) {
      // one mutation: most make the text invalid, some keep it valid
      const at = Math.floor(r() * (text.length + 1))
      const ops = [
        () => text.slice(0, at) + ':' + text.slice(at),
        () => text.slice(0, at) + text.slice(at + 1),
        () => text.slice(0, at) + '0' + text.slice(at),
        () => text.slice(0, at) + 'f' + text.slice(at),
        () => text.slice(0, at) + '.' + text.slice(at),
        () => text.slice(0, at) + 'x' + text.slice(at),
        () => text.replace('::', ':'),
        () => `${text}::`,
        () => `::${text}`,
        () => `${text}:1.2.3.4`,
      ]
      out.push(ops[Math.floor(r() * ops.length)]!())
    }
  }
  return out
}

describe('the scanner agrees with CPython ipaddress and node:net', () => {
  const inputs = [...new Set([...EDGE_CASES, ...corpus(4000)])]
  // Zones and surrounding spaces are refused/trimmed here on purpose (tests below); ipaddress reads
  // zones and refuses spaces, so those inputs are left out of the comparison.
  const compared = inputs.filter((s) => !s.includes('%') && s.trim() === s)
  const expected = pythonJson<([4 | 6, string] | null)[]>(CANONICAL, compared)

  test('the corpus has valid and invalid, canonical and non-canonical, mapped inputs', () => {
    const valid = expected.filter((e) => e !== null)
    expect(valid.length).toBeGreaterThan(2000)
    expect(expected.length - valid.length).toBeGreaterThan(500)
    expect(valid.filter((e, i) => e![1] !== compared[i]).length).toBeGreaterThan(500)
    expect(valid.filter((e) => e![0] === 4).length).toBeGreaterThan(300)
  })

  test('same addresses valid, same canonical text, same version', () => {
    const wrong: string[] = []
    compared.forEach((s, i) => {
      const ours = parseIp(s)
      const theirs = expected[i]
      const got = typeof ours === 'string' ? null : [ours.version, ours.text]
      if (JSON.stringify(got) !== JSON.stringify(theirs))
        wrong.push(`${JSON.stringify(s)}: ours ${JSON.stringify(got)}, ipaddress ${JSON.stringify(theirs)}`)
    })
    expect(wrong).toEqual([])
  })

  test('same addresses valid as node:net isIP', () => {
    const wrong = compared.filter((s) => (typeof parseIp(s) !== 'string') !== (isIP(s) !== 0))
    expect(wrong).toEqual([])
  })

  test('IPv6 words are the canonical text read back', () => {
    for (const s of compared) {
      const a = parseIp(s)
      if (typeof a === 'string' || a.version === 4) continue
      const again = parseIp(a.text)
      expect(again).toEqual(a)
    }
  })
})

describe('refused on purpose', () => {
  test('zones, ports, brackets and prefixes are refused with a reason', () => {
    expect(parseIp('fe80::1%eth0')).toContain('zone')
    expect(parseIp('FE80::1%25')).toContain('zone')
    expect(parseIp('[::1]:443')).toContain('port')
    expect(parseIp('[::1]')).toContain('bracket')
    expect(parseIp('1.2.3.4:80')).toContain('port')
    expect(parseIp('::1/128')).toContain('network')
  })

  test('surrounding whitespace is trimmed', () => {
    expect(parseIp(' 2001:DB8::1\t')).toEqual({ version: 6, text: '2001:db8::1', v4: 0, v6: [0x20010db8, 0, 0, 1] })
    expect(parseIp(' 8.8.8.8 ')).toMatchObject({ version: 4, text: '8.8.8.8' })
  })
})
