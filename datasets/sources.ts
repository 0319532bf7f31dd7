/**
 * Every upstream dataset Almanac is built from, collected from the domains' descriptors: each domain
 * declares its own in `src/domains/<name>/sources.ts` (id, version and date, where to get it, sha256,
 * licence and attribution). NOTICE.md and /api/v1/meta/datasets are made from these.
 */
import type { Source } from '../src/data/types.ts'
import { sourceLookup } from '../src/data/upstream.ts'
import { domains } from '../src/domains/index.ts'

/** The sources by the domain that declares them (NOTICE.md is grouped this way). */
export const sourcesByDomain: ReadonlyMap<string, readonly Source[]> = new Map(domains.map((d) => [d.name, d.sources ?? []]))

export const sources: Source[] = domains.flatMap((d) => d.sources ?? [])

export const sourceById = sourceLookup(sources)
