/**
 * The detection data: Matomo device-detector's `regexes/` folder (YAML) turned into one
 * `ua-detection.json` artifact, with the required literals of every pattern computed ahead (the
 * prefilter) and every regex proven to compile. The same reader serves the builder (each file a pinned
 * source) and an operator's newer folder at start (ALMANAC_UA_REGEXES): Matomo's layout, or the older
 * node-device-detector package layout (its `regexes/*.js` modules, read as `module.exports = <JSON>`
 * without running their code).
 */
import { existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { load as loadYaml } from 'js-yaml'
import { requiredLiterals } from './literals.ts'
import { normalizePattern } from './prefilter.ts'

/** The collections the engine reads (src/vendor/node-device-detector/data.js), as paths under `regexes/` without extension. */
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
  'device/cameras',
  'device/car_browsers',
  'device/consoles',
  'device/mobiles',
  'device/notebooks',
  'device/portable_media_player',
  'device/shell_tv',
  'device/televisions',
] as const

export type Collection = (typeof COLLECTIONS)[number]

export interface Definitions {
  /** What the data is: where it came from, its version, and its date (`X-Definitions-Updated`). */
  source: { package: string; version: string; date: string }
  collections: Record<string, unknown>
  /** Required literals by normalized pattern (null: the pattern always runs). */
  literals: Record<string, string[] | null>
}

/**
 * One collection file, read as data: Matomo's YAML (`.yml`; js-yaml, because Bun's parser refuses the
 * `'value'# comment` spelling Matomo's files use and Symfony accepts), or a node-device-detector module.
 */
function readCollection(path: string, text = readFileSync(path, 'utf8')): unknown {
  if (path.endsWith('.yml')) {
    try {
      return loadYaml(text, { filename: path })
    } catch (e) {
      throw new Error(`${path}: not YAML (${(e as Error).message.split('\n')[0]})`)
    }
  }
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

/** The `regexes/` folder of a device-detector checkout or package folder, or the folder itself. */
export function regexesFolder(dir: string): string {
  const inner = join(dir, 'regexes')
  return existsSync(join(inner, 'bots.yml')) || existsSync(join(inner, 'bots.js')) ? inner : dir
}

/** The file of each collection in a folder: Matomo's `.yml`, else node-device-detector's `.js`. */
export function folderFiles(dir: string): Record<Collection, string> {
  const folder = regexesFolder(dir)
  const files = {} as Record<Collection, string>
  for (const name of COLLECTIONS) {
    const path = [join(folder, `${name}.yml`), join(folder, `${name}.js`)].find((p) => existsSync(p))
    if (!path) throw new Error(`${folder} has no ${name}.yml: not a device-detector regexes folder`)
    files[name] = path
  }
  return files
}

/**
 * Reads the collections of a `regexes/` layout and computes the literals of every pattern. `texts`: the
 * files' contents, when the caller has read them already.
 */
export function readDefinitions(
  files: Record<Collection, string>,
  source: Definitions['source'],
  texts?: Record<Collection, string>,
): Definitions {
  const collections: Record<string, unknown> = {}
  for (const name of COLLECTIONS) collections[name] = readCollection(files[name], texts?.[name])
  const patterns: string[] = []
  for (const name of COLLECTIONS) patternsOf(collections[name], patterns)
  // Vendor fragments are plain strings the engine suffixes (src/vendor/node-device-detector/parser/vendor-fragment-abstract-parser.js).
  for (const list of Object.values(collections.vendorfragments as Record<string, string[]>))
    for (const f of list) patterns.push(`${f}[^a-z0-9]+`)
  const literals: Record<string, string[] | null> = {}
  for (const pattern of patterns) {
    const normalized = normalizePattern(pattern)
    if (normalized in literals) continue
    try {
      new RegExp(normalized, 'i')
    } catch (e) {
      throw new Error(`the pattern ${JSON.stringify(pattern.slice(0, 120))} does not compile: ${(e as Error).message}`)
    }
    literals[normalized] = requiredLiterals(normalized)
  }
  return { source, collections, literals }
}

/**
 * The definitions last read, with a hash of the files they came from. A data swap opens every domain again;
 * when the ua files are the same it gets the same objects, so the engine's list indexes, kept by collection
 * (prefilter.ts), serve the new generation too. Read again, each swap would add ~1,500 lists to the
 * process's literal table beside the old ones (their pairs stay in it, and it numbers lists in 16 bits).
 */
let last: { key: string; defs: Definitions } | undefined

/**
 * `read()` unless `contents` (the files' bytes, and what else the definitions carry, such as their source)
 * are those of the definitions last read: then those, the same objects.
 */
export function sameOrRead(contents: (Uint8Array | string)[], read: () => Definitions): Definitions {
  const key = contents.map((c) => Bun.hash(c).toString(36)).join(',')
  if (last?.key !== key) last = { key, defs: read() }
  return last.defs
}

/** What an operator's folder is: its package's version when it says one, and the newest file's day. */
export function describeFolder(dir: string, files = folderFiles(dir)): Definitions['source'] {
  const folder = regexesFolder(dir)
  const matomo = files.bots.endsWith('.yml')
  let version = 'unknown'
  for (const pkg of [join(dir, 'package.json'), join(folder, '..', 'package.json')]) {
    if (!existsSync(pkg)) continue
    try {
      version = String(JSON.parse(readFileSync(pkg, 'utf8')).version ?? 'unknown')
      break
    } catch {}
  }
  const newest = Math.max(...Object.values(files).map((path) => statSync(path).mtimeMs))
  return {
    package: matomo ? 'matomo/device-detector' : 'node-device-detector',
    version,
    date: new Date(newest).toISOString().slice(0, 10),
  }
}

/** The built artifact's definitions; `bytes`: the file, when the caller has read it already. */
export function loadDefinitions(path: string, bytes: Uint8Array = readFileSync(path)): Definitions {
  const defs = JSON.parse(new TextDecoder().decode(bytes)) as Definitions
  if (!defs?.collections || !defs.source?.date)
    throw new Error(`${path} is not a ua-detection artifact; rebuild it with \`almanac data build\``)
  return defs
}
