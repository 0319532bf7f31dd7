/**
 * Domain registration dates over RDAP (RFC 9082 query `GET {base}domain/{name}`, RFC 9083 answer with
 * `events[].eventAction = "registration"`). One base URL for every domain (ALMANAC_EMAIL_RDAP_URL) or the
 * TLD's server from the bootstrap. Answers are cached: a registration date 7 days (SPEC), "not
 * registered" (404) 1 hour (a domain registered since must soon show as young), in the store (state SQLite
 * or Redis) behind a bounded in-memory cache; failures (timeout, 5xx, 429, unreachable) 1 minute in memory
 * only. Every lookup ends within the RDAP timeout, body included.
 */
import { GenerationalCache } from '../../lib/cache.ts'
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

export interface RdapOptions {
  /** One base URL for every domain, ending in `/`. */
  baseUrl?: string
  bootstrap: RdapBootstrap
  timeoutMs: number
  store: RdapStore
  now: () => number
  log: (line: string) => void
  maxInflight?: number
}

export interface RdapClient {
  lookup(domain: string): Promise<RdapResult>
  /** The answer in the memory cache, if any (the store is not asked). */
  cached(domain: string): RdapResult | undefined
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
  const logFailure = (domain: string, reason: RdapReason) => {
    const at = now()
    if ((lastLogged.get(reason) ?? -Infinity) > at - 60_000) return
    lastLogged.set(reason, at)
    log(`RDAP lookups failing (${reason}), e.g. ${domain}; such answers report domain_age as unknown`)
  }

  const fetchRecord = async (domain: string, base: string): Promise<RdapResult> => {
    const signal = AbortSignal.timeout(timeoutMs)
    try {
      const res = await fetch(`${base}domain/${encodeURIComponent(domain)}`, {
        signal,
        headers: { accept: 'application/rdap+json, application/json' },
        redirect: 'follow',
      })
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
    lookup(domain) {
      const hit = fresh(domain)
      if (hit) return Promise.resolve(hit)
      let pending = inflight.get(domain)
      if (!pending) {
        if (inflight.size >= (options.maxInflight ?? MAX_INFLIGHT)) return Promise.resolve(unknown('rdap_busy'))
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
          .finally(() => inflight.delete(domain))
        inflight.set(domain, pending)
      }
      return pending
    },
  }
}
