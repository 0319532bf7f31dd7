/**
 * The RDAP bootstrap (which server answers for which TLD) -> `email-rdap.json`, in IANA's RFC 9224
 * `dns.json` format, so the service reads one shape whatever it was built from:
 * - IANA's `dns.json` when the build finds it (downloaded, or in the mirror): the registry itself, kept
 *   as published;
 * - otherwise the npm package whoisserver-world, whose `whoisservers.json` lists every delegated TLD
 *   with the RDAP servers IANA named for it when the package was made (as `{base}domain/`), regrouped
 *   here by base URL. The package has no server for a few ccTLDs IANA lists (uk, fr, nl in 1.0.31):
 *   those come from the small hand-compiled subset in this folder (`rdap-bootstrap.json`).
 * Both are optional to the runner so that either alone builds; with neither the build fails naming both.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import type { BuildContext, BuildResult, DatasetBuilder } from '../../data/types.ts'
import { parseBootstrap } from './rdap-bootstrap.ts'
import subset from './rdap-bootstrap.json' with { type: 'json' }

export const RDAP_ARTIFACT = 'email-rdap.json'
export const IANA_RDAP_SOURCE = 'iana-rdap-dns'
export const WHOISSERVER_SOURCE = 'whoisserver-world'

interface WhoisserverTld {
  tld?: unknown
  rdapServers?: unknown
  t?: unknown
}

/** whoisserver-world's `{ tld: { rdapServers: ['https://…/domain/'], t: epoch ms } }` -> a dns.json document. */
export function bootstrapFromWhoisservers(doc: unknown, version: string, fill: unknown = subset) {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new Error(`${WHOISSERVER_SOURCE}: expected an object keyed by TLD`)
  const byBase = new Map<string, string[]>()
  let newest = 0
  for (const [key, value] of Object.entries(doc as Record<string, WhoisserverTld>)) {
    const tld = key.toLowerCase()
    if (!/^[a-z0-9-]+$/.test(tld)) continue
    if (typeof value?.t === 'number' && value.t > newest) newest = value.t
    const urls = (Array.isArray(value?.rdapServers) ? value.rdapServers : []).filter(
      (u): u is string => typeof u === 'string' && /^https?:\/\//.test(u),
    )
    // The package names the domain endpoint; a bootstrap names the base it hangs from (RFC 9224 section 4).
    const bases = urls
      .map((u) => u.replace(/domain\/?$/, ''))
      .sort((a, b) => Number(b.startsWith('https://')) - Number(a.startsWith('https://')))
    if (!bases.length) continue
    const base = bases.join('\n')
    byBase.set(base, [...(byBase.get(base) ?? []), tld])
  }
  const covered = new Set([...byBase.values()].flat())
  const filled: string[] = []
  for (const [tld, base] of parseBootstrap(fill, 'rdap-bootstrap.json').servers) {
    if (covered.has(tld)) continue
    byBase.set(base, [...(byBase.get(base) ?? []), tld])
    filled.push(tld)
  }
  const services = [...byBase.entries()]
    .map(([bases, tlds]) => [tlds.sort(), bases.split('\n')] as [string[], string[]])
    .sort((a, b) => a[0][0]!.localeCompare(b[0][0]!))
  return {
    description:
      `RDAP servers per TLD from the npm package whoisserver-world ${version} (ISC), which records IANA's RDAP bootstrap ` +
      `registry per TLD; regrouped into the RFC 9224 format by Almanac's build${
        filled.length ? `; ${filled.sort().join(', ')} from ` + `Almanac's hand-compiled subset` : ''
      }.`,
    publication: newest ? new Date(newest).toISOString() : null,
    version: '1.0',
    services,
  }
}

async function build(ctx: BuildContext): Promise<BuildResult> {
  let doc: unknown
  let from: string
  if (ctx.has(IANA_RDAP_SOURCE)) {
    const iana = await ctx.source(IANA_RDAP_SOURCE)
    doc = JSON.parse(readFileSync(iana.path, 'utf8'))
    from = `IANA's dns.json (${iana.via})`
  } else if (ctx.has(WHOISSERVER_SOURCE)) {
    const w = await ctx.source(WHOISSERVER_SOURCE)
    doc = bootstrapFromWhoisservers(JSON.parse(readFileSync(w.path, 'utf8')), w.version)
    from = `whoisserver-world ${w.version}, IANA's dns.json not being found`
  } else {
    await ctx.source(IANA_RDAP_SOURCE) // throws, naming the file and how to supply it
    throw new Error('unreachable')
  }
  const parsed = parseBootstrap(doc, from)
  if (!parsed.servers.size) throw new Error(`${from}: no TLD has an RDAP server; the file is not a bootstrap`)
  writeFileSync(ctx.out(RDAP_ARTIFACT), JSON.stringify(doc) + '\n')
  const https = [...parsed.servers.values()].filter((u) => u.startsWith('https://')).length
  ctx.log(`${parsed.servers.size} TLDs with an RDAP server (${https} over https) from ${from}`)
  return {
    counts: { tlds: parsed.servers.size, servers: new Set(parsed.servers.values()).size },
    ...(parsed.publication ? { version: parsed.publication.slice(0, 10) } : {}),
    notes: [`built from ${from}`],
  }
}

export const rdapBuilder: DatasetBuilder = {
  id: 'email-rdap',
  sources: [IANA_RDAP_SOURCE, WHOISSERVER_SOURCE],
  artifacts: [RDAP_ARTIFACT],
  optional: [IANA_RDAP_SOURCE, WHOISSERVER_SOURCE],
  revision: 2,
  build,
}
