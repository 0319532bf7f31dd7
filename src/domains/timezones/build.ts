/**
 * tzdata -> `timezones.json`: every zone's transitions and POSIX footer, the link table, and the
 * zone/country tables. Reads the TZif files Debian compiled (what zic wrote from the same release), keeps
 * only the transitions the footer cannot reproduce (zic's "slim" idea, proven here transition by
 * transition), and refuses a tzdata release older than TZDATA_MIN.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { TZDATA_MIN } from '../../data/tzdata.ts'
import type { BuildContext, DatasetBuilder } from '../../data/types.ts'
import { parsePosixTz, posixNextChange, posixTypeAt, type PosixTz } from './posix-tz.ts'
import { parseTzif, type LocalTimeType } from './tzif.ts'
import { TIMEZONES_ARTIFACT, type TimezonesArtifact } from './artifacts.ts'
import type { StoredZone } from './zone.ts'

/** Orders tz release names: `2026f` < `2026g` < `2027a`; `2026z` < `2026za`. */
export function compareTzVersions(a: string, b: string): number {
  const pa = /^(\d{4})([a-z]+)$/.exec(a)
  const pb = /^(\d{4})([a-z]+)$/.exec(b)
  if (!pa || !pb) throw new Error(`not a tz release name: ${pa ? b : a}`)
  return Number(pa[1]) - Number(pb[1]) || pa[2]!.length - pb[2]!.length || (pa[2]! < pb[2]! ? -1 : pa[2]! > pb[2]! ? 1 : 0)
}

/** The zone and link names of `tzdata.zi` and its release. */
export function readTzdataZi(text: string): { version: string; zones: string[]; links: Map<string, string> } {
  const version = /^# version (\S+)/.exec(text)?.[1]
  if (!version) throw new Error('tzdata.zi does not start with "# version <release>"')
  const zones: string[] = []
  const links = new Map<string, string>()
  for (const line of text.split('\n')) {
    const f = line.split(/\s+/)
    if (f[0] === 'Z' && f[1] !== 'Factory') zones.push(f[1]!)
    else if (f[0] === 'L' && f[2] !== 'Factory') links.set(f[2]!, f[1]!)
  }
  return { version, zones, links }
}

const sameType = (a: LocalTimeType, b: LocalTimeType) => a.offset === b.offset && a.isDst === b.isDst && a.abbreviation === b.abbreviation

/** Transitions with their types, dropping those that change nothing visible. */
function meaningfulTransitions(times: number[], indices: number[], types: LocalTimeType[]) {
  const out: { at: number; type: LocalTimeType }[] = []
  let previous = types[0]!
  times.forEach((at, i) => {
    const type = types[indices[i]!]!
    if (!sameType(type, previous)) out.push({ at, type })
    previous = type
  })
  return out
}

/**
 * How many leading transitions to keep: the tail that the footer reproduces exactly (same instants, same
 * types, nothing in between) is dropped, since past the last kept transition the footer rules anyway.
 */
function keptCount(transitions: { at: number; type: LocalTimeType }[], footer: PosixTz | undefined): number {
  if (!footer) return transitions.length
  let keep = transitions.length
  // Dropping transition k hands the interval (k-1, k] to the footer: allowed when the footer already gives
  // transition k-1's type at its instant and next changes exactly at transition k, to transition k's type.
  // The intervals after k were proven by the earlier rounds; after the last transition the footer rules
  // in every reader anyway.
  while (keep > 1) {
    const here = transitions[keep - 1]!
    const previous = transitions[keep - 2]!
    if (!sameType(posixTypeAt(footer, previous.at), previous.type)) break
    const next = posixNextChange(footer, previous.at)
    if (!next || next.at !== here.at || !sameType(next.type, here.type)) break
    keep--
  }
  return keep
}

function compileZone(file: string): StoredZone & { transitionCount: number } {
  const data = parseTzif(readFileSync(file), file)
  const footer = data.footer ? parsePosixTz(data.footer) : undefined
  const transitions = meaningfulTransitions(data.times, data.indices, data.types)
  const kept = transitions.slice(0, keptCount(transitions, footer))
  // Type 0 applies before the first transition; keep it first, then the types in order of first use.
  const types: LocalTimeType[] = [data.types[0]!]
  const indexOf = (t: LocalTimeType) => {
    let i = types.findIndex((x) => sameType(x, t))
    if (i < 0) i = types.push(t) - 1
    return i
  }
  const indices = kept.map((t) => indexOf(t.type))
  return {
    types: types.map((t) => [t.offset, t.isDst ? 1 : 0, t.abbreviation]),
    times: kept.map((t, i) => (i === 0 ? t.at : t.at - kept[i - 1]!.at)),
    indices,
    footer: data.footer,
    transitionCount: kept.length,
  }
}

/** `zone1970.tab` / `zone.tab` rows: codes (comma-separated) and zone name. */
function readZoneTab(text: string, into: Record<string, Set<string>>) {
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue
    const [codes, , name] = line.split('\t')
    if (!codes || !name) continue
    for (const code of codes.split(',')) (into[name] ??= new Set()).add(code)
  }
}

const sortedObject = <V>(entries: [string, V][]) => Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))

export const timezonesBuilder: DatasetBuilder = {
  id: 'timezones',
  sources: ['tzdata', 'tzdata-zone1970', 'tzdata-zonetab', 'tzdata-iso3166'],
  artifacts: [TIMEZONES_ARTIFACT],
  revision: 1,
  // tzdata is released a few times a year: a year-old copy misses rule changes.
  staleAfterDays: 365,
  async build(ctx: BuildContext) {
    const zi = await ctx.source('tzdata')
    const { version, zones, links } = readTzdataZi(readFileSync(zi.path, 'utf8'))
    if (compareTzVersions(version, TZDATA_MIN) < 0) {
      throw new Error(
        `${zi.path} is tzdata ${version}, older than the ${TZDATA_MIN} that src/data/tzdata.ts requires: offsets changed since (upgrade ` +
          `with \`apt-get install tzdata\`, which .ci/run does).`,
      )
    }
    const dir = dirname(zi.path)
    const progress = ctx.progress('zones', zones.length)
    const stored: [string, StoredZone][] = []
    let transitions = 0
    for (const name of zones) {
      const { transitionCount, ...zone } = compileZone(join(dir, name))
      transitions += transitionCount
      stored.push([name, zone])
      progress.tick()
    }
    progress.done()
    const zoneNames = new Set(zones)
    const resolvedLinks: [string, string][] = []
    for (const [name, first] of links) {
      let target = first
      for (let hops = 0; !zoneNames.has(target); hops++) {
        const further = links.get(target)
        if (!further || hops > 10) throw new Error(`tzdata.zi: link ${name} -> ${first} reaches no zone`)
        target = further
      }
      resolvedLinks.push([name, target])
    }
    const countries: Record<string, Set<string>> = {}
    readZoneTab(readFileSync((await ctx.source('tzdata-zone1970')).path, 'utf8'), countries)
    readZoneTab(readFileSync((await ctx.source('tzdata-zonetab')).path, 'utf8'), countries)
    const countryNames: [string, string][] = []
    for (const line of readFileSync((await ctx.source('tzdata-iso3166')).path, 'utf8').split('\n')) {
      const [code, name] = line.split('\t')
      if (code && name && !code.startsWith('#')) countryNames.push([code, name])
    }
    const artifact: TimezonesArtifact = {
      version,
      zones: sortedObject(stored),
      links: sortedObject(resolvedLinks),
      countries: sortedObject(
        Object.entries(countries)
          .filter(([name]) => zoneNames.has(name) || links.has(name))
          .map(([name, set]) => [name, [...set].sort()]),
      ),
      countryNames: sortedObject(countryNames),
    }
    writeFileSync(ctx.out(TIMEZONES_ARTIFACT), JSON.stringify(artifact))
    return {
      version,
      counts: { zones: stored.length, links: resolvedLinks.length, names: stored.length + resolvedLinks.length, transitions },
      notes: [`IANA tzdata ${version} from ${dir}`],
    }
  },
}
