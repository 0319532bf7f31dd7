/**
 * Which RDAP server answers for a TLD (RFC 9224 bootstrap, IANA's `dns.json` format). The dataset
 * `email-rdap` (rdap-build.ts) holds one for every TLD that has an RDAP server, built from IANA's file
 * or the npm package whoisserver-world. Operators may point ALMANAC_EMAIL_RDAP_BOOTSTRAP at a newer
 * copy of IANA's file; ALMANAC_EMAIL_RDAP_URL replaces the bootstrap altogether.
 */
import { readFileSync } from 'node:fs'

export interface RdapBootstrap {
  /** `publication` of the file (ISO date-time), or null. */
  publication: string | null
  /** The file it came from: the built artifact or the operator's path. */
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

/** The operator's file (ALMANAC_EMAIL_RDAP_BOOTSTRAP) when set, else the built artifact. */
export function loadBootstrap(operator: string | undefined, built: string): RdapBootstrap {
  const path = operator || built
  let doc: unknown
  try {
    doc = JSON.parse(readFileSync(path, 'utf8'))
  } catch (e) {
    const what = operator ? 'ALMANAC_EMAIL_RDAP_BOOTSTRAP' : 'the email-rdap dataset'
    throw new Error(`${what}: cannot read ${path} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`)
  }
  return parseBootstrap(doc, path)
}

/** The base URL for a domain: its TLD's server, or null when the bootstrap has none. */
export const rdapBaseFor = (b: RdapBootstrap, domain: string) => b.servers.get(domain.slice(domain.lastIndexOf('.') + 1)) ?? null
