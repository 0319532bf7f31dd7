/**
 * The MX check of one domain: MX records, else (RFC 5321 §5.1) an A or AAAA record as the implicit MX
 * (deliverable, `implicit`, but still "no MX records" for the score: `valid` false);
 * a lone `0 .` MX is a null MX (RFC 7505: the domain accepts no mail); NXDOMAIN means the domain does not
 * exist. Anything the DNS could not answer (timeout, SERVFAIL, unreachable server, offline) is `unknown`
 * with a reason, never "no MX". Answers are cached per domain for their TTL (at most an hour), negative
 * answers for the SOA's negative TTL (RFC 2308; 5 minutes when none came back); concurrent checks of one
 * domain share one lookup. A lookup holds one of the slots its caller may use (lib/caller-slots.ts): a
 * caller over its share, or a full pool, gets `dns_busy` at once, so one caller's bulk cannot leave the
 * others without slots.
 */
import { GenerationalCache } from '../../lib/cache.ts'
import { callerSlots, type CallerSlots } from '../../lib/caller-slots.ts'
import { DnsError, query, RCODE, RR, type DnsAnswer, type DnsServer, type MxRecord } from './dns.ts'

export type MxReason =
  | 'nxdomain'
  | 'null_mx'
  | 'no_mx_no_address'
  | 'no_mx_address_only'
  | 'offline'
  | 'dns_timeout'
  | 'dns_unreachable'
  | 'dns_servfail'
  | 'dns_refused'
  | 'dns_bad_answer'
  | 'dns_truncated'
  | 'address_literal'
  | 'dns_busy'
  | 'dns_resolver_unhealthy'

export interface MxResult {
  /**
   * true: the domain has MX records; false: it has none (NXDOMAIN, a null MX, or no MX record at all,
   * even when an address record receives mail as implicit MX: the SPEC scores "no MX records"); null: unknown.
   */
  valid: boolean | null
  /** MX exchanges by preference; empty when there is no MX record. */
  hosts: string[]
  /** No MX record, but the domain has an address: RFC 5321 §5.1 delivers to the domain itself. */
  implicit: boolean
  /** Mail can be delivered (MX, or implicit MX); false for a null MX, NXDOMAIN or neither MX nor address; null when unknown. */
  acceptsMail: boolean | null
  /** false: NXDOMAIN; null: unknown. */
  domainExists: boolean | null
  /** Why `valid` is false or null. */
  reason: MxReason | null
}

export const MAX_MX_HOSTS = 10
/** Domains looked up at once; beyond, a check is unknown (`dns_busy`) instead of opening more sockets. */
export const MAX_INFLIGHT = 512
const MAX_TTL_MS = 3600_000
const DEFAULT_NEGATIVE_TTL_S = 300

export const unknownMx = (reason: MxReason): MxResult => ({
  valid: null,
  hosts: [],
  implicit: false,
  acceptsMail: null,
  domainExists: null,
  reason,
})

function failureReason(e: unknown): MxReason {
  if (e instanceof DnsError) return e.code === 'timeout' ? 'dns_timeout' : e.code === 'network' ? 'dns_unreachable' : 'dns_bad_answer'
  // Anything else (a socket that could not be made: EMFILE …) means the DNS could not be asked.
  return 'dns_unreachable'
}

const rcodeReason = (rcode: number): MxReason =>
  rcode === RCODE.SERVFAIL ? 'dns_servfail' : rcode === RCODE.REFUSED ? 'dns_refused' : 'dns_bad_answer'

const minTtl = (answers: DnsAnswer[], type: number[]) => {
  let ttl = Infinity
  for (const a of answers) for (const r of a.records) if (type.includes(r.type)) ttl = Math.min(ttl, r.ttl)
  return ttl
}

export interface MxChecker {
  /** `caller`: whose share of the lookup slots a new lookup takes (joining one under way takes none). */
  check(domain: string, caller: string): Promise<MxResult>
  /** The cached answer, if any: lets a warm request skip the promise and timer machinery. */
  cached(domain: string): MxResult | undefined
  /** The lookup slots and who holds them. */
  readonly slots: CallerSlots
  /** Drops every cached answer (the resolver was found lying, or answers again: what it said meanwhile is suspect). */
  forget(): void
}

export function mxChecker(options: {
  servers: readonly DnsServer[]
  timeoutMs: number
  now: () => number
  cacheEntries?: number
  /** Lookups at once (default MAX_INFLIGHT) and per caller (default defaultShare of that). */
  maxInflight?: number
  maxInflightPerCaller?: number
}): MxChecker {
  const slots = callerSlots(options.maxInflight ?? MAX_INFLIGHT, options.maxInflightPerCaller)
  const { servers, timeoutMs, now } = options
  // Bounded in entries and about 8 MB; an entry past its expiry is a miss where it is read.
  const cache = new GenerationalCache<string, { value: MxResult; expires: number }>(
    options.cacheEntries ?? 20_000,
    8 * 2 ** 20,
    (_, { value }) => 64 + value.hosts.reduce((n, h) => n + 2 * h.length + 16, 0),
  )
  const fresh = (domain: string) => {
    const hit = cache.get(domain)
    return hit && hit.expires > now() ? hit.value : undefined
  }
  const inflight = new Map<string, Promise<MxResult>>()

  const lookup = async (domain: string): Promise<{ result: MxResult; ttlMs: number }> => {
    const deadline = performance.now() + timeoutMs
    let mx: DnsAnswer
    try {
      mx = await query(servers, domain, RR.MX, deadline)
    } catch (e) {
      return { result: unknownMx(failureReason(e)), ttlMs: 0 }
    }
    const negative = (a: DnsAnswer) => Math.min(MAX_TTL_MS, (a.negativeTtl ?? DEFAULT_NEGATIVE_TTL_S) * 1000)
    if (mx.rcode === RCODE.NXDOMAIN)
      return {
        result: { valid: false, hosts: [], implicit: false, acceptsMail: false, domainExists: false, reason: 'nxdomain' },
        ttlMs: negative(mx),
      }
    if (mx.rcode !== RCODE.NOERROR) return { result: unknownMx(rcodeReason(mx.rcode)), ttlMs: 0 }
    const records = mx.records.filter((r) => r.type === RR.MX).map((r) => r.data as MxRecord)
    if (!records.length && mx.truncated) return { result: unknownMx('dns_truncated'), ttlMs: 0 }
    if (records.length) {
      const ttlMs = Math.min(MAX_TTL_MS, minTtl([mx], [RR.MX]) * 1000)
      const hosts = [
        ...new Set(
          records
            .filter((r) => r.exchange !== '')
            .sort((a, b) => a.preference - b.preference || (a.exchange < b.exchange ? -1 : 1))
            .map((r) => r.exchange),
        ),
      ]
      // RFC 7505: a null MX is the domain's only MX record; next to real exchanges it is ignored.
      if (!hosts.length)
        return { result: { valid: false, hosts: [], implicit: false, acceptsMail: false, domainExists: true, reason: 'null_mx' }, ttlMs }
      return {
        result: { valid: true, hosts: hosts.slice(0, MAX_MX_HOSTS), implicit: false, acceptsMail: true, domainExists: true, reason: null },
        ttlMs,
      }
    }
    // No MX: RFC 5321 §5.1 falls back to the domain's own address records.
    const settled = await Promise.allSettled([query(servers, domain, RR.A, deadline), query(servers, domain, RR.AAAA, deadline)])
    const answers = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []))
    const hasAddress = answers.some((a) => a.rcode === RCODE.NOERROR && a.records.some((r) => r.type === RR.A || r.type === RR.AAAA))
    if (hasAddress) {
      const ttlMs = Math.min(MAX_TTL_MS, minTtl(answers, [RR.A, RR.AAAA]) * 1000)
      // Deliverable, but without MX records: the SPEC's "no MX records" (+30) with the fallback as detail.
      return {
        result: { valid: false, hosts: [], implicit: true, acceptsMail: true, domainExists: true, reason: 'no_mx_address_only' },
        ttlMs,
      }
    }
    const failed = settled.find((s) => s.status === 'rejected')
    if (failed) return { result: unknownMx(failureReason((failed as PromiseRejectedResult).reason)), ttlMs: 0 }
    const bad = answers.find((a) => a.rcode !== RCODE.NOERROR && a.rcode !== RCODE.NXDOMAIN)
    if (bad) return { result: unknownMx(rcodeReason(bad.rcode)), ttlMs: 0 }
    if (answers.some((a) => a.truncated)) return { result: unknownMx('dns_truncated'), ttlMs: 0 }
    return {
      result: { valid: false, hosts: [], implicit: false, acceptsMail: false, domainExists: true, reason: 'no_mx_no_address' },
      ttlMs: negative(mx),
    }
  }

  return {
    cached: fresh,
    slots,
    forget: () => cache.clear(),
    check(domain, caller) {
      const hit = fresh(domain)
      if (hit) return Promise.resolve(hit)
      let pending = inflight.get(domain)
      if (!pending) {
        if (!slots.take(caller)) return Promise.resolve(unknownMx('dns_busy'))
        pending = lookup(domain)
          .then(({ result, ttlMs }) => {
            if (ttlMs > 0) cache.set(domain, { value: result, expires: now() + ttlMs })
            return result
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
