/**
 * Which lists hold an email domain: the built-in lists (one table, a bit per list; see build.ts) and the
 * operator's allow and deny files (config `email.allowListFiles` / `email.denyListFiles`), read at start
 * and again on `reload()` (SIGHUP). Matching rules, documented in docs/email.md:
 * - disposable: the domain or any parent down to its registrable domain (a subdomain of a listed domain
 *   matches), the most specific listed name wins; the names in between are only probed when the build
 *   marked the registrable domain as having a listed name below it (LISTED_BELOW);
 * - free provider: the domain itself (`mail.gmail.com` is not a Gmail address);
 * - abuse: the domain itself or its registrable domain (the upstream lists exact host names);
 * - operator allow: the domain or a parent is listed -> never disposable, never abuse;
 * - operator deny: the domain or a parent is listed -> disposable, provider `operator:<file>`.
 */
import { readFileSync } from 'node:fs'
import { basename } from 'node:path'
import type { Config } from '../../config.ts'
import { readContainer } from '../../lib/range-container.ts'
import { maskOf, type DomainTable } from './domain-table.ts'
import { emailSources } from './sources.ts'

export type ListKind = 'disposable' | 'free' | 'abuse'

export interface ListLabel {
  bit: number
  kind: ListKind
  /** Source id (./sources.ts), named in the answer when the list matches. */
  source: string
}

/** The built-in lists in bit order; `source` is a source id of ./sources.ts. */
export const BUILTIN_LISTS: ListLabel[] = [
  { bit: 0, kind: 'disposable', source: 'mailchecker' },
  { bit: 1, kind: 'disposable', source: 'disposable-email-domains-js' },
  { bit: 2, kind: 'disposable', source: 'burner-email-providers' },
  { bit: 3, kind: 'free', source: 'free-email-domains' },
  { bit: 4, kind: 'abuse', source: 'blocklistproject-abuse' },
]

const bitsOf = (kind: ListKind) => BUILTIN_LISTS.filter((l) => l.kind === kind).reduce((m, l) => m | (1 << l.bit), 0)
export const DISPOSABLE_BITS = bitsOf('disposable')
export const FREE_BIT = bitsOf('free')
export const ABUSE_BITS = bitsOf('abuse')
/** Not a list: set on a registrable domain when a disposable list holds a name below it (see check()). */
export const LISTED_BELOW = 1 << 7

/** Registrable domains as the build and the checks both compute them (ICANN section; hosts already valid). */
export const PSL_OPTIONS = { extractHostname: false, validateHostname: false } as const

/** Operator list files: domain -> the file that lists it. */
export interface OperatorLists {
  allow: Map<string, string>
  deny: Map<string, string>
}

export interface ListVerdict {
  disposable: boolean
  /** The listed name that matched (the domain or a parent), or null. */
  disposableMatch: string | null
  /** Lists that hold `disposableMatch` (source ids, or `operator:<file>`). */
  disposableLists: string[]
  free: boolean
  abuse: boolean
  abuseSources: string[]
  /** An operator allow file covers the domain. */
  allowed: boolean
}

/** The verdict of a domain on no list (shared, frozen). */
export const CLEAN: ListVerdict = Object.freeze({
  disposable: false,
  disposableMatch: null,
  disposableLists: [],
  free: false,
  abuse: false,
  abuseSources: [],
  allowed: false,
})

const sourcesOf = (labels: readonly ListLabel[], mask: number, kindBits: number) => {
  const out: string[] = []
  for (const l of labels) if (mask & kindBits & (1 << l.bit)) out.push(l.source)
  return out
}

/** Finds `host` or a parent down to `floor` (a suffix of host) in a Map. */
function walkMap(map: Map<string, string>, host: string, floor: number): [string, string] | null {
  if (!map.size) return null
  for (let i = 0; ; ) {
    const name = i === 0 ? host : host.slice(i)
    const hit = map.get(name)
    if (hit !== undefined) return [name, hit]
    const dot = host.indexOf('.', i)
    if (dot < 0 || host.length - (dot + 1) < floor) return null
    i = dot + 1
  }
}

export class EmailLists {
  /** Source names per mask (at most 256 masks): shared arrays, so a listed domain allocates no list of names. */
  private readonly names: string[][] = []

  constructor(
    readonly table: DomainTable,
    readonly labels: readonly ListLabel[],
    public operator: OperatorLists = { allow: new Map(), deny: new Map() },
  ) {}

  private sources(mask: number): string[] {
    return (this.names[mask] ??= sourcesOf(this.labels, mask, 0xff))
  }

  /**
   * `host` is a lower-case A-label domain; `registrable` its registrable domain under the public suffix
   * list (null for a bare suffix or a single label). No allocation beyond the verdict when nothing matches.
   */
  check(host: string, registrable: string | null): ListVerdict {
    const hasParent = registrable !== null && registrable.length < host.length && host.endsWith(registrable)
    const floor = hasParent ? registrable!.length : host.length
    const hostMask = maskOf(this.table, host)
    const registrableMask = hasParent ? maskOf(this.table, registrable!) : hostMask
    let disposableMask = 0
    let disposableMatch: string | null = null
    if (hostMask & DISPOSABLE_BITS) {
      disposableMask = hostMask
      disposableMatch = host
    } else if (hasParent) {
      // The names between the host and its registrable domain are tried (most specific first) only when
      // the build saw a listed name below that registrable domain: most checks are two probes.
      if (registrableMask & LISTED_BELOW) {
        for (let i = host.indexOf('.') + 1; host.length - i > floor; i = host.indexOf('.', i) + 1) {
          const m = maskOf(this.table, host, i)
          if (m & DISPOSABLE_BITS) {
            disposableMask = m
            disposableMatch = host.slice(i)
            break
          }
        }
      }
      if (!disposableMatch && registrableMask & DISPOSABLE_BITS) {
        disposableMask = registrableMask
        disposableMatch = registrable
      }
    }
    const abuseMask = (hostMask | (hasParent ? registrableMask : 0)) & ABUSE_BITS
    const { allow, deny } = this.operator
    // Most addresses are on no list: one shared answer, no allocation.
    if (!disposableMatch && !abuseMask && !(hostMask & FREE_BIT) && !allow.size && !deny.size) return CLEAN
    const verdict: ListVerdict = {
      disposable: disposableMatch !== null,
      disposableMatch,
      disposableLists: disposableMatch ? this.sources(disposableMask & DISPOSABLE_BITS) : [],
      free: (hostMask & FREE_BIT) !== 0,
      abuse: abuseMask !== 0,
      abuseSources: abuseMask ? this.sources(abuseMask) : [],
      allowed: false,
    }
    if (allow.size || deny.size) {
      if (walkMap(allow, host, floor)) {
        verdict.allowed = true
        verdict.disposable = false
        verdict.disposableMatch = null
        verdict.disposableLists = []
        verdict.abuse = false
        verdict.abuseSources = []
      } else {
        const denied = walkMap(deny, host, floor)
        if (denied) {
          const builtinToo = denied[0] === disposableMatch ? verdict.disposableLists : []
          verdict.disposable = true
          verdict.disposableMatch = denied[0]
          verdict.disposableLists = [`operator:${denied[1]}`, ...builtinToo]
          verdict.free = false
        }
      }
    }
    return verdict
  }
}

/**
 * Reads the operator's allow and deny files. A missing or unreadable file throws (at start that disables
 * the domain with the reason; on reload the previous lists stay). Lines that are not domain names are
 * skipped and reported.
 */
export function loadOperatorLists(
  email: Config['email'],
  normalize: (raw: string) => string | null,
): { lists: OperatorLists; warnings: string[] } {
  const lists: OperatorLists = { allow: new Map(), deny: new Map() }
  const warnings: string[] = []
  const read = (files: string[], env: string, into: Map<string, string>) => {
    for (const path of files) {
      let text: string
      try {
        text = readFileSync(path, 'utf8')
      } catch (e) {
        throw new Error(`${env}: cannot read list file ${path} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`)
      }
      let bad = 0
      let first = ''
      for (const line of text.split('\n')) {
        const raw = line.replace(/#.*$/, '').trim()
        if (!raw) continue
        // `@example.com` and `*.example.com` are common spellings of "this domain"
        const name = normalize(raw.replace(/^\*\./, '').replace(/^@/, ''))
        if (name) into.set(name, basename(path))
        else if (!bad++) first = raw.slice(0, 80)
      }
      if (bad) warnings.push(`${path}: ${bad} lines that are not domain names skipped (first: ${JSON.stringify(first)})`)
    }
  }
  read(email.allowListFiles, 'ALMANAC_EMAIL_ALLOW_LISTS', lists.allow)
  read(email.denyListFiles, 'ALMANAC_EMAIL_DENY_LISTS', lists.deny)
  return { lists, warnings }
}

/** The abuse list's source, whose date answers name (`abuse_list.sources`). */
export const ABUSE_SOURCE = emailSources.find((s) => s.id === 'blocklistproject-abuse')!

/**
 * The built-in lists of the artifact at `path` (email-lists.tables), as the service checks them. The abuse
 * list is named with its date in answers: its label is renamed here, once, so the verdicts' shared arrays
 * of source names are answered as they are.
 */
export function openEmailLists(path: string): EmailLists {
  const file = readContainer(path)
  return new EmailLists(
    { names: file.bytes('names'), offsets: file.u32('offsets'), slots: file.u32('slots') },
    ((file.meta.labels as ListLabel[]) ?? []).map((l) =>
      l.source === ABUSE_SOURCE.id ? { ...l, source: `${l.source}:${ABUSE_SOURCE.date}` } : l,
    ),
  )
}
