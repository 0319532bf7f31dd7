/**
 * Upstream lists -> `email-lists.tables`: one table of domain names (see domain-table.ts) whose mask
 * says which lists hold each name. The disposable lists lose the built-in allowlist; the free-provider
 * list loses every disposable name (issue: "free minus the disposable set"); the abuse list is kept as
 * its upstream wrote it (exact host names).
 */
import { readFileSync } from 'node:fs'
import type { BuildContext, DatasetBuilder } from '../../data/types.ts'
import { writeContainer } from '../../lib/range-container.ts'
import { mergeBlocklists, readBlocklists } from './abuse-list.ts'
import { BUILTIN_ALLOW } from './allowlist.ts'
import { buildDomainTable } from './domain-table.ts'
import { getDomain } from 'tldts'
import { rdapBuilder } from './rdap-build.ts'
import { LISTS_ARTIFACT, normalizeListEntry } from './artifacts.ts'
import { ABUSE_BITS, BUILTIN_LISTS, DISPOSABLE_BITS, FREE_BIT, LISTED_BELOW, PSL_OPTIONS } from './lists.ts'

/** MailChecker ships its list as a `new Set([...])` literal in its Node entry point. */
export function mailcheckerDomains(source: string): string[] {
  const start = source.indexOf('new Set([')
  const end = start < 0 ? -1 : source.indexOf('])', start)
  if (start < 0 || end < 0) throw new Error('mailchecker: the list literal (new Set([...])) was not found; the package layout changed')
  const list = JSON.parse(source.slice(start + 'new Set('.length, end + 1)) as unknown
  if (!Array.isArray(list) || list.some((d) => typeof d !== 'string'))
    throw new Error('mailchecker: the list literal is not an array of strings')
  return list as string[]
}

const jsonList = (text: string, id: string): string[] => {
  const list = JSON.parse(text) as unknown
  if (!Array.isArray(list) || list.some((d) => typeof d !== 'string')) throw new Error(`${id}: expected a JSON array of strings`)
  return list as string[]
}

const READERS: Record<string, (text: string, id: string) => string[]> = {
  mailchecker: (text) => mailcheckerDomains(text),
  'disposable-email-domains-js': jsonList,
  'burner-email-providers': (text) => text.split('\n'),
  'free-email-domains': jsonList,
  'blocklistproject-abuse': (text) => text.split('\n'),
}

const allowed = (name: string) => BUILTIN_ALLOW.some((a) => name === a || name.endsWith('.' + a))

async function build(ctx: BuildContext) {
  const masks = new Map<string, number>()
  const counts: Record<string, number> = {}
  for (const list of BUILTIN_LISTS) {
    const src = await ctx.source(list.source)
    // A list published in parts (the abuse lists) is a folder of them, merged here.
    const text = src.files
      ? mergeBlocklists(
          readBlocklists(
            src.path,
            src.files.map((f) => f.sha256),
          ),
        )
      : readFileSync(src.path, 'utf8')
    const entries = READERS[list.source]!(text, list.source)
    let kept = 0
    let skipped = 0
    for (const raw of entries) {
      const name = normalizeListEntry(raw)
      if (!name) {
        if (raw.trim() && !raw.trim().startsWith('#')) skipped++
        continue
      }
      masks.set(name, (masks.get(name) ?? 0) | (1 << list.bit))
      kept++
    }
    counts[list.source] = kept
    if (skipped) ctx.log(`${list.source}: ${skipped} entries that are not domain names skipped`)
  }
  const unlisted: string[] = []
  let freeRemoved = 0
  for (const [name, mask] of masks) {
    let m = mask
    if (m & DISPOSABLE_BITS && allowed(name)) {
      m &= ~DISPOSABLE_BITS
      unlisted.push(name)
    }
    if (m & FREE_BIT && m & DISPOSABLE_BITS) {
      m &= ~FREE_BIT
      freeRemoved++
    }
    if (m) masks.set(name, m)
    else masks.delete(name)
  }
  // Registrable domains with a disposable name below them: only for those does a check walk the levels between.
  let below = 0
  for (const [name, mask] of [...masks]) {
    if (!(mask & DISPOSABLE_BITS)) continue
    const registrable = getDomain(name, PSL_OPTIONS)
    if (!registrable || registrable === name) continue
    const m = masks.get(registrable) ?? 0
    if (!(m & LISTED_BELOW)) below++
    masks.set(registrable, m | LISTED_BELOW)
  }
  if (unlisted.length) ctx.log(`allowlist: taken out of the disposable lists: ${unlisted.sort().join(', ')}`)
  const table = buildDomainTable(masks)
  let disposable = 0
  let free = 0
  let abuse = 0
  for (const m of masks.values()) {
    if (m & DISPOSABLE_BITS) disposable++
    if (m & FREE_BIT) free++
    if (m & ABUSE_BITS) abuse++
  }
  writeContainer(ctx.out(LISTS_ARTIFACT), { labels: BUILTIN_LISTS }, { names: table.names, offsets: table.offsets, slots: table.slots })
  return {
    counts: {
      ...counts,
      disposable,
      free,
      abuse,
      names: masks.size,
      registrable_with_listed_below: below,
      allowlisted_out: unlisted.length,
      free_removed_as_disposable: freeRemoved,
    },
    notes: [
      `Disposable: union of mailchecker, disposable-email-domains-js and burner-email-providers minus ${BUILTIN_ALLOW.length} ` +
        `allowlisted providers and forwarding services (src/domains/email/allowlist.ts).`,
      'Free providers: free-email-domains minus every disposable name.',
      'Abuse: The Block List Project phishing + scam lists, exact host names.',
    ],
  }
}

export const emailBuilders: DatasetBuilder[] = [
  {
    id: 'email-lists',
    sources: BUILTIN_LISTS.map((l) => l.source),
    artifacts: [LISTS_ARTIFACT],
    revision: 5,
    build,
  },
  rdapBuilder,
]
