/**
 * Domain registration dates over RDAP (RFC 9082 query `GET {base}domain/{name}`, RFC 9083 answer with
 * `events[].eventAction = "registration"`). One base URL for every domain (ALMANAC_EMAIL_RDAP_URL) or the
 * TLD's server from the bootstrap. Answers are cached: a registration date 7 days (SPEC), "not
 * registered" (404) 1 hour (a domain registered since must soon show as young), in the store (state SQLite
 * or Redis) behind a bounded in-memory cache; failures (timeout, 5xx, 429, unreachable) 1 minute in memory
 * only. Every lookup ends within the RDAP timeout, body included.
 *
 * Redirects are followed by hand, at most MAX_REDIRECTS: within the base's own origin (the server the
 * operator configured or the bootstrap named, trusted as it is), else only to https URLs whose host
 * resolves to public addresses alone. Anything else is `rdap_redirect_refused`: unknown, never stored.
 * A lookup holds one of its caller's slots (lib/caller-slots.ts); over the share it is `rdap_busy`.
 */
import { lookup as resolveHost } from 'node:dns/promises'
import { GenerationalCache } from '../../lib/cache.ts'
import { callerSlots, type CallerSlots } from '../../lib/caller-slots.ts'
import { parseIp } from '../../lib/ip-address.ts'
import { isPublicAddress } from '../../lib/ip-reserved.ts'
import type { RdapBootstrap } from './rdap-bootstrap.ts'
import { rdapBaseFor } from './rdap-bootstrap.ts'
import type { RdapStore, StoredRdap } from './rdap-store.ts'

export type RdapReason =
  | 'not_registered'
  | 'no_registration_event'
  | 'offline'
  | 'no_rdap_server'
  | 'no_registrable_domain'
  | 'rdap_timeout'
  | 'rdap_unreachable'
  | 'rdap_bad_answer'
  | 'rdap_rate_limited'
  | 'rdap_server_error'
  | 'rdap_busy'
  | 'rdap_redirect_refused'

export interface RdapResult {
  /** found: the registry answered with a record; not_found: 404; unknown: no answer. */
  status: 'found' | 'not_found' | 'unknown'
  /** ISO 8601 registration date. */
  registered: string | null
  reason: RdapReason | null
}

export const FOUND_TTL_MS = 7 * 86400_000
export const NOT_FOUND_TTL_MS = 3600_000
const FAILURE_TTL_MS = 60_000
/** Largest RDAP answer read; registries answer a few kilobytes. */
export const MAX_BODY_BYTES = 512 * 1024
/** Lookups at once; beyond, the age is unknown (`rdap_busy`): registries rate-limit, and sockets are finite. */
export const MAX_INFLIGHT = 128
/** Redirects followed at most (registries move a few paths; a longer chain is refused). */
export const MAX_REDIRECTS = 3
const REDIRECTS = new Set([301, 302, 303, 307, 308])

export interface RdapOptions {
  /** One base URL for every domain, ending in `/`. */
  baseUrl?: string
  bootstrap: RdapBootstrap
  timeoutMs: number
  store: RdapStore
  now: () => number
  log: (line: string) => void
  /** Lookups at once (default MAX_INFLIGHT) and per caller (default defaultShare of that). */
  maxInflight?: number
  maxInflightPerCaller?: number
}

export interface RdapClient {
  /** `caller`: whose share of the lookup slots a new lookup takes (joining one under way takes none). */
  lookup(domain: string, caller: string): Promise<RdapResult>
  /** The answer in the memory cache, if any (the store is not asked). */
  cached(domain: string): RdapResult | undefined
  /** The lookup slots and who holds them. */
  readonly slots: CallerSlots
}

const unknown = (reason: RdapReason): RdapResult => ({ status: 'unknown', registered: null, reason })

/** The registration date of an RFC 9083 domain object, or null. */
export function registrationDate(body: unknown): string | null {
  const events = (body as { events?: unknown })?.events
  if (!Array.isArray(events)) return null
  for (const e of events.slice(0, 100)) {
    if (typeof e !== 'object' || e === null) continue
    const { eventAction, eventDate } = e as { eventAction?: unknown; eventDate?: unknown }
    if (
      typeof eventAction !== 'string' ||
      eventAction.toLowerCase() !== 'registration' ||
      typeof eventDate !== 'string' ||
      eventDate.length > 64
    )
      continue
    const t = Date.parse(eventDate)
    if (Number.isFinite(t)) return new Date(t).toISOString()
  }
  return null
}

/** Thrown when a redirect may not be followed; the message says why (logged). */
class RedirectRefused extends Error {}

/**
 * Why a redirect to `target` may not be followed, or null when it may. A redirect within `trusted` (the
 * base's origin) may; any other must be https to a host whose every address is public, so an answer from
 * a registry cannot point the server at itself or its network. The name is resolved here and again by
 * fetch; a name that changes its addresses between the two (DNS rebinding) still meets https, whose
 * certificate an internal service cannot show for the attacker's name.
 */
async function redirectRefusal(target: URL, trusted: string, signal: AbortSignal): Promise<string | null> {
  if (target.origin === trusted) return null
  if (target.protocol !== 'https:') return `a redirect to ${target.protocol} (https only)`
  const host = target.hostname.replace(/^\[(.*)\]$/, '$1')
  const literal = parseIp(host)
  if (typeof literal !== 'string') return isPublicAddress(literal) ? null : `a redirect to the non-public address ${literal.text}`
  const aborted = new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }))
  const addresses = await Promise.race([resolveHost(host, { all: true, verbatim: true }), aborted])
  for (const { address } of addresses) {
    const ip = parseIp(address)
    if (typeof ip === 'string' || !isPublicAddress(ip)) return `a redirect to ${host}, which resolves to the non-public address ${address}`
  }
  return addresses.length ? null : `a redirect to ${host}, which has no address`
}

/** Reads at most `limit` bytes of a body; null when it is longer. */
async function readBounded(res: Response, limit: number): Promise<string | null> {
  const declared = Number(res.headers.get('content-length'))
  if (declared > limit) {
    await res.body?.cancel()
    return null
  }
  if (!res.body) return ''
  const chunks: Uint8Array[] = []
  let total = 0
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    total += chunk.byteLength
    if (total > limit) return null
    chunks.push(chunk)
  }
  return new TextDecoder().decode(Buffer.concat(chunks))
}

export function rdapClient(options: RdapOptions): RdapClient {
  const { baseUrl, bootstrap, timeoutMs, store, now, log } = options
  const slots = callerSlots(options.maxInflight ?? MAX_INFLIGHT, options.maxInflightPerCaller)
  // Bounded in entries and about 4 MB; an entry past its expiry is a miss where it is read.
  const memory = new GenerationalCache<string, { value: RdapResult; expires: number }>(
    20_000,
    4 * 2 ** 20,
    (domain) => 96 + domain.length * 2,
  )
  const fresh = (domain: string) => {
    const hit = memory.get(domain)
    return hit && hit.expires > now() ? hit.value : undefined
  }
  const inflight = new Map<string, Promise<RdapResult>>()
  // One log line per kind of failure a minute: an RDAP outage must not write a line per address.
  const lastLogged = new Map<RdapReason, number>()
  const logFailure = (domain: string, reason: RdapReason, why?: string) => {
    const at = now()
    if ((lastLogged.get(reason) ?? -Infinity) > at - 60_000) return
    lastLogged.set(reason, at)
    log(`RDAP lookups failing (${reason}${why ? `: ${why}` : ''}), e.g. ${domain}; such answers report domain_age as unknown`)
  }

  /** The answer at `url`, following at most MAX_REDIRECTS redirects that `redirectRefusal` allows. */
  const fetchFollowing = async (url: string, signal: AbortSignal): Promise<Response> => {
    const trusted = new URL(url).origin
    for (let redirects = 0; ; redirects++) {
      const res = await fetch(url, { signal, headers: { accept: 'application/rdap+json, application/json' }, redirect: 'manual' })
      if (!REDIRECTS.has(res.status)) return res
      await res.body?.cancel()
      if (redirects === MAX_REDIRECTS) throw new RedirectRefused(`more than ${MAX_REDIRECTS} redirects`)
      let target: URL
      try {
        target = new URL(res.headers.get('location') ?? '', url)
      } catch {
        throw new RedirectRefused('a redirect without a usable Location')
      }
      const refusal = await redirectRefusal(target, trusted, signal)
      if (refusal) throw new RedirectRefused(refusal)
      url = target.href
    }
  }

  const fetchRecord = async (domain: string, base: string): Promise<RdapResult> => {
    const signal = AbortSignal.timeout(timeoutMs)
    try {
      const res = await fetchFollowing(`${base}domain/${encodeURIComponent(domain)}`, signal)
      if (res.status === 404) {
        await res.body?.cancel()
        return { status: 'not_found', registered: null, reason: 'not_registered' }
      }
      if (res.status === 429) {
        await res.body?.cancel()
        return unknown('rdap_rate_limited')
      }
      if (!res.ok) {
        await res.body?.cancel()
        return unknown(res.status >= 500 ? 'rdap_server_error' : 'rdap_bad_answer')
      }
      const text = await readBounded(res, MAX_BODY_BYTES)
      if (text === null) return unknown('rdap_bad_answer')
      let body: unknown
      try {
        body = JSON.parse(text)
      } catch {
        return unknown('rdap_bad_answer')
      }
      if (typeof body !== 'object' || body === null || Array.isArray(body)) return unknown('rdap_bad_answer')
      const registered = registrationDate(body)
      return { status: 'found', registered, reason: registered ? null : 'no_registration_event' }
    } catch (e) {
      if (e instanceof RedirectRefused) {
        logFailure(domain, 'rdap_redirect_refused', e.message)
        return unknown('rdap_redirect_refused')
      }
      const name = (e as Error)?.name
      return unknown(name === 'TimeoutError' || name === 'AbortError' || signal.aborted ? 'rdap_timeout' : 'rdap_unreachable')
    }
  }

  const lookup = async (domain: string): Promise<RdapResult> => {
    const stored = await store.get(domain, now())
    if (stored)
      return { ...stored, reason: stored.status === 'not_found' ? 'not_registered' : stored.registered ? null : 'no_registration_event' }
    const base = baseUrl ?? rdapBaseFor(bootstrap, domain)
    if (!base) return unknown('no_rdap_server')
    const result = await fetchRecord(domain, base)
    if (result.status !== 'unknown') {
      const value: StoredRdap = { status: result.status, registered: result.registered }
      const at = now()
      await store.set(domain, value, at + (result.status === 'found' ? FOUND_TTL_MS : NOT_FOUND_TTL_MS), at)
    } else logFailure(domain, result.reason!)
    return result
  }

  return {
    cached: fresh,
    slots,
    lookup(domain, caller) {
      const hit = fresh(domain)
      if (hit) return Promise.resolve(hit)
      let pending = inflight.get(domain)
      if (!pending) {
        if (!slots.take(caller)) return Promise.resolve(unknown('rdap_busy'))
        pending = lookup(domain)
          .then((r) => {
            const ttl =
              r.status === 'found'
                ? FOUND_TTL_MS
                : r.status === 'not_found'
                  ? NOT_FOUND_TTL_MS
                  : r.reason === 'no_rdap_server'
                    ? FOUND_TTL_MS
                    : FAILURE_TTL_MS
            memory.set(domain, { value: r, expires: now() + ttl })
            return r
          })
          .finally(() => {
            inflight.delete(domain)
            slots.release(caller)
          })
        inflight.set(domain, pending)
      }
      return pending
    },
  }
}
