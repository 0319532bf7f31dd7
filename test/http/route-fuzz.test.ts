/**
 * Every operation of the OpenAPI document, on the real app with every domain and its real datasets, fed
 * inputs made from its own schemas and then broken: wrong types, huge and deeply nested values, unicode
 * edge cases, path tricks, repeated and odd query members, 1e309, NaN. Each answer must be a non-5xx; each
 * error an RFC 9457 problem (a 422 naming its fields); each request answered within a bound (a hang or a
 * frozen event loop is a failure, not a slow machine: the bound is many times the worst seen); and the
 * heap must not grow over the run. Inputs come from a seeded generator, so a failure replays.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { JSON_LIMITS } from '../../src/http/admission/json-shape.ts'
import { testApp, type TestApp } from '../support/app.ts'
import { rng } from '../support/random.ts'

/** Per request, in-process. The worst seen here is well under 100 ms; a regex blow-up took seconds. */
const BOUND_MS = 1000
const CASES_PER_OPERATION = 60
const random = rng(20261123)
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!

let app: TestApp
let doc: any
beforeAll(async () => {
  // KDF ceilings low enough that a valid random body hashes in milliseconds: the fuzz is about input handling.
  app = await testApp({
    env: {
      ALMANAC_HASH_BCRYPT_MAX_ROUNDS: '5',
      ALMANAC_HASH_SCRYPT_MAX_MEMORY: String(2 ** 22),
      ALMANAC_HASH_ARGON2_MAX_MEMORY: '1024',
      ALMANAC_HASH_ARGON2_MAX_TIME: '2',
      ALMANAC_HASH_JOBS_PER_CALLER: '64',
    },
  })
  doc = await (await app.request('GET', '/openapi.json')).json()
})
afterAll(() => app.close())

const STRINGS = [
  '',
  ' ',
  '\u0000',
  '\ud800',
  '\udfff\ud800',
  '\u202e\u2066',
  '\u200b',
  '😀👨‍👩‍👧',
  'é'.normalize('NFD'),
  'İıſK',
  '\u2028\u2029',
  '中文',
  'constructor',
  '__proto__',
  'toString',
  '../../etc/passwd',
  '%00',
  '%ZZ',
  '<script>',
  "'; DROP TABLE x; --",
  '"quoted" AND OR NOT NEAR(a b) * ^ :',
  '1e309',
  'NaN',
  '-0',
  'x'.repeat(5000),
  'a*'.repeat(200) + 'Z',
  '(a+)+$',
]
const NUMBERS = [0, -1, -0, 1.5, 2 ** 53, -(2 ** 53), 1e308, 4294967296, 65537]
/** Raw JSON text that JSON.stringify cannot write: spliced in as a member's value. */
const RAW = [
  '1e309',
  '-1e309',
  'NaN',
  'Infinity',
  '1' + '0'.repeat(400),
  '"\\ud800"',
  '{"__proto__":{"polluted":true}}',
  '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]',
]
const deep = (depth: number) => '['.repeat(depth) + ']'.repeat(depth)

/** A value the schema plausibly accepts, so mutations of one member reach the code behind the others. */
function plausible(schema: any, depth = 0): unknown {
  if (!schema || depth > 6) return null
  if (schema.examples?.length) return schema.examples[0]
  if (schema.default !== undefined) return schema.default
  if (schema.anyOf) return plausible(schema.anyOf[0], depth + 1)
  switch (schema.type) {
    case 'string':
      return schema.enum?.[0] ?? 'FR'
    case 'integer':
    case 'number':
      return schema.minimum ?? 1
    case 'boolean':
      return true
    case 'array':
      return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => plausible(schema.items, depth + 1))
    case 'object': {
      const out: Record<string, unknown> = {}
      for (const [k, v] of Object.entries(schema.properties ?? {}))
        if (schema.required?.includes(k) || random() < 0.5) out[k] = plausible(v, depth + 1)
      return out
    }
  }
  return 'x'
}

/** A broken value for a member: another type, an edge of its own type, or something huge. */
function broken(schema: any): unknown {
  switch (Math.floor(random() * 7)) {
    case 0:
      return pick(STRINGS)
    case 1:
      return pick(NUMBERS)
    case 2:
      return pick([null, true, false, [], {}, [null], { a: 1 }])
    case 3:
      return Array.from({ length: pick([0, 101, 1000]) }, () => plausible(schema?.items ?? { type: 'string' }))
    case 4:
      return 'z'.repeat(pick([256, 70_000, 300_000]))
    case 5:
      return { [pick(STRINGS)]: pick(STRINGS), nested: plausible(schema) }
    default:
      return schema?.type === 'array' ? [pick(STRINGS), pick(NUMBERS), null] : pick(STRINGS)
  }
}

/** A request body as text: the plausible body with one member (or the whole) broken, or raw JSON tricks. */
function body(schema: any): string {
  const base = plausible(schema) as Record<string, unknown>
  const members = Object.keys(schema?.properties ?? {})
  const roll = random()
  if (roll < 0.1) return JSON.stringify(broken(schema))
  if (roll < 0.2 && members.length) {
    const text = JSON.stringify({ ...base, [pick(members)]: '\u0001RAW' })
    return text.replace('"\\u0001RAW"', pick([...RAW, deep(JSON_LIMITS.depth + 8), deep(10_000)]))
  }
  if (roll < 0.25) return pick(['', 'null', '{', '{"a":1,"a":2}', '\ufeff{}', '{} trailing', deep(50)])
  if (!members.length || roll < 0.35) return JSON.stringify(base)
  return JSON.stringify({ ...base, [pick(members)]: broken(schema.properties[pick(members)]) })
}

const PATH_VALUES = [
  'FR',
  'fr',
  'zz',
  'XX-01',
  '%00',
  '%ZZ',
  '%F0%9F%98%80',
  '..%2F..%2F',
  'constructor',
  '__proto__',
  '1e309',
  'NaN',
  '-1',
  '%E4%B8%AD',
  'a'.repeat(3000),
  'Europe%2FParis',
  'US-CA',
  '10115',
]
const QUERY_VALUES = [
  '',
  '1',
  '0',
  '-1',
  '1e309',
  'NaN',
  '1.5',
  '99999999999999999999',
  'true',
  'FR',
  '%00',
  '%ZZ',
  '*'.repeat(40) + 'Z',
  '"a b"',
  'constructor',
  '__proto__',
  'a'.repeat(2000),
  '%E2%80%AE',
]

function url(path: string, parameters: any[]): string {
  const filled = path.replace(/\{[^}]+\}|\*/g, () => (random() < 0.3 ? 'FR' : pick(PATH_VALUES)))
  const query: string[] = []
  for (const p of parameters.filter((x) => x.in === 'query')) {
    if (random() < 0.5) continue
    const value = random() < 0.5 ? encodeURIComponent(String(plausible(p.schema))) : pick(QUERY_VALUES)
    query.push(`${p.name}=${value}`)
    if (random() < 0.15) query.push(`${p.name}=${pick(QUERY_VALUES)}`) // repeated
  }
  if (random() < 0.1) query.push(`fields=${pick(['constructor', '__proto__.x', 'a,'.repeat(100), 'toString'])}`)
  return query.length ? `${filled}?${query.join('&')}` : filled
}

test('every operation of the OpenAPI document withstands broken input', async () => {
  const operations = Object.entries(doc.paths as Record<string, Record<string, any>>)
    .flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method: method.toUpperCase(), op })))
    .filter(({ path }) => path.startsWith('/api/v1/'))
  expect(operations.length).toBeGreaterThan(25)

  Bun.gc(true)
  const heapBefore = process.memoryUsage().heapUsed
  const failures: string[] = []
  let worst = { ms: 0, what: '' }
  let requests = 0
  for (const { path, method, op } of operations) {
    const schema = op.requestBody?.content?.['application/json']?.schema
    for (let i = 0; i < CASES_PER_OPERATION; i++) {
      const target = url(path, op.parameters ?? [])
      const text = schema ? body(schema) : undefined
      const form = pick(['bare', 'enveloped'] as const)
      const what = `${method} ${target.slice(0, 120)} ${text?.slice(0, 120) ?? ''}`
      const started = performance.now()
      const res = await app.request(method, target, {
        body: text,
        form,
        headers: text === undefined ? {} : { 'content-type': 'application/json' },
      })
      const answer = await res.text()
      const ms = performance.now() - started
      requests++
      if (ms > worst.ms) worst = { ms, what }
      if (ms > BOUND_MS) failures.push(`${Math.round(ms)} ms: ${what}`)
      if (res.status >= 500) failures.push(`${res.status}: ${what} -> ${answer.slice(0, 200)}`)
      if (res.status < 400) continue
      if (answer.length > 64 * 1024) failures.push(`a problem of ${answer.length} bytes: ${what}`)
      let parsed: any
      try {
        parsed = JSON.parse(answer)
      } catch {
        failures.push(`not JSON (${res.status}): ${what}`)
        continue
      }
      const problem = form === 'enveloped' ? parsed.error : parsed
      const complete =
        problem &&
        typeof problem.type === 'string' &&
        typeof problem.title === 'string' &&
        problem.status === res.status &&
        typeof problem.detail === 'string'
      if (!complete) failures.push(`not a problem (${res.status}): ${what} -> ${answer.slice(0, 200)}`)
      else if (res.status === 422 && !(problem.errors?.length && problem.errors.every((e: any) => typeof e.field === 'string' && e.field)))
        failures.push(`422 without fields: ${what} -> ${answer.slice(0, 200)}`)
    }
  }
  Bun.gc(true)
  const growthMiB = (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20
  console.error(
    JSON.stringify({
      fuzz: {
        operations: operations.length,
        requests,
        casesPerOperation: CASES_PER_OPERATION,
        worstMs: Math.round(worst.ms),
        worst: worst.what.slice(0, 160),
        heapGrowthMiB: Math.round(growthMiB * 10) / 10,
      },
    }),
  )
  expect(failures).toEqual([])
  expect(growthMiB).toBeLessThan(64)
  expect(({} as any).polluted).toBeUndefined()
}, 300_000)
