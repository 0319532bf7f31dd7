/**
 * Authentication through the real app (`app.handle`) over the sample domain: API keys from the
 * configuration, JWTs signed here with jose (HS256 by secret; RS256, ES256, EdDSA by a JWKS file written
 * by the test) and every way a token must be refused.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { base64url, exportJWK, exportSPKI, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose'
import { testApp, TEST_KEY, type TestApp } from '../support/app.ts'
import { sampleDomain } from '../support/sample-domain.ts'

const SECRET = 'an-hs256-secret-of-at-least-32-bytes!!'
const dir = mkdtempSync(join(tmpdir(), 'almanac-auth-'))
const jwksPath = join(dir, 'jwks.json')
const keys: Record<'RS256' | 'ES256' | 'EdDSA', { privateKey: CryptoKey; publicKey: CryptoKey }> = {} as never
let app: TestApp

const now = () => Math.floor(Date.now() / 1000)

async function sign(alg: string, claims: JWTPayload, key: CryptoKey | Uint8Array, kid?: string) {
  return new SignJWT(claims).setProtectedHeader({ alg, ...(kid ? { kid } : {}) }).sign(key)
}
/** Tokens expire in a minute unless a test says otherwise (exp is required by default; `exp: undefined` leaves it out). */
const expiring = (claims: JWTPayload): JWTPayload => JSON.parse(JSON.stringify({ exp: now() + 60, ...claims }))
const hs = (claims: JWTPayload) => sign('HS256', expiring(claims), new TextEncoder().encode(SECRET))
const asym = (alg: keyof typeof keys, claims: JWTPayload) => sign(alg, expiring(claims), keys[alg].privateKey, alg)

const get = (headers: Record<string, string>, path = '/api/v1/planets/earth') => app.json('GET', path, { headers, key: null })
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

beforeAll(async () => {
  for (const alg of ['RS256', 'ES256', 'EdDSA'] as const) keys[alg] = await generateKeyPair(alg, { extractable: true })
  const jwks = {
    keys: await Promise.all(
      (Object.keys(keys) as (keyof typeof keys)[]).map(async (alg) => ({
        ...(await exportJWK(keys[alg].publicKey)),
        kid: alg,
        use: 'sig',
      })),
    ),
  }
  writeFileSync(jwksPath, JSON.stringify(jwks))
  app = await testApp({
    domains: [sampleDomain()],
    env: { ALMANAC_PLANS: 'test:1000/1d,gold:5000/1h', ALMANAC_JWT_SECRET: SECRET, ALMANAC_JWT_JWKS: jwksPath, ALMANAC_JWT_LEEWAY: '30' },
  })
})
afterAll(async () => {
  await app.close()
  rmSync(dir, { recursive: true, force: true })
})

/** A 401 problem with a challenge for each scheme; RFC 6750 `error` only when credentials were sent. */
function expectUnauthorized(res: { status: number; body: any; headers: Headers }, detail: RegExp, error?: string) {
  expect(res.status).toBe(401)
  const problem = res.body.error ?? res.body
  expect(problem.status).toBe(401)
  expect(problem.detail).toMatch(detail)
  const challenge = res.headers.get('www-authenticate')!
  expect(challenge).toContain('ApiKey realm="almanac", header="X-API-Key"')
  expect(challenge).toContain('Bearer realm="almanac"')
  if (error) expect(challenge).toContain(`error="${error}"`)
  else expect(challenge).not.toContain('error=')
  // No caller, no credits: the SPEC's quota headers at zero (SPEC: on every response), no plan named.
  const quota = ['x-quota-limit', 'x-quota-remaining', 'ratelimit-policy', 'ratelimit'].map((h) => res.headers.get(h))
  expect(quota).toEqual(['0', '0', null, null])
  expect(Number(res.headers.get('x-quota-reset'))).toBeGreaterThan(0)
}

describe('API keys', () => {
  test('a configured key is accepted', async () => {
    const res = await app.json('GET', '/api/v1/planets/earth', { key: TEST_KEY })
    expect(res.status).toBe(200)
    expect(res.body.data.planet_name).toBe('earth')
  })

  test('no credentials: 401 naming both ways to authenticate, even with a malformed body', async () => {
    expectUnauthorized(await get({}), /X-API-Key.*Bearer/)
    const bad = await app.json('POST', '/api/v1/planets/bulk', { key: null, body: '{not json' })
    expectUnauthorized(bad, /X-API-Key/)
  })

  test('a wrong key, an empty key, a key differing in one character: 401 invalid_token', async () => {
    expectUnauthorized(await get({ 'x-api-key': 'not-a-key-at-all' }), /API key is not valid/, 'invalid_token')
    expectUnauthorized(await get({ 'x-api-key': '' }), /API key is not valid/, 'invalid_token')
    expectUnauthorized(await get({ 'x-api-key': TEST_KEY.slice(0, -1) + 'X' }), /API key is not valid/, 'invalid_token')
  })

  test('an Authorization header that is not Bearer: 401 invalid_request', async () => {
    expectUnauthorized(await get({ authorization: `Basic ${btoa('a:b')}` }), /Bearer <JWT>/, 'invalid_request')
  })

  test('health, readiness, metrics, docs and the OpenAPI document need no credentials', async () => {
    for (const path of ['/healthz', '/readyz', '/metrics', '/docs', '/openapi.json']) {
      const res = await app.request('GET', path, { key: null })
      expect({ path, status: res.status }).toEqual({ path, status: 200 })
      await res.arrayBuffer()
    }
  })
})

describe('JWT', () => {
  test('HS256 by the shared secret; sub is the quota subject', async () => {
    const token = await hs({ sub: 'user-1', exp: now() + 60 })
    const first = await get(bearer(token))
    expect(first.status).toBe(200)
    expect(first.headers.get('x-quota-remaining')).toBe('999')
    // Another token for the same sub draws on the same credits.
    const again = await get(bearer(await hs({ sub: 'user-1', exp: now() + 120 })))
    expect(again.headers.get('x-quota-remaining')).toBe('998')
    const other = await get(bearer(await hs({ sub: 'user-2' })))
    expect(other.headers.get('x-quota-remaining')).toBe('999')
  })

  test.each(['RS256', 'ES256', 'EdDSA'] as const)('%s by the JWKS file', async (alg) => {
    const res = await get(bearer(await asym(alg, { sub: `user-${alg}`, exp: now() + 60 })))
    expect(res.status).toBe(200)
    expect(res.body.data.planet_name).toBe('earth')
  })

  test('a plan claim picks a configured plan; an unknown one is a 403 naming the plans', async () => {
    const gold = await get(bearer(await hs({ sub: 'user-gold', plan: 'gold' })))
    expect(gold.status).toBe(200)
    expect(gold.headers.get('x-quota-limit')).toBe('5000')
    expect(gold.headers.get('ratelimit-policy')).toBe('"gold";q=5000;w=3600')
    const platinum = await get(bearer(await hs({ sub: 'user-platinum', plan: 'platinum' })))
    expect(platinum.status).toBe(403)
    expect(platinum.body.error.detail).toMatch(/plan "platinum".*plans: test, gold/)
    // The plan is not offered, so the caller has no credits: the SPEC's headers at zero, no plan named.
    expect([platinum.headers.get('x-quota-limit'), platinum.headers.get('x-quota-remaining')]).toEqual(['0', '0'])
    expect(platinum.headers.has('ratelimit-policy')).toBe(false)
    expectUnauthorized(await get(bearer(await hs({ sub: 'user-x', plan: 7 })))!, /plan claim must be a string/, 'invalid_token')
  })

  test('expired beyond the leeway: 401; expired within the leeway: accepted', async () => {
    expectUnauthorized(await get(bearer(await hs({ sub: 'u', exp: now() - 120 }))), /expired/, 'invalid_token')
    expectUnauthorized(await get(bearer(await asym('RS256', { sub: 'u', exp: now() - 120 }))), /expired/, 'invalid_token')
    expect((await get(bearer(await hs({ sub: 'u', exp: now() - 10 })))).status).toBe(200)
  })

  test('nbf in the future beyond the leeway: 401; within the leeway: accepted', async () => {
    expectUnauthorized(await get(bearer(await hs({ sub: 'u', nbf: now() + 120 }))), /not valid yet/, 'invalid_token')
    expect((await get(bearer(await hs({ sub: 'u', nbf: now() + 10 })))).status).toBe(200)
  })

  test('alg none is refused', async () => {
    const header = base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT' }))
    const payload = base64url.encode(JSON.stringify({ sub: 'mallory', exp: now() + 60 }))
    expectUnauthorized(await get(bearer(`${header}.${payload}.`)), /algorithm "none" is not accepted/, 'invalid_token')
    const noneUpper = base64url.encode(JSON.stringify({ alg: 'None' }))
    expectUnauthorized(await get(bearer(`${noneUpper}.${payload}.`)), /not accepted/, 'invalid_token')
  })

  test('algorithm confusion: HS256 "signed" with the RSA public key is refused', async () => {
    const pem = await exportSPKI(keys.RS256.publicKey)
    const jwk = JSON.stringify(await exportJWK(keys.RS256.publicKey))
    for (const secret of [pem, jwk]) {
      const token = await sign('HS256', { sub: 'mallory', exp: now() + 60 }, new TextEncoder().encode(secret), 'RS256')
      expectUnauthorized(await get(bearer(token)), /signature does not verify/, 'invalid_token')
    }
  })

  test('without a secret configured, HS256 is not accepted at all (only the JWKS algorithms)', async () => {
    const jwksOnly = await testApp({ domains: [sampleDomain()], env: { ALMANAC_PLANS: 'test:1000/1d', ALMANAC_JWT_JWKS: jwksPath } })
    try {
      const pem = await exportSPKI(keys.RS256.publicKey)
      const token = await sign('HS256', { sub: 'mallory' }, new TextEncoder().encode(pem), 'RS256')
      const res = await jwksOnly.json('GET', '/api/v1/planets/earth', { headers: bearer(token), key: null })
      expect(res.status).toBe(401)
      expect(res.body.error.detail).toMatch(/algorithm "HS256" is not accepted here; accepted: RS256/)
      expect(res.body.error.detail).not.toContain('HS256,')
      // An ES256 key in the file does not let an RSA key sign ES256 tokens, nor the reverse.
      const rsToken = await asym('RS256', { sub: 'ok' })
      expect((await jwksOnly.json('GET', '/api/v1/planets/earth', { headers: bearer(rsToken), key: null })).status).toBe(200)
    } finally {
      await jwksOnly.close()
    }
  })

  test('a wrong signature is refused: another key under a configured kid, a flipped signature, another secret', async () => {
    const stranger = await generateKeyPair('RS256')
    expectUnauthorized(
      await get(bearer(await sign('RS256', { sub: 'm' }, stranger.privateKey, 'RS256'))),
      /signature does not verify/,
      'invalid_token',
    )
    const good = await asym('ES256', { sub: 'm' })
    const [h, p, s] = good.split('.')
    const flipped = s!.slice(0, 10) + (s![10] === 'A' ? 'B' : 'A') + s!.slice(11)
    expectUnauthorized(await get(bearer(`${h}.${p}.${flipped}`)), /signature does not verify/, 'invalid_token')
    const otherSecret = await sign('HS256', { sub: 'm' }, new TextEncoder().encode('another-secret-of-at-least-32-bytes!!'))
    expectUnauthorized(await get(bearer(otherSecret)), /signature does not verify/, 'invalid_token')
    // A payload changed after signing.
    const tampered = `${h}.${base64url.encode(JSON.stringify({ sub: 'admin' }))}.${s}`
    expectUnauthorized(await get(bearer(tampered)), /signature does not verify/, 'invalid_token')
  })

  test('a token without sub, or with an empty sub, is refused', async () => {
    expectUnauthorized(await get(bearer(await hs({ exp: now() + 60 }))), /sub/, 'invalid_token')
    expectUnauthorized(await get(bearer(await hs({ sub: '' }))), /sub/, 'invalid_token')
    expectUnauthorized(await get(bearer(await asym('EdDSA', { scope: 'x' }))), /sub/, 'invalid_token')
  })

  test('malformed tokens: 401, never 500', async () => {
    const cases = [
      'abc',
      'a.b',
      'a.b.c',
      '....',
      `${base64url.encode('{"alg":')}.e30.`,
      `${base64url.encode('[]')}.e30.x`,
      'x'.repeat(5000),
      'ey.ey.ey',
      `${base64url.encode('{"alg":"HS256"}')}.${base64url.encode('not json')}.AAAA`,
    ]
    for (const token of cases) {
      const res = await get(bearer(token))
      expect({ token: token.slice(0, 40), status: res.status }).toEqual({ token: token.slice(0, 40), status: 401 })
      expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"')
    }
  })

  test('an unknown kid is refused', async () => {
    const token = await sign('ES256', { sub: 'm' }, keys.ES256.privateKey, 'no-such-kid')
    expectUnauthorized(await get(bearer(token)), /No configured key matches/, 'invalid_token')
  })
})

describe('JWT configuration', () => {
  test('a bearer token where no JWT is configured: 401 saying to use an API key', async () => {
    const keysOnly = await testApp({ domains: [sampleDomain()] })
    try {
      const res = await keysOnly.json('GET', '/api/v1/planets/earth', { headers: bearer(await hs({ sub: 'u' })), key: null })
      expect(res.status).toBe(401)
      expect(res.body.error.detail).toMatch(/does not accept JWTs/)
      expect(res.headers.get('www-authenticate')).not.toContain('Bearer')
    } finally {
      await keysOnly.close()
    }
  })

  test('issuer and audience, when configured, must match', async () => {
    const strict = await testApp({
      domains: [sampleDomain()],
      env: { ALMANAC_JWT_SECRET: SECRET, ALMANAC_JWT_ISSUER: 'https://issuer.example', ALMANAC_JWT_AUDIENCE: 'almanac' },
    })
    try {
      const call = async (claims: JWTPayload) =>
        (await strict.json('GET', '/api/v1/planets/earth', { headers: bearer(await hs(claims)), key: null })).status
      expect(await call({ sub: 'u', iss: 'https://issuer.example', aud: 'almanac' })).toBe(200)
      expect(await call({ sub: 'u', iss: 'https://evil.example', aud: 'almanac' })).toBe(401)
      expect(await call({ sub: 'u', iss: 'https://issuer.example', aud: 'other' })).toBe(401)
      expect(await call({ sub: 'u' })).toBe(401)
    } finally {
      await strict.close()
    }
  })

  test('exp is required unless ALMANAC_JWT_REQUIRE_EXP=false', async () => {
    expectUnauthorized(await get(bearer(await hs({ sub: 'forever', exp: undefined }))), /exp/, 'invalid_token')
    const lenient = await testApp({ domains: [sampleDomain()], env: { ALMANAC_JWT_SECRET: SECRET, ALMANAC_JWT_REQUIRE_EXP: 'false' } })
    try {
      const res = await lenient.json('GET', '/api/v1/planets/earth', {
        headers: bearer(await hs({ sub: 'forever', exp: undefined })),
        key: null,
      })
      expect(res.status).toBe(200)
    } finally {
      await lenient.close()
    }
  })

  test('an HS256 secret shorter than 32 bytes is refused at start', async () => {
    await expect(testApp({ domains: [sampleDomain()], env: { ALMANAC_JWT_SECRET: 'x'.repeat(31) } })).rejects.toThrow(
      /ALMANAC_JWT_SECRET: 31 bytes; HS256 needs at least 32/,
    )
    // Bytes, not characters: 11 three-byte characters are 33 bytes.
    const wide = await testApp({ domains: [sampleDomain()], env: { ALMANAC_JWT_SECRET: '€'.repeat(11) } })
    await wide.close()
  })

  test('a plan claim naming an Object.prototype member is a 403, not a 500', async () => {
    for (const plan of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
      const res = await get(bearer(await hs({ sub: 'proto', plan })))
      expect({ plan, status: res.status, type: (res.body.error ?? res.body).type }).toEqual({
        plan,
        status: 403,
        type: 'urn:almanac:problem:forbidden',
      })
    }
  })

  test('caller text never reaches a header unencoded: a JWT alg beyond Latin-1 is a 401 with an ASCII challenge', async () => {
    for (const alg of ['中', '\u{1F600}', 'a\u2028b', 'x"y\\z', 'é']) {
      const header = base64url.encode(JSON.stringify({ alg, typ: 'JWT' }))
      const token = `${header}.${base64url.encode(JSON.stringify({ sub: 'u', exp: now() + 60 }))}.c2ln`
      const res = await get(bearer(token))
      expect({ alg, status: res.status }).toEqual({ alg, status: 401 })
      const challenge = res.headers.get('www-authenticate')!
      expect(challenge).toMatch(/^[\x20-\x7e]+$/)
      expect(challenge).toContain('error="invalid_token"')
    }
  })

  test('a JWKS file with a symmetric key or no keys is refused at start, naming the setting', async () => {
    const bad = join(dir, 'bad.json')
    writeFileSync(bad, JSON.stringify({ keys: [{ kty: 'oct', k: 'c2VjcmV0' }] }))
    await expect(testApp({ domains: [sampleDomain()], env: { ALMANAC_JWT_JWKS: bad } })).rejects.toThrow(/ALMANAC_JWT_JWKS .*symmetric/)
    writeFileSync(bad, JSON.stringify({ keys: [] }))
    await expect(testApp({ domains: [sampleDomain()], env: { ALMANAC_JWT_JWKS: bad } })).rejects.toThrow(
      /ALMANAC_JWT_JWKS .*no signing keys/,
    )
    await expect(testApp({ domains: [sampleDomain()], env: { ALMANAC_JWT_JWKS: join(dir, 'missing.json') } })).rejects.toThrow(
      /ALMANAC_JWT_JWKS .*missing\.json/,
    )
  })
})
