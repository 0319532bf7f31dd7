/**
 * Whether the DNS resolver's answers can be believed. A resolver that answers NXDOMAIN for every name it
 * will not resolve (a filtered build host, a captive network) looks, answer by answer, exactly like the
 * truth: `gmail.com` would score as a domain that does not exist. So the resolver is asked for a few names
 * certain to exist (`email.dnsCheckNames`) at start, then every CHECK_EVERY_MS (AFTER_FAILURE_MS while it is
 * failing, so a repair is seen soon); it is unhealthy when none of them comes back with an address
 * (NXDOMAIN, an empty answer, SERVFAIL, REFUSED, a timeout, an unreachable server). While it is, the MX
 * check is unknown (`dns_resolver_unhealthy`) rather than scored, and /readyz says so; the next check that
 * finds an address clears it. Until the first check has answered the resolver is believed, as before.
 */
import { DnsError, query, RCODE, RR, type DnsServer } from './dns.ts'

export const CHECK_EVERY_MS = 5 * 60_000
export const AFTER_FAILURE_MS = 60_000

export interface ResolverHealth {
  /** true: a name resolved at the last check; false: none did; null: no check has answered yet. */
  readonly healthy: boolean | null
  /** What /readyz says while unhealthy (no server addresses: /readyz answers anyone), else null. */
  readonly problem: string | null
  /** The check made at start (resolved when it has answered; at once when there are no names to ask). */
  readonly first: Promise<void>
  /** Checks now (the timer's checks go on as they were); a check's outcome is applied unless a later-started one was. */
  check(): Promise<void>
  /** Stops the timer. */
  stop(): void
}

export interface ResolverHealthOptions {
  servers: readonly DnsServer[]
  names: readonly string[]
  timeoutMs: number
  log: (fields: { level: 'warn' | 'info'; msg: string }) => void
  /** Called on each change of state (the MX cache is emptied: it may hold the answers of a lying resolver). */
  changed?: (healthy: boolean) => void
}

/** What one name's check saw: null when it came back with an address. */
async function failure(servers: readonly DnsServer[], name: string, timeoutMs: number): Promise<string | null> {
  try {
    const answer = await query(servers, name, RR.A, performance.now() + timeoutMs)
    if (answer.rcode === RCODE.NOERROR) return answer.records.some((r) => r.type === RR.A) ? null : 'no address'
    const rcode = Object.entries(RCODE).find(([, code]) => code === answer.rcode)?.[0]
    return rcode ?? `rcode ${answer.rcode}`
  } catch (e) {
    if (e instanceof DnsError) return e.code === 'malformed' ? 'unreadable answer' : e.code === 'timeout' ? 'timeout' : 'unreachable'
    return 'unreachable'
  }
}

export function resolverHealth(options: ResolverHealthOptions): ResolverHealth {
  const { servers, names, timeoutMs, log } = options
  let healthy: boolean | null = null
  let problem: string | null = null
  let started = 0
  let applied = 0
  let timer: Timer | undefined
  let stopped = false

  const check = async () => {
    if (!names.length) return
    const run = ++started
    const failures = await Promise.all(names.map((name) => failure(servers, name, timeoutMs)))
    if (run < applied || stopped) return
    applied = run
    const ok = failures.some((f) => f === null)
    const seen = names.map((name, i) => `${name}: ${failures[i]}`).join(', ')
    problem = ok
      ? null
      : `The DNS resolver answered none of the well-known names it is checked against (${seen}), so email MX checks are ` +
        'reported unknown (`dns_resolver_unhealthy`) instead of scored. Point ALMANAC_EMAIL_DNS_SERVERS at a resolver that ' +
        'sees the internet, or set ALMANAC_EMAIL_OFFLINE=1 on a server that has none.'
    if (ok === healthy) return
    // The first healthy answer is not news; every other change is.
    if (!ok) log({ level: 'warn', msg: `${problem} Servers asked: ${servers.map((s) => `${s.host}:${s.port}`).join(', ') || 'none'}.` })
    else if (healthy === false)
      log({ level: 'info', msg: `The DNS resolver answers again (${names.join(', ')}): email MX checks are scored.` })
    healthy = ok
    options.changed?.(ok)
  }

  // A timer of its own that never keeps the process alive: the next check is planned once this one has answered.
  const plan = () => {
    if (!stopped) timer = setTimeout(tick, healthy === false ? AFTER_FAILURE_MS : CHECK_EVERY_MS).unref()
  }
  const tick = () => void check().finally(plan)
  const first = names.length ? check() : Promise.resolve()
  if (names.length) first.finally(plan)

  return {
    get healthy() {
      return healthy
    },
    get problem() {
      return problem
    },
    first,
    check,
    stop() {
      stopped = true
      clearTimeout(timer)
    },
  }
}
