/**
 * JWT verification for `Authorization: Bearer`. HS256 with `ALMANAC_JWT_SECRET`; RSA (RS/PS), ECDSA (ES) and EdDSA with
 * the public keys of the JWKS file `ALMANAC_JWT_JWKS`. The algorithms accepted are derived from the keys
 * configured, and each algorithm family is verified only against its own key source, so `alg: none` and
 * algorithm confusion (an HS256 token "signed" with the RSA public key) can never verify.
 */
import { asLogger, type LogSink } from '../../lib/logger.ts'
import { readFileSync, statSync } from 'node:fs'
import {
  createLocalJWKSet,
  decodeProtectedHeader,
  errors,
  jwtVerify,
  type JSONWebKeySet,
  type JWK,
  type JWTPayload,
  type JWTVerifyOptions,
} from 'jose'
import { ConfigError, type Config } from '../../config.ts'

export class TokenError extends Error {}

export interface JwtVerifier {
  /** The verified claims, or a TokenError saying what is wrong in words a client developer can act on. */
  verify(token: string): Promise<JWTPayload>
}

/** What each key type may sign with: only these are ever passed to jose for that key source. */
function algorithmsFor(jwk: JWK, where: string): string[] {
  if (jwk.kty === 'oct')
    throw new ConfigError(`${where}: symmetric (oct) keys do not belong in a JWKS file; put an HS256 secret in ALMANAC_JWT_SECRET`)
  const byType: Record<string, string[]> = {
    RSA: ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'],
    'EC:P-256': ['ES256'],
    'EC:P-384': ['ES384'],
    'EC:P-521': ['ES512'],
    'OKP:Ed25519': ['EdDSA', 'Ed25519'],
  }
  const family = byType[jwk.kty === 'RSA' ? 'RSA' : `${jwk.kty}:${jwk.crv}`]
  if (!family)
    throw new ConfigError(
      `${where}: unsupported key type ${jwk.kty}${jwk.crv ? ` (${jwk.crv})` : ''}; use RSA, EC P-256/384/521 or OKP Ed25519`,
    )
  if (jwk.alg) {
    if (!family.includes(jwk.alg)) throw new ConfigError(`${where}: alg ${jwk.alg} does not fit a ${jwk.kty} key`)
    return [jwk.alg]
  }
  return family
}

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k']

/** Reads the JWKS file: the public half of each signing key, and the algorithms they allow. */
function loadJwks(path: string): { set: ReturnType<typeof createLocalJWKSet>; algorithms: string[]; mtime: number } {
  const where = `ALMANAC_JWT_JWKS ${path}`
  let parsed: JSONWebKeySet
  let mtime: number
  try {
    mtime = statSync(path).mtimeMs
    parsed = JSON.parse(readFileSync(path, 'utf8'))
  } catch (e) {
    throw new ConfigError(`${where}: ${(e as Error).message}`)
  }
  if (!parsed || !Array.isArray(parsed.keys)) throw new ConfigError(`${where}: expected a JSON object with a "keys" array`)
  const keys = parsed.keys.filter((k) => k && (k.use === undefined || k.use === 'sig'))
  if (!keys.length) throw new ConfigError(`${where}: no signing keys`)
  const algorithms = new Set<string>()
  const publicKeys = keys.map((k, i) => {
    for (const alg of algorithmsFor(k, `${where} key ${k.kid ?? i}`)) algorithms.add(alg)
    return Object.fromEntries(Object.entries(k).filter(([name]) => !PRIVATE_MEMBERS.includes(name))) as JWK
  })
  return { set: createLocalJWKSet({ keys: publicKeys }), algorithms: [...algorithms], mtime }
}

/** Why a token failed, from jose's error classes. */
function explain(e: unknown, accepted: string[]): TokenError {
  if (e instanceof TokenError) return e
  if (e instanceof errors.JWTExpired) return new TokenError('The token has expired (exp).')
  if (e instanceof errors.JWTClaimValidationFailed) {
    if (e.claim === 'nbf') return new TokenError('The token is not valid yet (nbf).')
    return new TokenError(`The token's ${e.claim} claim is not acceptable: ${e.reason}.`)
  }
  if (e instanceof errors.JWSSignatureVerificationFailed) return new TokenError('The token signature does not verify.')
  if (e instanceof errors.JOSEAlgNotAllowed)
    return new TokenError(`The token's algorithm is not accepted here; accepted: ${accepted.join(', ')}.`)
  if (e instanceof errors.JWKSNoMatchingKey) return new TokenError('No configured key matches the token (check its kid and alg).')
  if (e instanceof errors.JWKSMultipleMatchingKeys) return new TokenError('Several configured keys match the token; give it a kid.')
  if (e instanceof errors.JOSEError) return new TokenError(`The token is malformed: ${e.message}.`)
  return new TokenError('The token is malformed.')
}

export function createJwtVerifier(
  config: Pick<Config, 'jwtSecret' | 'jwtJwks' | 'jwtLeewaySeconds' | 'jwtIssuer' | 'jwtAudience' | 'jwtRequireExp'>,
  sink: LogSink = () => {},
): JwtVerifier | null {
  const log = asLogger(sink)
  if (!config.jwtSecret && !config.jwtJwks) return null
  const secret = config.jwtSecret ? new TextEncoder().encode(config.jwtSecret) : null
  let jwks = config.jwtJwks ? loadJwks(config.jwtJwks) : null
  let checkedAt = Date.now()

  // Key rotation: the file is re-read when it changes (looked at no more than every 10 s); a broken new
  // file is logged and the previous keys stay in use.
  const currentJwks = () => {
    if (!jwks || !config.jwtJwks || Date.now() - checkedAt < 10_000) return jwks
    checkedAt = Date.now()
    try {
      if (statSync(config.jwtJwks).mtimeMs !== jwks.mtime) jwks = loadJwks(config.jwtJwks)
    } catch (e) {
      log({ level: 'error', msg: 'JWKS reload failed; keeping the previous keys', error: (e as Error).message })
    }
    return jwks
  }

  const claims: JWTVerifyOptions = {
    clockTolerance: config.jwtLeewaySeconds,
    // A token without exp is valid forever once leaked; ALMANAC_JWT_REQUIRE_EXP=false accepts such tokens.
    requiredClaims: config.jwtRequireExp ? ['sub', 'exp'] : ['sub'],
    ...(config.jwtIssuer ? { issuer: config.jwtIssuer } : {}),
    ...(config.jwtAudience ? { audience: config.jwtAudience } : {}),
  }
  const accepted = () => [...(secret ? ['HS256'] : []), ...(currentJwks()?.algorithms ?? [])]

  return {
    async verify(token) {
      const allowed = accepted()
      try {
        if (!/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token))
          throw new TokenError('The token is not a compact JWS (three base64url parts separated by dots).')
        const { alg } = decodeProtectedHeader(token)
        if (typeof alg !== 'string' || !allowed.includes(alg))
          throw new TokenError(
            `The token's algorithm ${JSON.stringify(alg ?? null)} is not accepted here; accepted: ${allowed.join(', ')}.`,
          )
        const { payload } =
          alg === 'HS256'
            ? await jwtVerify(token, secret!, { ...claims, algorithms: ['HS256'] })
            : await jwtVerify(token, currentJwks()!.set, { ...claims, algorithms: currentJwks()!.algorithms })
        if (typeof payload.sub !== 'string' || payload.sub === '' || payload.sub.length > 256)
          throw new TokenError('The token needs a sub claim: a non-empty string of at most 256 characters.')
        return payload
      } catch (e) {
        throw explain(e, allowed)
      }
    },
  }
}
