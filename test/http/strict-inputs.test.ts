/**
 * What the shared layers refuse instead of silently dropping or guessing, through HTTP in both forms, on the
 * real countries and hash domains: unknown query parameters and body members (with the nearest known name),
 * integers that are not plain decimal digits, a `fields` naming nothing or selecting inside a string, and an
 * `X-Response-Form` naming no form. Every route's own 422 for an unknown name is in contract.test.ts.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import countries from '../../src/domains/countries/index.ts'
import hash from '../../src/domains/hash/index.ts'
import { problemIn, testApp, type TestApp } from '../support/app.ts'

let app: TestApp
beforeAll(async () => {
  app = await testApp({ domains: [countries, hash], env: { ALMANAC_HASH_BCRYPT_MAX_ROUNDS: '5' } })
})
afterAll(() => app.close())

const FORMS = ['enveloped', 'bare'] as const
test('/countries?regoin=Europe is a 422 naming regoin and region, not all 249 countries', async () => {
  for (const form of FORMS) {
    const res = await app.json('GET', '/api/v1/countries?regoin=Europe', { form })
    expect(res.status).toBe(422)
    const problem = problemIn(res.body, form)
    expect(problem.detail).toBe('regoin: unknown query parameter (did you mean region?)')
    expect(problem.errors).toEqual([{ in: 'query', field: 'regoin', message: 'unknown query parameter (did you mean region?)' }])
    // Spelled right, it filters.
    const europe = await app.json('GET', '/api/v1/countries?region=Europe&limit=1000', { form })
    const items = form === 'bare' ? europe.body.results : europe.body.data
    expect(items.length).toBeGreaterThan(40)
    expect(items.length).toBeLessThan(249)
  }
})

test('every unknown name is listed; `_` is ignored by design; `callback` is not (no JSONP)', async () => {
  const res = await app.json('GET', '/api/v1/countries?regoin=Europe&limt=5&_=1&callback=f', { form: 'bare' })
  expect(res.status).toBe(422)
  expect(res.body.errors.map((e: any) => e.field).sort()).toEqual(['callback', 'limt', 'regoin'])
  expect(res.body.errors.find((e: any) => e.field === 'limt').message).toBe('unknown query parameter (did you mean limit?)')
  const busted = await app.json('GET', '/api/v1/countries?limit=2&_=1700000000000', { form: 'bare' })
  expect(busted.status).toBe(200)
  expect(busted.body.results).toHaveLength(2)
})

test('/hash/bcrypt {"round":4} is a 422 naming round and rounds, not a hash with 12 rounds', async () => {
  for (const form of FORMS) {
    const res = await app.json('POST', '/api/v1/hash/bcrypt', { body: { input: 'x', round: 4 }, form })
    expect(res.status).toBe(422)
    expect(problemIn(res.body, form).errors).toEqual([{ in: 'body', field: 'round', message: 'unknown member (did you mean rounds?)' }])
    const right = await app.json('POST', '/api/v1/hash/bcrypt', { body: { input: 'x', rounds: 4 }, form })
    expect(right.status).toBe(200)
    expect((form === 'bare' ? right.body : right.body.data).hash).toStartWith('$2b$04$')
  }
})

test('integers in the query are plain decimal digits: 1e2, 0x10, +5, " 5" and 5.0 are 422s naming the field', async () => {
  for (const form of FORMS) {
    for (const value of ['1e2', '0x10', '+5', ' 5', '5.0', '0b11']) {
      const res = await app.json('GET', `/api/v1/countries?limit=${encodeURIComponent(value)}`, { form })
      expect({ value, status: res.status }).toEqual({ value, status: 422 })
      expect(problemIn(res.body, form).errors.map((e: any) => [e.in, e.field])).toEqual([['query', 'limit']])
    }
    const ok = await app.json('GET', '/api/v1/countries?limit=16&offset=007', { form })
    expect(ok.status).toBe(200)
    expect((form === 'bare' ? ok.body.results : ok.body.data).length).toBe(16)
  }
})

test('fields=,,, is a 400 (it names nothing), not a list of empty objects', async () => {
  for (const form of FORMS) {
    const res = await app.json('GET', '/api/v1/countries?limit=2&fields=,,,', { form })
    expect(res.status).toBe(400)
    expect(problemIn(res.body, form).errors).toEqual([
      { in: 'query', field: 'fields', message: 'names no field (only commas): name at least one, or leave fields out' },
    ])
    // Empty names beside real ones are skipped.
    const ok = await app.json('GET', '/api/v1/countries?limit=1&fields=name,,', { form })
    expect(ok.status).toBe(200)
    expect((form === 'bare' ? ok.body.results : ok.body.data)[0]).toEqual({ name: 'Afghanistan' })
  }
})

test('fields=name.foo on a string is a 400 naming the path and why, not `name`', async () => {
  for (const form of FORMS) {
    const res = await app.json('GET', '/api/v1/countries/FR?fields=name.foo', { form })
    expect(res.status).toBe(400)
    const problem = problemIn(res.body, form)
    expect(problem.detail).toBe('fields name.foo: name is a string, not an object; fields selects members of objects only.')
    expect(problem.errors).toEqual([{ in: 'query', field: 'fields', message: 'name.foo: name is a string, not an object' }])
  }
})

test('an X-Response-Form naming no form is a 400 naming the two, in the default form, before auth', async () => {
  for (const key of [undefined, null] as const) {
    const res = await app.json('GET', '/api/v1/countries/FR', { headers: { 'x-response-form': 'json' }, key })
    expect(res.status).toBe(400)
    expect(res.body.status).toBe('error') // the tests' default form is enveloped
    expect(res.body.error.detail).toBe('X-Response-Form must be enveloped or bare; got "json".')
  }
})
