/** Upstream -> artifact of the ua domain: `ua-detection.json` (see definitions.ts). */
import { writeFileSync } from 'node:fs'
import type { DatasetBuilder } from '../../data/types.ts'
import { type Collection, readDefinitions } from './definitions.ts'
import { UA_COLLECTION_SOURCES, UA_DATA_DATE, UA_DATA_VERSION } from './sources.ts'

export const UA_ARTIFACT = 'ua-detection.json'

const countOf = (v: unknown) => (Array.isArray(v) ? v.length : v && typeof v === 'object' ? Object.keys(v).length : 0)

export const uaBuilder: DatasetBuilder = {
  id: 'ua',
  sources: UA_COLLECTION_SOURCES.map(([, id]) => id),
  artifacts: [UA_ARTIFACT],
  revision: 7,
  async build(ctx) {
    // Each of Matomo's `regexes/*.yml` files is its own pinned source (mirror path or raw GitHub URL).
    const files = {} as Record<Collection, string>
    for (const [collection, id] of UA_COLLECTION_SOURCES) files[collection as Collection] = (await ctx.source(id)).path
    const defs = readDefinitions(files, { package: 'matomo/device-detector', version: UA_DATA_VERSION, date: UA_DATA_DATE })
    writeFileSync(ctx.out(UA_ARTIFACT), JSON.stringify(defs))
    const c = defs.collections
    const brands = c['device/mobiles'] as Record<string, { models?: unknown[] }>
    const always = Object.values(defs.literals).filter((l) => l === null).length
    ctx.log(`${Object.keys(defs.literals).length} distinct patterns compiled; ${always} without a required literal (always run)`)
    return {
      version: UA_DATA_VERSION,
      counts: {
        bots: countOf(c.bots),
        browsers: countOf(c['client/browsers']),
        mobile_apps: countOf(c['client/mobile_apps']),
        libraries: countOf(c['client/libraries']),
        operating_systems: countOf(c.oss),
        device_brands: countOf(brands),
        device_models: Object.values(brands).reduce((n, b) => n + (b.models?.length ?? 1), 0),
        patterns: Object.keys(defs.literals).length,
        patterns_without_literal: always,
      },
    }
  },
}
