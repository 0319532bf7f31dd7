/**
 * The detection data: node-device-detector's `regexes/` folder (Matomo's YAML converted to CommonJS
 * modules of JSON) turned into one `ua-detection.json` artifact, with the required literals of every
 * pattern computed ahead (the prefilter) and every regex proven to compile. The same reader serves the
 * builder and an operator's newer folder at start (ALMANAC_UA_REGEXES), without running its code: each
 * module is read as `module.exports = <JSON>`.
 */
import { existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { requiredLiterals } from './literals.ts'
import { normalizePattern } from './prefilter.ts'

/** The collections the engine reads (engine/data.js), as paths under `regexes/` without `.js`. */
export const COLLECTIONS = [
  'bots',
  'oss',
  'vendorfragments',
  'client/browser_engine',
  'client/browsers',
  'client/mobile_apps',
  'client/feed_readers',
  'client/mediaplayers',
  'client/pim',
  'client/libraries',
  'client/hints/apps',
  'client/hints/browsers',
  'device/alias-device',
  'device/cameras',
  'device/car_browsers',
  'device/consoles',
  'device/mobiles',
  'device/notebooks',
  'device/portable_media_player',
  'device/shell_tv',
  'device/televisions',
] as const

export interface Definitions {
  /** What the data is: the package and version it came from, and its date (`X-Definitions-Updated`). */
  source: { package: string; version: string; date: string }
  collections: Record<string, unknown>
  /** Required literals by normalized pattern (null: the pattern always runs). */
  literals: Record<string, string[] | null>
}

/** One `regexes/*.js` module, read as data. */
function readModule(path: string): unknown {
  const text = readFileSync(path, 'utf8')
  const m = /^\s*module\.exports\s*=\s*/.exec(text)
  if (!m) throw new Error(`${path}: not a \`module.exports = …\` data module`)
  try {
    return JSON.parse(text.slice(m[0].length).trim().replace(/;$/, ''))
  } catch (e) {
    throw new Error(`${path}: its exported value is not JSON (${(e as Error).message})`)
  }
}

/** Every `regex` member in a collection, wherever it sits (entries, models, versions). */
function patternsOf(value: unknown, out: string[]) {
  if (Array.isArray(value)) for (const v of value) patternsOf(v, out)
  else if (value && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      if (key === 'regex' && typeof v === 'string') out.push(v)
      else patternsOf(v, out)
    }
  }
}

/** The `regexes/` folder of a node-device-detector package folder, or the folder itself. */
export function regexesFolder(dir: string): string {
  return existsSync(join(dir, 'regexes', 'bots.js')) ? join(dir, 'regexes') : dir
}

/** Reads the collections of a `regexes/` folder and computes the literals of every pattern. */
export function readDefinitions(dir: string, source: Definitions['source']): Definitions {
  const folder = regexesFolder(dir)
  const collections: Record<string, unknown> = {}
  for (const name of COLLECTIONS) {
    const path = join(folder, `${name}.js`)
    if (!existsSync(path)) throw new Error(`${folder} has no ${name}.js: not a node-device-detector regexes folder`)
    collections[name] = readModule(path)
  }
  const patterns: string[] = []
  for (const name of COLLECTIONS) patternsOf(collections[name], patterns)
  // Vendor fragments are plain strings the engine suffixes (engine/parser/vendor-fragment-abstract-parser.js).
  for (const list of Object.values(collections.vendorfragments as Record<string, string[]>))
    for (const f of list) patterns.push(`${f}[^a-z0-9]+`)
  const literals: Record<string, string[] | null> = {}
  for (const pattern of patterns) {
    const normalized = normalizePattern(pattern)
    if (normalized in literals) continue
    try {
      new RegExp(normalized, 'i')
    } catch (e) {
      throw new Error(`${folder}: the pattern ${JSON.stringify(pattern.slice(0, 120))} does not compile: ${(e as Error).message}`)
    }
    literals[normalized] = requiredLiterals(normalized)
  }
  return { source, collections, literals }
}

/** Package version and date of an operator's folder: package.json's version, the newest file's day. */
export function describeFolder(dir: string): Definitions['source'] {
  const folder = regexesFolder(dir)
  let version = 'unknown'
  for (const pkg of [join(dir, 'package.json'), join(folder, '..', 'package.json')]) {
    if (!existsSync(pkg)) continue
    try {
      version = String(JSON.parse(readFileSync(pkg, 'utf8')).version ?? 'unknown')
      break
    } catch {}
  }
  let newest = 0
  for (const name of COLLECTIONS) {
    const path = join(folder, `${name}.js`)
    if (existsSync(path)) newest = Math.max(newest, statSync(path).mtimeMs)
  }
  return { package: 'node-device-detector', version, date: new Date(newest).toISOString().slice(0, 10) }
}

export function loadDefinitions(path: string): Definitions {
  const defs = JSON.parse(readFileSync(path, 'utf8')) as Definitions
  if (!defs?.collections || !defs.source?.date)
    throw new Error(`${path} is not a ua-detection artifact; rebuild it with \`almanac data build\``)
  return defs
}
