/**
 * Who is calling (SPEC Authentication): `X-API-Key` or `Authorization: Bearer <JWT>` on every /api/v1
 * request. Runs before the body is parsed, so missing credentials are a 401 whatever the body holds.
 *
 * API keys come from `ALMANAC_API_KEYS` and from the key database (`almanac keys create`). Both are found
 * by the SHA-256 of the presented key, never by comparing the key itself: a lookup's timing can only tell
 * an attacker about a hash prefix, which reveals nothing about any key (SHA-256 is preimage resistant).
 *
 * A stored key or a JWT may be limited to some domains (key scopes, the JWT `scope` claim): a request
 * outside them is a 403 naming the scopes (`checkScope`, at admission, with the domain its path resolved
 * to in the route table); nothing at all for callers without scopes. A stored key may also expire: a 401
 * from then on; so is a secret a rotation replaced, once its grace has ended.
 *
 * A stored key that belongs to a customer spends the customer's credits (`subject: customer:<id>`) on the
 * customer's plan, whichever of the customer's keys calls; `caller` still names the key.
 */
import type { Config, Plan } from '../../config.ts'
import { AlmanacError, storeUnavailable } from '../../lib/errors.ts'
import { type Customer, hex, keyHash, type KeyMatch, type KeyStore, type StoredKey } from '../../stores/keys.ts'
import { createJwtVerifier, TokenError } from './jwt.ts'

export interface Principal {
  /**
   * Quota subject, whose credits a request spends: the caller's own (`caller`), or its customer's
   * (`customer:<id>`) when its key belongs to one, so all of one customer's keys share one pool.
   */
  subject: string
  /** Who called, for usage and logs: `key:<id>` for an API key, `jwt:<sub>` for a token. */
  caller: string
  /** The customer (account) the key belongs to, if any. */
  customer?: string
  plan: Plan
  via: 'key' | 'jwt'
  /** Domains the caller may call; absent: every domain. */
  scopes?: ReadonlySet<string>
}

export interface Authenticator {
  /**
   * The caller, or an `unauthorized` (401) or `forbidden` (403) AlmanacError thrown. API keys are answered
   * at once; a JWT with a promise (signature checks are async).
   */
  authenticate(request: Request): Principal | Promise<Principal>
  /**
   * Why no caller can be accepted (no ALMANAC_API_KEYS, no JWT verification, no usable key in the key
   * store), or null. Read again on each call: a key created with `almanac keys create` while the server runs
   * counts at once. A key store that cannot be read says nothing here (its failures are 503s of their own).
   */
  unconfigured?(): null | string | Promise<null | string>
  /**
   * The stored keys and customers whose plan this server does not offer (each of their calls is a 403), one
   * warning per plan, for the log at start and /readyz; [] when none. The store is listed at most once a
   * PLAN_RECHECK_MS (by the authenticator's clock; /readyz is polled and a store may hold 100,000 keys): a
   * key created or re-planned since is seen by the first call after that. A store that cannot be read says
   * nothing here (its failures are 503s of their own). Configured keys and ALMANAC_DEFAULT_PLAN naming an
   * unknown plan never get this far: they stop the start (config.ts).
   */
  unknownPlans?(): AuthWarning[] | Promise<AuthWarning[]>
}

/** A /readyz warning of the auth layer (`component`: `auth` for the settings, `keys` for the key store). */
export interface AuthWarning {
  component: 'auth' | 'keys'
  problem: string
}

/** How long the stored keys' plans, once listed, stand for /readyz before the store is listed again. */
export const PLAN_RECHECK_MS = 60_000
/** Ids named per plan and kind in a warning; beyond, a count ("and 120 more"). */
const NAMED_PER_PLAN = 20

/** What a server that can accept no one says at start and in /readyz's warnings. */
export const NO_CREDENTIALS =
  'No API keys or JWT verification are configured, so every /api/v1 request is answered 401: set ALMANAC_API_KEYS (key:plan, ' +
  'comma-separated), create a key with `almanac keys create --name NAME`, or set ALMANAC_JWT_SECRET / ALMANAC_JWT_JWKS.'

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

export interface AuthenticatorOptions {
  /** The key database; without it only `ALMANAC_API_KEYS` keys are accepted. */
  keys?: KeyStore
  log?: (line: string) => void
  /** The time keys expire by (the app's clock). */
  clock?: () => number
}

/**
 * A 403 when the caller's scopes leave out `domain`, the domain the request's path belongs to (none for
 * paths of no domain: meta, openapi); a JWT also gets RFC 6750's insufficient_scope challenge.
 */
export function checkScope(principal: Principal, domain: string | undefined): void {
  if (!principal.scopes || domain === undefined || principal.scopes.has(domain)) return
  throw outOfScope(principal, domain)
}

const outOfScope = (principal: Principal, domain: string) => {
  const scopes = [...principal.scopes!]
  const who = principal.via === 'key' ? 'This API key' : 'This token'
  return new AlmanacError(
    'forbidden',
    `${who} may call only ${
      scopes.length
        ? `the domain${scopes.length > 1 ? 's' : ''} ${scopes.join(', ')} (its scopes)`
        : 'no domain ' + '(its scope names none)'
    }; this path belongs to ${domain}.`,
    {
      extra: { scopes, domain },
      ...(principal.via === 'jwt'
        ? { headers: { 'WWW-Authenticate': `Bearer ${REALM}, error="insufficient_scope", scope=${quoted(domain)}` } }
        : {}),
    },
  )
}

export function createAuthenticator(config: Config, options: AuthenticatorOptions = {}): Authenticator {
  const jwt = createJwtVerifier(config, options.log)
  const clock = options.clock ?? Date.now
  /** Scope sets by their text: keys and tokens repeat a handful of combinations (at most 1,000 kept, 2 KB each). */
  const scopeSets = new Map<string, ReadonlySet<string>>()
  const scopeSet = (scopes: readonly string[]): ReadonlySet<string> => {
    const text = scopes.join(' ')
    let set = scopeSets.get(text)
    if (!set) {
      set = new Set(scopes)
      if (scopeSets.size < 1000) scopeSets.set(text, set)
    }
    return set
  }
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

  /**
   * `ALMANAC_API_KEYS` by their text (the config holds them as text anyway): a configured key is found
   * without hashing it, which was ~6% of an authenticated light request's CPU. Each key's Principal is made
   * on its first use, then shared. The hash's hex is only the subject's name.
   */
  const fromConfig = new Map<string, { subject: string; plan: string | null; principal?: Principal }>(
    config.apiKeys.map(({ key, plan }) => [key, { subject: `key:cfg_${hex(keyHash(key)).slice(0, 16)}`, plan: plan ?? null }]),
  )

  const byKey = (key: string): Principal | Promise<Principal> => {
    if (!key || key.length > 512) throw unauthorized('The API key is not valid.', 'invalid_token', 'key', withJwt)
    const configured = fromConfig.get(key)
    if (configured)
      return (configured.principal ??= {
        subject: configured.subject,
        caller: configured.subject,
        plan: planOf(configured.plan, 'The API key'),
        via: 'key',
      })
    const digest = keyHash(key)
    let stored
    try {
      stored = options.keys?.findByHash(digest)
    } catch (e) {
      throw storeFailed(e)
    }
    return stored instanceof Promise ? stored.then(fromStore, (e) => Promise.reject(storeFailed(e))) : fromStore(stored)
  }

  // A locked or broken key database, or an unreachable Redis, is an outage, not the caller's fault.
  const storeFailed = (e: unknown) => storeUnavailable(`The API key database cannot be read: ${(e as Error).message}. Try again shortly.`)

  const fromStore = (found: KeyMatch | null | undefined): Principal => {
    if (!found) throw unauthorized('The API key is not valid.', 'invalid_token', 'key', withJwt)
    const { record: stored, customer, retires } = found
    if (stored.revoked) throw unauthorized('The API key has been revoked.', 'invalid_token', 'key', withJwt)
    if (retires !== null && clock() >= Date.parse(retires))
      throw unauthorized(`The API key has been rotated; its grace period ended at ${retires}.`, 'invalid_token', 'key', withJwt)
    if (stored.expires !== null && clock() >= Date.parse(stored.expires))
      throw unauthorized(`The API key expired at ${stored.expires}.`, 'invalid_token', 'key', withJwt)
    const caller = `key:${stored.id}`
    // A customer's keys spend the customer's credits on the customer's plan; the key's own plan waits
    // unused until the key leaves the customer.
    const principal: Principal =
      stored.customer === null
        ? { subject: caller, caller, plan: planOf(stored.plan, 'The API key'), via: 'key' }
        : {
            subject: `customer:${stored.customer}`,
            caller,
            customer: stored.customer,
            plan: planOf(customer?.plan ?? null, "The API key's customer"),
            via: 'key',
          }
    if (stored.scopes) principal.scopes = scopeSet(stored.scopes)
    return principal
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
    const scope = claims.scope
    if (scope !== undefined && (typeof scope !== 'string' || scope.length > 2048))
      throw unauthorized("The token's scope claim must be a string of space-separated domain names.", 'invalid_token', 'jwt')
    const caller = `jwt:${claims.sub}`
    const principal: Principal = { subject: caller, caller, plan: planOf(plan ?? null, "The token's plan claim"), via: 'jwt' }
    if (scope !== undefined) principal.scopes = scopeSet(scope.split(' ').filter(Boolean))
    return principal
  }

  // Once a usable stored key has been seen the store is not listed again (/readyz is polled; a store may
  // hold many keys): a server whose every key is later revoked is not warned about.
  let sawStoredKey = false
  const usable = (stored: StoredKey[]) => {
    sawStoredKey ||= stored.some((k) => !k.revoked && (k.expires === null || clock() < Date.parse(k.expires)))
    return sawStoredKey ? null : NO_CREDENTIALS
  }
  const unconfigured = (): null | string | Promise<null | string> => {
    if (fromConfig.size || withJwt || sawStoredKey) return null
    if (!options.keys) return NO_CREDENTIALS
    try {
      const stored = options.keys.list()
      return stored instanceof Promise ? stored.then(usable, () => null) : usable(stored)
    } catch {
      return null
    }
  }

  return {
    unconfigured,
    unknownPlans: planChecker(config, options.keys, clock),
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

/** Authenticator.unknownPlans over `store`: its answer kept for PLAN_RECHECK_MS of `clock`. */
function planChecker(config: Config, store: KeyStore | undefined, clock: () => number) {
  let planCheck: { at: number; answer: AuthWarning[] | Promise<AuthWarning[]> } | undefined
  return (): AuthWarning[] | Promise<AuthWarning[]> => {
    if (!store) return []
    if (planCheck && clock() - planCheck.at < PLAN_RECHECK_MS) return planCheck.answer
    const at = clock()
    let answer: AuthWarning[] | Promise<AuthWarning[]>
    try {
      const keys = store.list()
      const customers = store.listCustomers()
      answer =
        keys instanceof Promise || customers instanceof Promise
          ? Promise.all([keys, customers]).then(
              ([k, c]) => planWarnings(config, k, c, at),
              () => [],
            )
          : planWarnings(config, keys, customers, at)
    } catch {
      answer = []
    }
    // Kept at once: polls while a Redis listing is under way share it.
    planCheck = { at, answer }
    return answer
  }
}

/**
 * One warning per plan the server does not offer: the active keys that spend their own credits on it (a
 * customer's key uses the customer's plan: its own waits unused) and the customers on it, by id, with the fix.
 */
function planWarnings(config: Config, keys: StoredKey[], customers: Customer[], now: number): AuthWarning[] {
  const byPlan = new Map<string, { keys: string[]; customers: string[] }>()
  const entry = (plan: string) => byPlan.get(plan) ?? byPlan.set(plan, { keys: [], customers: [] }).get(plan)!
  for (const k of keys)
    if (k.plan !== null && k.customer === null && !config.plans.has(k.plan) && !k.revoked)
      if (k.expires === null || now < Date.parse(k.expires)) entry(k.plan).keys.push(k.id)
  for (const c of customers) if (c.plan !== null && !config.plans.has(c.plan)) entry(c.plan).customers.push(c.id)
  const named = (one: string, many: string, ids: string[]) =>
    `${ids.length > 1 ? many : one} ${ids.slice(0, NAMED_PER_PLAN).join(', ')}` +
    (ids.length > NAMED_PER_PLAN ? ` and ${ids.length - NAMED_PER_PLAN} more` : '')
  const offered = [...config.plans.keys()].join(', ')
  return [...byPlan].map(([plan, found]) => {
    const whose = [
      ...(found.keys.length ? [named('key', 'keys', found.keys)] : []),
      ...(found.customers.length ? [`the keys of ${named('customer', 'customers', found.customers)}`] : []),
    ]
    const fixes = [
      ...(found.keys.length ? ['`almanac keys update <id> --plan <p>`'] : []),
      ...(found.customers.length ? ['`almanac customers update <id> --plan <p>`'] : []),
    ]
    return {
      component: 'keys' as const,
      problem:
        `Plan ${JSON.stringify(plan)} is not among ALMANAC_PLANS (${offered}): every call of ${whose.join(' and of ')} is answered ` +
        `403. Add plan ${plan} to ALMANAC_PLANS, or move them to an offered plan (${fixes.join(', ')}).`,
    }
  })
}
