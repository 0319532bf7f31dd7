/**
 * No input may hang or crash the parser: long repetitive strings built from the tokens the detection
 * regexes look for (the worst case for backtracking), random code units (controls, lone surrogates),
 * and shuffled fragments of real user agents, all at or under the 2,048-character limit. Each must
 * parse; the slowest parse is printed (the test's own timeout is the hang guard, not an assertion).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { openDataDir } from '../../../src/data/open.ts'
import { UA_ARTIFACT } from '../../../src/domains/ua/build.ts'
import { loadDefinitions } from '../../../src/domains/ua/definitions.ts'
import uaDomain from '../../../src/domains/ua/index.ts'
import { openUaService, UA_MAX_LENGTH, type UaService } from '../../../src/domains/ua/service.ts'
import { testApp, type TestApp } from '../../support/app.ts'
import { rng } from '../../support/random.ts'
import { every, realUserAgents } from './corpus.ts'

let service: UaService
let app: TestApp
beforeAll(async () => {
  service = openUaService(loadDefinitions(openDataDir().path(UA_ARTIFACT)), { cacheEntries: 0, cacheBytes: 0 })
  app = await testApp({ domains: [uaDomain] })
})
afterAll(() => app.close())

const TOKENS = [
  'a',
  'A1',
  ' ',
  '/',
  ';',
  '(',
  ')',
  '.',
  '1',
  '1.',
  '_',
  '-',
  'Android ',
  'Android 10; ',
  'Linux; ',
  'Mozilla/5.0 (',
  'AppleWebKit/537.36 ',
  'Chrome/',
  'Safari/',
  'Build/',
  'SM-',
  'Tablet',
  'Mobile',
  'TV ',
  'Windows NT ',
  'arm',
  'iPhone',
  'bot',
  'spider',
  'MZ-',
  'sprd-',
  'CrKey',
  'Tizen',
  '0',
  '9',
]
const fill = (unit: string) => unit.repeat(Math.ceil(UA_MAX_LENGTH / unit.length)).slice(0, UA_MAX_LENGTH)

function inputs(): string[] {
  const random = rng(20261123)
  const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)]!
  const out: string[] = []
  for (const token of TOKENS) out.push(fill(token))
  for (let i = 0; i < 200; i++) out.push(fill(Array.from({ length: 1 + Math.floor(random() * 6) }, () => pick(TOKENS)).join('')))
  for (let i = 0; i < 300; i++) {
    const length = 1 + Math.floor(random() * UA_MAX_LENGTH)
    out.push(String.fromCharCode(...Array.from({ length }, () => Math.floor(random() * (random() < 0.8 ? 0x80 : 0x10000)))))
  }
  const real = every(realUserAgents(), 40)
  for (let i = 0; i < 300; i++) {
    const parts = Array.from({ length: 2 + Math.floor(random() * 30) }, () => {
      const ua = pick(real)
      const at = Math.floor(random() * ua.length)
      return ua.slice(at, at + 1 + Math.floor(random() * 60))
    })
    out.push(parts.join('').slice(0, UA_MAX_LENGTH))
  }
  return out.filter((s) => s.trim() !== '')
}

test('every fuzz input parses, with and without hints', () => {
  let slowest = { ms: 0, input: '' }
  const cases = inputs()
  // Warm up on real UAs first, so the slowest figure is a parse, not the lists compiled on first use.
  for (const ua of every(realUserAgents(), 10)) service.parse(ua)
  for (const ua of cases) {
    const started = performance.now()
    const r = service.parse(ua)
    service.parse(ua, {
      'Sec-CH-UA': fill('"a";v="1", ').slice(0, 1024),
      'Sec-CH-UA-Model': ua.slice(0, 1024).replace(/[\u0000-\u001f\u007f]/g, ' '),
    })
    const ms = performance.now() - started
    if (ms > slowest.ms) slowest = { ms, input: ua.slice(0, 40) }
    expect(typeof r.is_bot).toBe('boolean')
  }
  console.log(`fuzz: ${cases.length} inputs; slowest ${slowest.ms.toFixed(1)} ms (${JSON.stringify(slowest.input)}…)`)
}, 120_000)

test('through HTTP: lone surrogates, controls and long values are answered, never a 500', async () => {
  const bodies = [
    '{"ua":"\\ud800\\udfff\\ud800"}',
    '{"ua":"\\u0000\\u0001 Mozilla"}',
    JSON.stringify({ ua: fill('Android ') }),
    JSON.stringify({ ua: 'x', headers: { 'Sec-CH-UA-Model': '\ud800' } }),
    JSON.stringify({ ua: { nested: [1, 2] } }),
    '[]',
    '"ua"',
    JSON.stringify({ ua: 'curl/8', headers: Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`h${i}`, 'v'])) }),
  ]
  for (const body of bodies) {
    const res = await app.request('POST', '/api/v1/ua', { body, headers: { 'content-type': 'application/json' } })
    expect([200, 400, 422]).toContain(res.status)
  }
})
