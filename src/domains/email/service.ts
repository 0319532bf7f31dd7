/**
 * Email risk over the opened lists and the two outside services (DNS, RDAP): syntax first (invalid is
 * final), then the list checks in process and the MX and RDAP lookups concurrently, each held to its own
 * deadline, then the SPEC's score. The result is the canonical assessment that `present.ts` shapes into
 * Form A or B. No HTTP here; the clock is injected (`now`) so ages are computed against it, and the caller
 * (whose share of the DNS and RDAP lookup slots a check may take) is passed in by the route.
 */
import { getDomain } from 'tldts'
import type { Config } from '../../config.ts'
import type { CallerSlots } from '../../lib/caller-slots.ts'
import type { DataDir } from '../../data/types.ts'
import { normalizeListEntry, LISTS_ARTIFACT } from './artifacts.ts'
import { parseServer, systemServers, type DnsServer } from './dns.ts'
import { ABUSE_SOURCE, CLEAN, loadOperatorLists, openEmailLists, PSL_OPTIONS, type ListVerdict } from './lists.ts'
import { mxChecker, unknownMx, type MxChecker, type MxResult } from './mx.ts'
import { loadBootstrap, type RdapBootstrap } from './rdap-bootstrap.ts'
import { RDAP_ARTIFACT } from './rdap-build.ts'
import { resolverHealth, type ResolverHealth } from './resolver-health.ts'
import { rdapClient, type RdapClient, type RdapReason, type RdapResult } from './rdap.ts'
import { memoryRdapStore, redisRdapStore, sqliteRdapStore, type RdapStore } from './rdap-store.ts'
import { score, type RiskFactor, type RiskTier } from './score.ts'
import { parseMailbox, type SyntaxReason } from './syntax.ts'

export const DAY_MS = 86400_000
/** Longest input accepted (characters); a valid mailbox is at most 254 octets, longer is "invalid syntax". */
export const MAX_INPUT = 1024

/** Why a bulk item cannot be assessed at all (the single route's schema says the same with a 422), or null. */
function badItem(e: unknown): string | null {
  if (typeof e !== 'string')
    return `expected a string holding an email address, got ${e === null ? 'null' : Array.isArray(e) ? 'an array' : typeof e}`
  if (e.length > MAX_INPUT) return `expected at most ${MAX_INPUT} characters, got ${e.length}`
  return null
}
/** Margin on top of a lookup's own timeout before the service stops waiting for it. */
const DEADLINE_SLACK_MS = 100

export interface DomainAge {
  /** The registrable domain asked about (public suffix list), or null. */
  domain: string | null
  ageDays: number | null
  registered: string | null
  /** 'rdap' when RDAP answered (a record or "not registered"). */
  source: 'rdap' | null
  reason: RdapReason | 'invalid_syntax' | 'address_literal' | null
}

export interface Assessment {
  email: string
  syntax: { valid: boolean; reason: SyntaxReason | null; normalized: string | null }
  /** The A-label domain (or address literal), null when the syntax is invalid. */
  domain: string | null
  mx: MxResult
  lists: ListVerdict
  age: DomainAge
  score: number
  tier: RiskTier
  factors: { factor: RiskFactor; points: number }[]
  /** Checks that could not be performed (and so added no points). */
  unknown: ('mx_record' | 'domain_age')[]
}

/** One bulk item that could not be assessed: not a string, over MAX_INPUT, or a fault that must not fail the rest. */
export interface ItemError {
  email: unknown
  error: { field: string; message: string }
}

export interface EmailService {
  /** `caller`: the quota subject; its lookups count against its share of the DNS and RDAP slots. */
  assess(email: string, caller: string): Promise<Assessment>
  /**
   * Each item on its own, concurrently (SPEC rule 5): an item that is not a string of at most MAX_INPUT
   * characters, or whose check fails, is an ItemError in its place; the others are answered. All count as
   * `caller`'s.
   */
  bulk(emails: readonly unknown[], caller: string, field?: string): Promise<(Assessment | ItemError)[]>
  /** The in-process list checks of a domain (lower-case A-label). */
  listCheck(domain: string): ListVerdict
  /** Re-reads the operator's allow and deny files (SIGHUP); on failure the previous lists stay. */
  reload(): { ok: boolean; allow: number; deny: number; messages: string[] }
  /** Date of the abuse list named in `abuse_list.sources`. */
  readonly abuseListDate: string
  readonly bootstrap: RdapBootstrap
  /** The DNS and RDAP lookup slots and who holds them. */
  readonly slots: { mx: CallerSlots; rdap: CallerSlots }
  /** Whether the DNS resolver answers the well-known names (never checked offline). */
  readonly resolver: ResolverHealth
  close(): void
}

export interface EmailServiceOptions {
  now?: () => number
  log?: (line: string) => void
  /** The domain's structured log, for the resolver's changes of state (warn when it fails, info when it answers again). */
  logFields?: (fields: { level: 'warn' | 'info'; msg: string }) => void
}

const OFFLINE_MX = Object.freeze(unknownMx('offline'))
const UNHEALTHY_MX = Object.freeze(unknownMx('dns_resolver_unhealthy'))

/**
 * Resolves `p`, or `fallback()` once `ms` have passed: no slow service holds a request past its deadline.
 * A failure of `p` (never expected: the clients turn theirs into answers) is also the fallback, logged.
 */
function within<T>(p: Promise<T>, ms: number, fallback: () => T, log: (line: string) => void): Promise<T> {
  let timer: Timer
  const guarded = p.catch((e) => {
    log(`email lookup failed unexpectedly: ${(e as Error)?.stack ?? e}`)
    return fallback()
  })
  return Promise.race([guarded, new Promise<T>((resolve) => (timer = setTimeout(() => resolve(fallback()), ms)))]).finally(() =>
    clearTimeout(timer),
  )
}

/** The assessment of an address that is not one (its syntax fails): nothing looked up. */
function invalidAssessment(input: string, reason: Assessment['syntax']['reason']): Assessment {
  const s = score({ validSyntax: false, mx: null, disposable: false, ageDays: null, abuse: false, free: false })
  return {
    email: input,
    syntax: { valid: false, reason, normalized: null },
    domain: null,
    mx: { valid: null, hosts: [], implicit: false, acceptsMail: null, domainExists: null, reason: null },
    lists: CLEAN,
    age: { domain: null, ageDays: null, registered: null, source: null, reason: 'invalid_syntax' },
    ...s,
    unknown: [],
  }
}

/** The assessment of an address literal (`user@[192.0.2.1]`): mail goes straight to that host, nothing to look up or list. */
function addressLiteralAssessment(input: string, syntax: Assessment['syntax'], domain: string): Assessment {
  const s = score({ validSyntax: true, mx: null, disposable: false, ageDays: null, abuse: false, free: false })
  return {
    email: input,
    syntax,
    domain,
    mx: unknownMx('address_literal'),
    lists: CLEAN,
    age: { domain: null, ageDays: null, registered: null, source: null, reason: 'address_literal' },
    ...s,
    unknown: ['mx_record', 'domain_age'],
  }
}

export function openEmailService(config: Config, data: DataDir, options: EmailServiceOptions = {}): EmailService {
  const now = options.now ?? Date.now
  const log = options.log ?? (() => {})
  const email = config.email

  const lists = openEmailLists(data.path(LISTS_ARTIFACT))
  const first = loadOperatorLists(email, normalizeListEntry)
  for (const w of first.warnings) log(w)
  lists.operator = first.lists

  let servers: DnsServer[]
  try {
    servers = email.dnsServers.length ? email.dnsServers.map(parseServer) : systemServers()
  } catch (e) {
    throw new Error(`ALMANAC_EMAIL_DNS_SERVERS: ${(e as Error).message}`)
  }
  const bootstrap = loadBootstrap(email.rdapBootstrap, data.path(RDAP_ARTIFACT))
  const mx: MxChecker = mxChecker({
    servers,
    timeoutMs: email.dnsTimeoutMs,
    now,
    maxInflight: email.dnsSlots,
    maxInflightPerCaller: email.dnsSlotsPerCaller,
  })
  // Offline, nothing is asked at request time, so there is no resolver to check.
  const resolver = resolverHealth({
    servers,
    names: email.offline ? [] : email.dnsCheckNames,
    timeoutMs: email.dnsTimeoutMs,
    log: options.logFields ?? ((f) => log(f.msg)),
    changed: () => mx.forget(),
  })
  const cache = config.stores.rdapCache
  const store: RdapStore =
    cache.kind === 'redis' ? redisRdapStore(cache.url, log) : cache.kind === 'sqlite' ? sqliteRdapStore(cache.dir, log) : memoryRdapStore()
  const rdap: RdapClient = rdapClient({
    baseUrl: email.rdapUrl,
    bootstrap,
    timeoutMs: email.rdapTimeoutMs,
    store,
    now,
    log,
    maxInflight: email.rdapSlots,
    maxInflightPerCaller: email.rdapSlotsPerCaller,
  })

  // Each check answers from its cache synchronously when it can (a warm request then costs no promise,
  // timer or race), else starts the lookup held to its deadline.
  const checkMx = (domain: string, caller: string): MxResult | Promise<MxResult> => {
    if (email.offline) return OFFLINE_MX
    // Its NXDOMAIN would be a lie scored +30: nothing is asked of it until a check finds it answering again.
    if (resolver.healthy === false) return UNHEALTHY_MX
    return (
      mx.cached(domain) ?? within(mx.check(domain, caller), email.dnsTimeoutMs + DEADLINE_SLACK_MS, () => unknownMx('dns_timeout'), log)
    )
  }

  const ageOf = (registrable: string, r: RdapResult): DomainAge => {
    const ageDays = r.registered ? Math.max(0, Math.floor((now() - Date.parse(r.registered)) / DAY_MS)) : null
    return { domain: registrable, ageDays, registered: r.registered, source: r.status === 'unknown' ? null : 'rdap', reason: r.reason }
  }

  const checkAge = (registrable: string | null, caller: string): DomainAge | Promise<DomainAge> => {
    if (!registrable) return { domain: null, ageDays: null, registered: null, source: null, reason: 'no_registrable_domain' }
    if (email.offline) return { domain: registrable, ageDays: null, registered: null, source: null, reason: 'offline' }
    const hit = rdap.cached(registrable)
    if (hit) return ageOf(registrable, hit)
    return within(
      rdap.lookup(registrable, caller),
      email.rdapTimeoutMs + DEADLINE_SLACK_MS,
      (): RdapResult => ({ status: 'unknown', registered: null, reason: 'rdap_timeout' }),
      log,
    ).then((r) => ageOf(registrable, r))
  }

  const assess = async (input: string, caller: string): Promise<Assessment> => {
    const mailbox = parseMailbox(input)
    if (!mailbox.valid) return invalidAssessment(input, mailbox.reason)
    const syntax = { valid: true, reason: null, normalized: mailbox.normalized }
    // Mail to an address literal goes straight to that host: nothing to look up or list.
    if (mailbox.addressLiteral) return addressLiteralAssessment(input, syntax, mailbox.domain)
    const domain = mailbox.domain
    const registrable = getDomain(domain, PSL_OPTIONS)
    const verdict = lists.check(domain, registrable)
    const mxNow = checkMx(domain, caller)
    const ageNow = checkAge(registrable, caller)
    const mxResult = mxNow instanceof Promise ? await mxNow : mxNow
    const age = ageNow instanceof Promise ? await ageNow : ageNow
    const s = score({
      validSyntax: true,
      mx: mxResult.valid,
      disposable: verdict.disposable,
      ageDays: age.ageDays,
      abuse: verdict.abuse,
      free: verdict.free,
    })
    const unknown: Assessment['unknown'] = []
    if (mxResult.valid === null) unknown.push('mx_record')
    if (age.ageDays === null && age.reason !== 'not_registered' && age.reason !== 'no_registration_event') unknown.push('domain_age')
    return {
      email: input,
      syntax,
      domain,
      mx: mxResult,
      lists: verdict,
      age,
      ...s,
      unknown,
    }
  }

  return {
    assess,
    async bulk(emails, caller, field = 'emails') {
      return Promise.all(
        emails.map((e, i) => {
          const bad = badItem(e)
          if (bad)
            return { email: typeof e === 'string' ? e.slice(0, MAX_INPUT) : (e ?? null), error: { field: `${field}.${i}`, message: bad } }
          return assess(e as string, caller).catch((err): ItemError => {
            log(`email bulk item ${i} failed: ${(err as Error)?.stack ?? err}`)
            return { email: e, error: { field: `${field}.${i}`, message: 'this address could not be assessed' } }
          })
        }),
      )
    },
    listCheck: (domain) => lists.check(domain, getDomain(domain, PSL_OPTIONS)),
    reload() {
      try {
        const next = loadOperatorLists(email, normalizeListEntry)
        lists.operator = next.lists
        return { ok: true, allow: next.lists.allow.size, deny: next.lists.deny.size, messages: next.warnings }
      } catch (e) {
        return { ok: false, allow: lists.operator.allow.size, deny: lists.operator.deny.size, messages: [(e as Error).message] }
      }
    },
    abuseListDate: ABUSE_SOURCE.date,
    bootstrap,
    slots: { mx: mx.slots, rdap: rdap.slots },
    resolver,
    close: () => {
      resolver.stop()
      store.close()
    },
  }
}
