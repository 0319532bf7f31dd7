/**
 * Which RDAP server answers for a TLD (RFC 9224 bootstrap, IANA's `dns.json` format). The shipped file
 * (`rdap-bootstrap.json`, dated by its `publication`) is a hand-compiled subset for common TLDs: the
 * IANA file cannot be downloaded on the build machines, and no npm package ships it. Operators point
 * ALMANAC_EMAIL_RDAP_BOOTSTRAP at the current IANA file; ALMANAC_EMAIL_RDAP_URL replaces it altogether.
 */
import { readFileSync } from 'node:fs'
import shipped from './rdap-bootstrap.json' with { type: 'json' }

export interface RdapBootstrap {
  /** `publication` of the file (ISO date-time), or null. */
  publication: string | null
  /** The file it came from: `shipped` or the operator's path. */
  origin: string
  /** TLD (A-label, lower case) -> base URL ending in `/`. */
  servers: Map<string, string>
}

/** Parses a bootstrap document; prefers an https URL for each entry. Throws on a file of another shape. */
export function parseBootstrap(doc: unknown, origin: string): RdapBootstrap {
  const services = (doc as { services?: unknown })?.services
  if (!Array.isArray(services)) throw new Error(`${origin}: not an RDAP bootstrap file (no services array)`)
  const servers = new Map<string, string>()
  for (const service of services) {
    if (!Array.isArray(service) || !Array.isArray(service[0]) || !Array.isArray(service[1])) continue
    const urls = (service[1] as unknown[]).filter((u): u is string => typeof u === 'string' && /^https?:\/\//.test(u))
    const url = urls.find((u) => u.startsWith('https://')) ?? urls[0]
    if (!url) continue
    for (const tld of service[0] as unknown[])
      if (typeof tld === 'string' && tld) servers.set(tld.toLowerCase(), url.endsWith('/') ? url : url + '/')
  }
  const publication = (doc as { publication?: unknown }).publication
  return { publication: typeof publication === 'string' ? publication : null, origin, servers }
}

export function loadBootstrap(path: string | undefined): RdapBootstrap {
  if (!path) return parseBootstrap(shipped, 'shipped')
  let doc: unknown
  try {
    doc = JSON.parse(readFileSync(path, 'utf8'))
  } catch (e) {
    throw new Error(`ALMANAC_EMAIL_RDAP_BOOTSTRAP: cannot read ${path} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`)
  }
  return parseBootstrap(doc, path)
}

/** The base URL for a domain: its TLD's server, or null when the bootstrap has none. */
export const rdapBaseFor = (b: RdapBootstrap, domain: string) => b.servers.get(domain.slice(domain.lastIndexOf('.') + 1)) ?? null
