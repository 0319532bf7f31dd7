/** The payload builders' edge cases, against the formats' rules written out by hand. */
import { expect, test } from 'bun:test'
import { coordinate, emailPayload, foldLine, vcardEscape, wifiEscape, wifiPayload } from '../../../src/domains/qr/payloads.ts'

test('vCard folding: 75 octets a line, continuation lines of a space and 74 octets, UTF-8 sequences whole', () => {
  expect(foldLine('x'.repeat(75))).toBe('x'.repeat(75))
  expect(foldLine('x'.repeat(76))).toBe(`${'x'.repeat(75)}\r\n x`)
  expect(foldLine('x'.repeat(75 + 74 + 1))).toBe(`${'x'.repeat(75)}\r\n ${'x'.repeat(74)}\r\n x`)
  // 74 ASCII octets + "é" (2 octets) would be 76: the é moves to the next line whole.
  expect(foldLine('x'.repeat(74) + 'é')).toBe(`${'x'.repeat(74)}\r\n é`)
  // A 4-octet emoji (a surrogate pair in JavaScript) is never split.
  const folded = foldLine('😀'.repeat(30))
  for (const line of folded.split('\r\n')) expect(Buffer.byteLength(line, 'utf8')).toBeLessThanOrEqual(75)
  expect(folded.replace(/\r\n /g, '')).toBe('😀'.repeat(30))
  expect(folded).not.toContain('\uFFFD')
})

test('vCard escaping: backslash, comma, semicolon, every newline form', () => {
  expect(vcardEscape('a\\b,c;d\ne\r\nf\rg:h')).toBe('a\\\\b\\,c\\;d\\ne\\nf\\ng:h')
})

test('WiFi escaping: backslash, semicolon, comma, colon, double quote; nothing else', () => {
  expect(wifiEscape(`\\;,:"'ü `)).toBe(`\\\\\\;\\,\\:\\"'ü `)
  expect(wifiPayload({ ssid: 'a', password: '12345678', encryption: 'WPA', hidden: false })).toBe('WIFI:T:WPA;S:a;P:12345678;H:false;;')
})

test('geo coordinates: plain decimal, no exponent, no negative zero, at most 7 decimals', () => {
  expect(coordinate(1e-7)).toBe('0.0000001')
  expect(coordinate(1e-8)).toBe('0')
  expect(coordinate(-1e-9)).toBe('0')
  expect(coordinate(-0)).toBe('0')
  expect(coordinate(12.5)).toBe('12.5')
  expect(coordinate(-179.99999996)).toBe('-180')
  expect(coordinate(45)).toBe('45')
})

test('mailto: reserved characters and non-ASCII in subject and body are percent-encoded, CR LF in the body', () => {
  expect(emailPayload({ to: 'a@b.c', subject: '+ = & ? # % /', body: 'x\ry\nz' })).toBe(
    'mailto:a@b.c?subject=%2B%20%3D%20%26%20%3F%20%23%20%25%20%2F&body=x%0D%0Ay%0D%0Az',
  )
  expect(emailPayload({ to: 'jo%e@b.c' })).toBe('mailto:jo%25e@b.c')
  expect(emailPayload({ to: 'a@b.c', subject: '', body: '' })).toBe('mailto:a@b.c')
})
