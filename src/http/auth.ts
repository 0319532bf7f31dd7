/**
 * Who is calling (SPEC Authentication): `X-API-Key` or `Authorization: Bearer <JWT>` on every /api/v1
 * request. Runs before the body is parsed, so missing credentials are a 401 whatever the body holds.
 *
 * API keys come from `ALMANAC_API_KEYS` and from the key database (`almanac keys create`). Both are found
 * by the SHA-256 of the presented key, never by comparing the key itself: a lookup's timing can only tell
 * an attacker about a hash prefix, which reveals nothing about any key (SHA-256 is preimage resistant).
 */
import type { Config, Plan } from '../config.ts'
import { AlmanacError, unavailable } from '../lib/errors.ts'
import { keyHash, type KeyStore } from '../stores/keys.ts'
import { createJwtVerifier, TokenError } from './jwt.ts'

export interface Principal {
  /** Quota subject: `key:<id>` for an API key, `jwt:<sub>` for a token. */
  subject: string
  plan: Plan
  via: 'key' | 'jwt'
}

export interface Authenticator {
  /**
   * The caller, or an `unauthorized` (401) or `forbidden` (403) AlmanacError thrown. API keys are answered
   * at once; a JWT with a promise (signature checks are async).
   */
  authenticate(request: Request): Principal | Promise<Principal>
}

const REALM = 'realm="almanac"'
/**
 * A quoted-string for a challenge parameter holding text that may echo caller input (a JWT's `alg`):
 * RFC 6750 allows %x20-21 / %x23-5B / %x5D-7E in error_description, and a header value beyond Latin-1
 * makes the whole response fail, so anything else becomes `?`.
 */
const quoted = (s: string) => `"${s.replace(/[^\x20\x21\x23-\x5B\x5D-\x7E]/g, '?')}"`

/**
 * A 401 with one challenge per accepted scheme (RFC 9110 §11.6.1). `error` follows RFC 6750: absent when
 * no credentials were sent, `invalid_request` for a malformed header, `invalid_token` for a bad key or JWT.
 */
export const unauthorized = (
  detail: string,
  error?: 'invalid_request' | 'invalid_token',
  scheme: 'key' | 'jwt' | null = null,
  jwt = true,
) => {
  const params = (s: 'key' | 'jwt') => (error && scheme === s ? `, error="${error}", error_description=${quoted(detail)}` : '')
  const challenges = [`ApiKey ${REALM}, header="X-API-Key"${params('key')}`]
  if (jwt) challenges.push(`Bearer ${REALM}${params('jwt')}`)
  return new AlmanacError('unauthorized', detail, { headers: { 'WWW-Authenticate': challenges.join(', ') } })
}

/** A digest as hex: config keys are looked up by it, the key database by the bytes themselves. */
const hex = (digest: Uint8Array) => Buffer.from(digest.buffer, digest.byteOffset, digest.byteLength).toString('hex')

export interface AuthenticatorOptions {
  /** The key database; without it only `ALMANAC_API_KEYS` keys are accepted. */
  keys?: KeyStore
  log?: (line: string) => void
}

export function createAuthenticator(config: Config, options: AuthenticatorOptions = {}): Authenticator {
  const jwt = createJwtVerifier(config, options.log)
  const withJwt = jwt !== null
  const planOf = (name: string | null, whose: string): Plan => {
    const plan = config.plans.get(name ?? config.defaultPlan)
    if (!plan)
      throw new AlmanacError(
        'forbidden',
        `${whose} names plan ${JSON.stringify(name)}, which this server does not offer (plans: ${[...config.plans.keys()].join(', ')}).`,
      )
    return plan
  }

  /** `ALMANAC_API_KEYS` by the hex of their hash; each key's Principal is made on its first use, then shared. */
  const fromConfig = new Map<string, { subject: string; plan: string | null; principal?: Principal }>(
    config.apiKeys.map(({ key, plan }) => {
      const id = hex(keyHash(key))
      return [id, { subject: `key:cfg_${id.slice(0, 16)}`, plan: plan ?? null }]
    }),
  )

  const byKey = (key: string): Principal => {
    if (!key || key.length > 512) throw unauthorized('The API key is not valid.', 'invalid_token', 'key', withJwt)
    const digest = keyHash(key)
    const configured = fromConfig.size ? fromConfig.get(hex(digest)) : undefined
    if (configured)
      return (configured.principal ??= { subject: configured.subject, plan: planOf(configured.plan, 'The API key'), via: 'key' })
    let stored
    try {
      stored = options.keys?.findByHash(digest)
    } catch (e) {
      // A locked or broken key database is an outage, not the caller's fault.
      throw unavailable(`The API key database cannot be read: ${(e as Error).message}. Try again shortly.`)
    }
    if (!stored) throw unauthorized('The API key is not valid.', 'invalid_token', 'key', withJwt)
    if (stored.revoked) throw unauthorized('The API key has been revoked.', 'invalid_token', 'key', withJwt)
    return { subject: `key:${stored.id}`, plan: planOf(stored.plan, 'The API key'), via: 'key' }
  }

  const byToken = async (token: string): Promise<Principal> => {
    if (!jwt) throw unauthorized('This server does not accept JWTs; send an API key in X-API-Key.', 'invalid_request', 'jwt', false)
    let claims
    try {
      claims = await jwt.verify(token)
    } catch (e) {
      if (e instanceof TokenError) throw unauthorized(e.message, 'invalid_token', 'jwt')
      throw e
    }
    const plan = claims.plan
    if (plan !== undefined && typeof plan !== 'string')
      throw unauthorized("The token's plan claim must be a string naming a plan.", 'invalid_token', 'jwt')
    return { subject: `jwt:${claims.sub}`, plan: planOf(plan ?? null, "The token's plan claim"), via: 'jwt' }
  }

  return {
    authenticate(request) {
      const key = request.headers.get('x-api-key')
      // X-API-Key wins when both are sent: a proxy may add its own Authorization header.
      if (key !== null) return byKey(key.trim())
      const authorization = request.headers.get('authorization')
      if (authorization !== null) {
        const bearer = /^Bearer +(\S+) *$/i.exec(authorization)
        if (!bearer)
          throw unauthorized(
            'The Authorization header must be "Bearer <JWT>"; send an API key in X-API-Key instead.',
            'invalid_request',
            'jwt',
            withJwt,
          )
        return byToken(bearer[1]!)
      }
      throw unauthorized(
        withJwt ? 'Send an API key in X-API-Key or a JWT in Authorization: Bearer.' : 'Send an API key in X-API-Key.',
        undefined,
        null,
        withJwt,
      )
    },
  }
}
