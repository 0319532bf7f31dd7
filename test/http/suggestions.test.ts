/**
 * Errors that name the fix (issue 45), through HTTP in both forms over the real datasets: a name sent for
 * another by meaning (`lon` for `lng`, `query` for `q`) as well as by spelling, a missing member by its name,
 * a body that is not an object with the members it needs, a path parameter placed in the path, a `fields`
 * typo, and the 404 of an unknown route naming the nearest routes and where the reference is. Each suggestion
 * is then followed, and must answer.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import bible from '../../src/domains/bible/index.ts'
import countries from '../../src/domains/countries/index.ts'
import hash from '../../src/domains/hash/index.ts'
import ip from '../../src/domains/ip/index.ts'
import postal from '../../src/domains/postal/index.ts'
import ua from '../../src/domains/ua/index.ts'
import { nearest } from '../../src/lib/did-you-mean.ts'
import { nearestRoutes } from '../../src/http/routing/route-table.ts'
import { problemIn, TEST_KEY, testApp, type TestApp } from '../support/app.ts'

let app: TestApp
beforeAll(async () => {
  app = await testApp({ domains: [bible, countries, hash, ip, postal, ua] })
})
afterAll(() => app.close())

const FORMS = ['enveloped', 'bare'] as const
const REFERENCE = 'The API reference is at /docs, the OpenAPI document at /openapi.json.'

describe('a name sent for another is answered with the one meant, by meaning as by spelling', () => {
  test('POST /postal/DE/nearby with lon or longitude: lng is missing, and lng is what was meant', async () => {
    for (const form of FORMS)
      for (const name of ['lon', 'longitude', 'long']) {
        const res = await app.json('POST', '/api/v1/postal/DE/nearby', { body: { lat: 52.52, [name]: 13.4, radius_km: 2 }, form })
        expect(res.status).toBe(422)
        const problem = problemIn(res.body, form)
        expect({ name, errors: problem.errors }).toEqual({
          name,
          errors: [
            { in: 'body', field: 'lng', message: `lng is missing (did you mean lng for ${name}?)` },
            { in: 'body', field: name, message: 'unknown member (did you mean lng?)' },
          ],
        })
        expect(problem.detail).toBe(`2 invalid values; first lng: lng is missing (did you mean lng for ${name}?)`)
      }
    const followed = await app.json('POST', '/api/v1/postal/DE/nearby', { body: { lat: 52.52, lng: 13.4, radius_km: 2 }, form: 'bare' })
    expect(followed.status).toBe(200)
    expect(followed.body.results.length).toBeGreaterThan(0)
  })

  test('GET /bible/search?query=love: q is missing, and q is what was meant (not "expected 1 to 200 characters")', async () => {
    for (const form of FORMS) {
      const res = await app.json('GET', '/api/v1/bible/search?query=love', { form })
      expect(res.status).toBe(422)
      expect(problemIn(res.body, form).errors).toEqual([
        { in: 'query', field: 'q', message: 'q is missing (did you mean q for query?)' },
        { in: 'query', field: 'query', message: 'unknown query parameter (did you mean q?)' },
      ])
    }
    // Without a stranger, the missing parameter alone; given but empty, its own rule.
    expect((await app.json('GET', '/api/v1/bible/search', { form: 'bare' })).body.errors).toEqual([
      { in: 'query', field: 'q', message: 'q is missing' },
    ])
    expect((await app.json('GET', '/api/v1/bible/search?q=', { form: 'bare' })).body.errors).toEqual([
      { in: 'query', field: 'q', message: 'expected 1 to 200 characters' },
    ])
    expect((await app.json('GET', '/api/v1/bible/search?q=love', { form: 'bare' })).status).toBe(200)
  })

  test('the synonym table only offers a name the input takes, and spelling still decides the rest', () => {
    expect(nearest('lon', ['lat', 'lng', 'radius_km'])).toBe('lng')
    expect(nearest('lon', ['latitude', 'longitude'])).toBe('longitude')
    expect(nearest('LONGITUDE', ['lat', 'lng'])).toBe('lng')
    expect(nearest('query', ['q', 'translation'])).toBe('q')
    // Without the spelling-unrelated name among the candidates, the nearest spelling (or nothing).
    expect(nearest('lon', ['lat', 'radius_km'])).toBe('lat')
    expect(nearest('zip', ['country_code', 'postal_code'])).toBe('postal_code')
    expect(nearest('addresses', ['ips', 'emails'])).toBeUndefined()
    expect(nearest('round', ['input', 'rounds'])).toBe('rounds')
  })
})

describe('missing members and bodies that are not objects say what is needed', () => {
  test('an empty or missing body names the members the route needs', async () => {
    for (const form of FORMS) {
      const none = await app.handle(
        new Request('http://localhost/api/v1/hash/sha256', {
          method: 'POST',
          headers: { 'x-api-key': TEST_KEY, 'x-response-form': form },
        }),
      )
      expect(none.status).toBe(422)
      const problem = problemIn(await none.json(), form)
      expect(problem.errors).toEqual([
        { in: 'body', field: '(root)', message: 'the request body must be a JSON object with the member input' },
      ])
      expect(problem.detail).toBe('(root): the request body must be a JSON object with the member input')
      const empty = await app.json('POST', '/api/v1/hash/sha256', { body: {}, form })
      expect(problemIn(empty.body, form).errors).toEqual([{ in: 'body', field: 'input', message: 'input is missing' }])
      const nearby = await app.json('POST', '/api/v1/postal/DE/nearby', { body: {}, form })
      expect(problemIn(nearby.body, form).errors).toEqual(
        ['lat', 'lng', 'radius_km'].map((field) => ({ in: 'body', field, message: `${field} is missing` })),
      )
    }
  })

  test('a missing member inside a list item is named by its whole path', async () => {
    const res = await app.json('POST', '/api/v1/postal/validate', { body: { codes: [{ country_code: 'DE' }] }, form: 'bare' })
    expect(res.status).toBe(422)
    expect(res.body.errors).toEqual([{ in: 'body', field: 'codes.0.postal_code', message: 'codes.0.postal_code is missing' }])
  })
})

test('GET /ip/999.1.1.1 places the bad address in the path; POST /ip in the body', async () => {
  const why = '"999.1.1.1" is not a valid IPv4 address: each of the four parts must be 0-255 without leading zeros'
  for (const form of FORMS) {
    const path = await app.json('GET', '/api/v1/ip/999.1.1.1', { form })
    expect(path.status).toBe(422)
    expect(problemIn(path.body, form).errors).toEqual([{ in: 'path', field: 'ip', message: why }])
    const body = await app.json('POST', '/api/v1/ip', { body: { ip: '999.1.1.1' }, form })
    expect(problemIn(body.body, form).errors).toEqual([{ in: 'body', field: 'ip', message: why }])
  }
})

test('on a route that takes no body, a service error on a header is placed in the header (GET /ua without User-Agent)', async () => {
  const res = await app.handle(new Request('http://localhost/api/v1/ua', { headers: { 'x-api-key': TEST_KEY, 'x-response-form': 'bare' } }))
  expect(res.status).toBe(422)
  expect(((await res.json()) as { errors: unknown }).errors).toEqual([
    {
      in: 'header',
      field: 'header.User-Agent',
      message: 'the request has no User-Agent header; to parse another user agent, POST /api/v1/ua with {"ua": …}',
    },
  ])
})

test('?fields=capitol is answered with capital', async () => {
  for (const form of FORMS) {
    const res = await app.json('GET', '/api/v1/countries/DE?fields=capitol,nme,zzzz', { form })
    expect(res.status).toBe(400)
    const problem = problemIn(res.body, form)
    expect(problem.errors).toEqual([
      { in: 'query', field: 'fields', message: 'unknown field capitol (did you mean capital?)' },
      { in: 'query', field: 'fields', message: 'unknown field nme (did you mean name?)' },
      { in: 'query', field: 'fields', message: 'unknown field zzzz' },
    ])
    expect(problem.detail).toStartWith(
      'Unknown fields capitol (did you mean capital?), nme (did you mean name?), zzzz in fields. Valid fields: ',
    )
  }
  const followed = await app.json('GET', '/api/v1/countries/DE?fields=capital', { form: 'bare' })
  expect(followed).toMatchObject({ status: 200, body: { capital: 'Berlin' } })
})

describe('the 404 of an unknown route names the nearest routes and where the reference is', () => {
  test('POST /hash/sha-256 is answered with /api/v1/hash/sha256, which answers', async () => {
    for (const form of FORMS) {
      const res = await app.json('POST', '/api/v1/hash/sha-256', { body: { input: 'abc' }, form })
      expect(res.status).toBe(404)
      const problem = problemIn(res.body, form)
      expect(problem).toMatchObject({ type: 'urn:almanac:problem:not-found', status: 404, instance: '/api/v1/hash/sha-256' })
      expect(problem.detail).toBe(`No such route (did you mean /api/v1/hash/sha256?). ${REFERENCE}`)
    }
    const followed = await app.json('POST', '/api/v1/hash/sha256', { body: { input: 'abc' }, form: 'bare' })
    expect(followed.body.hash).toBe(new Bun.CryptoHasher('sha256').update('abc').digest('hex'))
  })

  test('GET / and a path near no route point at /docs and /openapi.json, which answer', async () => {
    for (const path of ['/', '/api/v1/no/such/route', '/' + 'x'.repeat(2000)]) {
      const res = await app.json('GET', path, { form: 'bare' })
      expect({ path: path.slice(0, 30), status: res.status, detail: res.body.detail }).toEqual({
        path: path.slice(0, 30),
        status: 404,
        detail: `No such route. ${REFERENCE}`,
      })
    }
    expect((await app.request('GET', '/docs')).status).toBe(200)
    expect((await app.json('GET', '/openapi.json')).body.openapi).toStartWith('3.1')
  })

  test('every route one letter off (its last segment) is suggested by its 404', async () => {
    const doc = (await app.json('GET', '/openapi.json')).body
    let checked = 0
    for (const [path, ops] of Object.entries<Record<string, unknown>>(doc.paths)) {
      const last = path.slice(path.lastIndexOf('/') + 1)
      if (path.includes('{') || last.length < 4) continue
      const typo = path.slice(0, -2) + path.slice(-1)
      const method = Object.keys(ops)[0]!.toUpperCase()
      const res = await app.json(method, typo, { form: 'bare', body: method === 'GET' ? undefined : {} })
      if (res.status !== 404) continue
      expect({ typo, detail: res.body.detail }).toEqual({ typo, detail: expect.stringContaining(path) })
      checked++
    }
    expect(checked).toBeGreaterThan(15)
  })

  test('nearestRoutes: parameters take any segment, a trailing * the rest; ties are all named; a path equal to a pattern gets none', () => {
    const patterns = ['/api/v1/hash/sha256', '/api/v1/hash/sha512', '/api/v1/hash/md5', '/api/v1/ip/:ip', '/api/v1/timezones/*', '/docs']
    expect(nearestRoutes(patterns, '/api/v1/hash/sha-256')).toEqual(['/api/v1/hash/sha256'])
    expect(nearestRoutes(patterns, '/api/v1/hash/sha5x6')).toEqual(['/api/v1/hash/sha256', '/api/v1/hash/sha512'])
    expect(nearestRoutes(patterns, '/api/v1/ipp/1.2.3.4')).toEqual(['/api/v1/ip/:ip'])
    expect(nearestRoutes(patterns, '/api/v1/timezone/Europe/Berlin')).toEqual(['/api/v1/timezones/*'])
    expect(nearestRoutes(patterns, '/api/v1/ip/1.2.3.4')).toEqual([])
    expect(nearestRoutes(patterns, '/api/v1/hash')).toEqual([])
    expect(nearestRoutes(patterns, '/')).toEqual([])
  })
})
