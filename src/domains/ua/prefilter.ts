/**
 * The engine's speed: every detection regex is compiled once into a Matcher that knows its required
 * literals (`literals.ts`). A user agent is scanned once for all literals of all regexes (a trigram table
 * over the lower-cased text), and a Matcher whose literals are all absent answers "no match" without
 * running its regex. Long ordered lists (bots, brands, models, browsers, apps, systems) go further: they
 * are indexed by literal, so only their candidate entries are visited, in their original order, which
 * keeps first-match semantics identical to the stock engine.
 */
import { requiredLiterals } from './literals.ts'

/** The prefix node-device-detector puts before every pattern (helper.getBaseRegExp). */
const BASE_PREFIX = '(?:^|[^A-Z0-9_-]|[^A-Z0-9-]_|sprd-|MZ-)(?:'
/** The prefix of helper.matchUserAgent. */
const MATCH_PREFIX = '(?:^|[^A-Z_-])(?:'

/** The stock helper's normalization: `/` escaped, `++` collapsed. */
export const normalizePattern = (p: string) => p.replace(/\//g, '\\/').replace(/\+\+/g, '+')

/**
 * Literal table: an id per literal, and buckets by the literal's first one, two, three or four characters
 * (longer literals by their first four, hashed), so a scan looks up four buckets per text position.
 */
const TIER_SIZE = [0, 128, 1 << 14, 1 << 16, 1 << 16]
const HASH_MASK = (1 << 16) - 1

const keyOf = (s: string, at: number, n: number) => {
  const a = s.charCodeAt(at)
  if (n === 1) return a
  const b = s.charCodeAt(at + 1)
  if (n === 2) return (a << 7) | b
  const c = s.charCodeAt(at + 2)
  if (n === 3) return ((a * 131 + b) * 131 + c) & HASH_MASK
  return (((a * 131 + b) * 131 + c) * 131 + s.charCodeAt(at + 3)) & HASH_MASK
}

class LiteralTable {
  readonly literals: string[] = []
  private readonly ids = new Map<string, number>()
  /** tiers[n][key]: ids of the literals whose first min(n, 4) characters give `key`. */
  private readonly tiers: (number[] | undefined)[][] = TIER_SIZE.map((size) => new Array(size))
  /** Hit stamps: literal i occurs in the current text when stamp[i] === generation. */
  private stamp = new Int32Array(1024)
  private generation = 0
  private scanned: string | null = null
  /** Literal ids found in the last scanned text. */
  hits: number[] = []

  idOf(literal: string): number {
    let id = this.ids.get(literal)
    if (id !== undefined) return id
    id = this.literals.length
    this.literals.push(literal)
    this.ids.set(literal, id)
    if (id >= this.stamp.length) {
      const grown = new Int32Array(this.stamp.length * 2)
      grown.set(this.stamp)
      this.stamp = grown
    }
    const n = Math.min(literal.length, 4)
    const tier = this.tiers[n]!
    const key = keyOf(literal, 0, n)
    ;(tier[key] ??= []).push(id)
    this.scanned = null // a new literal: the last scan no longer covers every literal
    return id
  }

  /** Finds every literal in `text` (once per distinct text in a row). */
  scan(text: string) {
    if (text === this.scanned) return
    this.scanned = text
    const gen = ++this.generation
    const hits: number[] = []
    const lower = text.toLowerCase()
    const length = lower.length
    const stamp = this.stamp
    const literals = this.literals
    const tiers = this.tiers
    for (let i = 0; i < length; i++) {
      for (let n = 1; n <= 4 && i + n <= length; n++) {
        if (lower.charCodeAt(i + n - 1) > 127) break
        const bucket = tiers[n]![keyOf(lower, i, n)]
        if (bucket === undefined) continue
        for (let k = 0; k < bucket.length; k++) {
          const id = bucket[k]!
          if (stamp[id] !== gen && lower.startsWith(literals[id]!, i)) {
            stamp[id] = gen
            hits.push(id)
          }
        }
      }
    }
    this.hits = hits
  }

  present(id: number) {
    return this.stamp[id] === this.generation
  }
}

const table = new LiteralTable()

/** A compiled regex with its literal prefilter; `exec` has RegExp's contract for the engine's calls. */
export class Matcher {
  private compiled: RegExp | null = null
  readonly literals: Int32Array | null

  constructor(
    readonly source: string,
    literals: string[] | null,
  ) {
    this.literals = literals ? Int32Array.from(literals.map((l) => table.idOf(l))) : null
  }

  private get re() {
    return (this.compiled ??= new RegExp(this.source, 'i'))
  }

  /** Whether a literal of this regex is in `text` (always true without literals). */
  possible(text: string): boolean {
    const lits = this.literals
    if (!lits) return true
    table.scan(text)
    for (let k = 0; k < lits.length; k++) if (table.present(lits[k]!)) return true
    return false
  }

  exec(text: string): RegExpExecArray | null {
    return this.possible(text) ? this.re.exec(text) : null
  }

  test(text: string): boolean {
    return this.possible(text) && this.re.test(text)
  }
}

/** Literals precomputed by the dataset builder, by pattern (see `seedLiterals`). */
const seeded = new Map<string, string[] | null>()

const literalsOf = (pattern: string) => (seeded.has(pattern) ? seeded.get(pattern)! : requiredLiterals(pattern))

// The patterns come from the detection data and the engine's own code, so these maps are bounded by it.
const baseMatchers = new Map<string, Matcher>()
const plainMatchers = new Map<string, Matcher>()

/** helper.getBaseRegExp(pattern), compiled once. */
export function baseMatcher(pattern: string): Matcher {
  let m = baseMatchers.get(pattern)
  if (!m) {
    const normalized = normalizePattern(pattern)
    baseMatchers.set(pattern, (m = new Matcher(BASE_PREFIX + normalized + ')', literalsOf(normalized))))
  }
  return m
}

/** helper.matchUserAgent(pattern, ua), compiled once. */
export function userAgentMatcher(pattern: string): Matcher {
  let m = plainMatchers.get(pattern)
  if (!m) {
    const normalized = normalizePattern(pattern)
    plainMatchers.set(pattern, (m = new Matcher(MATCH_PREFIX + normalized + ')', literalsOf(normalized))))
  }
  return m
}

/** `new RegExp(source, 'i')` for the engine's fixed patterns, compiled once, without a prefilter. */
export function fixedRegExp(source: string): RegExp {
  let m = plainMatchers.get('\0' + source)
  if (!m) plainMatchers.set('\0' + source, (m = new Matcher(source, null)))
  return m as unknown as RegExp
}

/** An ordered list of patterns indexed by literal, to visit only the entries that may match. */
class ListIndex {
  private readonly always: number[] = []
  private readonly byLiteral = new Map<number, number[]>()
  private lastText: string | null = null
  private last: number[] = []

  constructor(readonly matchers: Matcher[]) {
    matchers.forEach((m, i) => {
      if (!m.literals) return this.always.push(i)
      for (const id of new Set(m.literals)) {
        const list = this.byLiteral.get(id)
        if (list) list.push(i)
        else this.byLiteral.set(id, [i])
      }
    })
  }

  /** Indices of the entries that may match `text`, ascending (so the first match is the stock one). */
  candidates(text: string): number[] {
    if (text === this.lastText) return this.last
    table.scan(text)
    const out = this.always.slice()
    for (const id of table.hits) {
      const list = this.byLiteral.get(id)
      if (list) for (let k = 0; k < list.length; k++) out.push(list[k]!)
    }
    out.sort((a, b) => a - b)
    let n = 0
    for (let k = 0; k < out.length; k++) if (k === 0 || out[k] !== out[k - 1]) out[n++] = out[k]!
    out.length = n
    this.lastText = text
    this.last = out
    return out
  }
}

const indexes = new WeakMap<object, ListIndex>()

/** Candidate positions of an array of `{regex}` items for `text`. */
export function candidateIndexes(list: { regex: string }[], text: string): number[] {
  let index = indexes.get(list)
  if (!index) indexes.set(list, (index = new ListIndex(list.map((item) => baseMatcher(item.regex)))))
  return index.candidates(text)
}

const keyLists = new WeakMap<object, string[]>()

/** Candidate keys of an object of `{regex}` items (brands), in `for…in` order, for `text`. */
export function candidateKeys(collection: Record<string, { regex: string }>, text: string): string[] {
  let keys = keyLists.get(collection)
  if (!keys) {
    keys = Object.keys(collection)
    keyLists.set(collection, keys)
    indexes.set(keys, new ListIndex(keys.map((k) => baseMatcher(collection[k]!.regex))))
  }
  const all = keys
  return indexes.get(keys)!.candidates(text).map((i) => all[i]!)
}

/** Literals computed by the builder for each normalized pattern, to skip the analysis at start. */
export function seedLiterals(literals: Record<string, string[] | null>) {
  for (const [pattern, lits] of Object.entries(literals)) seeded.set(pattern, lits)
}

/** How many regexes have no literal (always run), for the builder's counts and the docs. */
export const literalStats = () => ({ literals: table.literals.length })
