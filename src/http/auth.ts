/**
 * Who is calling (SPEC Authentication): `X-API-Key` or `Authorization: Bearer <JWT>` on every /api/v1
 * request. Runs before the body is parsed, so missing credentials are a 401 whatever the body holds.
 */
import type { Config, Plan } from '../config.ts'
import { AlmanacError } from '../lib/errors.ts'

export interface Principal {
  /** Quota subject: the key's id, or the JWT `sub`. */
  subject: string
  plan: Plan
  via: 'key' | 'jwt'
}

export interface Authenticator {
  /** Resolves the caller or throws an `unauthorized` AlmanacError. */
  authenticate(request: Request): Promise<Principal>
}

export const unauthorized = (detail: string, error = 'invalid_token') =>
  new AlmanacError('unauthorized', detail, {
    headers: { 'WWW-Authenticate': `Bearer realm="almanac", error="${error}", ApiKey header="X-API-Key"` },
  })

const sha256 = (s: string) => new Bun.CryptoHasher('sha256').update(s).digest('hex')

/** Keys from configuration only. Lookup is by the key's hash, so no comparison leaks its prefix. */
export function createAuthenticator(config: Config): Authenticator {
  const byHash = new Map(config.apiKeys.map(({ key, plan }) => [sha256(key), { subject: `key:${sha256(key).slice(0, 12)}`, plan: config.plans[plan ?? config.defaultPlan]! }]))
  return {
    async authenticate(request) {
      const key = request.headers.get('x-api-key')
      if (key) {
        const hit = byHash.get(sha256(key))
        if (!hit) throw unauthorized('The API key is not valid.')
        return { ...hit, via: 'key' }
      }
      throw unauthorized('Send an API key in X-API-Key or a JWT in Authorization: Bearer.', 'invalid_request')
    },
  }
}
