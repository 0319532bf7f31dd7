/**
 * The engine's speed: every detection regex is compiled once into a Matcher that knows its required
 * literals (`literals.ts`). A user agent is scanned once for all literals of all regexes (a trigram table
 * over the lower-cased text), and a Matcher whose literals are all absent answers "no match" without
 * running its regex. Long ordered lists (bots, brands, models, browsers, apps, systems) go further: they
 * are indexed by literal, so only their candidate entries are visited, in their original order, which
 * keeps first-match semantics identical to the stock engine.
 */
import { requiredLiterals, TEXT_START } from './literals.ts'

/** The prefix node-device-detector puts before every pattern (helper.getBaseRegExp). */
const BASE_PREFIX = '(?:^|[^A-Z0-9_-]|[^A-Z0-9-]_|sprd-|MZ-)(?:'
/** The prefix of helper.matchUserAgent. */
const MATCH_PREFIX = '(?:^|[^A-Z_-])(?:'

/** The stock helper's normalization: `/` escaped, `++` collapsed. */
export const normalizePattern = (p: string) => p.replace(/\//g, '\\/').replace(/\+\+/g, '+')

/**
 * Literal table: an id per literal, and buckets by a window of the literal's characters: two or three
 * (literals that short), four (literals of 4-5 characters) or six (longer ones), the last three hashed;
 * one-character literals are looked up in the set of characters the scan read (`PackedBuckets.singles`).
 * A scan looks up at most four buckets per text position, and a bucket rarely holds more than a few
 * literals, each confirmed by comparing its characters.
 *
 * The buckets are packed (see `PackedBuckets`) because a scan is bound by memory, not arithmetic: with
 * 28,000 literals, one `string` object per literal and one JS array per bucket made every bucket and every
 * literal compared a cache miss (a scan of an 84-character UA took 10-13 µs, a fifth of a parse; the same
 * loop without the comparisons took 5 µs). Literals added after packing (patterns first seen at run time)
 * are searched with `includes` until there are enough of them to pack again.
 */
const HASH_MASK = (1 << 16) - 1
/** Bucket tier of a literal: its key length. */
const tierOf = (length: number) => (length >= 6 ? 6 : length >= 4 ? 4 : length)
/** Where each tier's keys start in the one key space: tier 1 has 128 keys, tier 2 2^14, the hashed ones 2^16. */
const TIER_BASE = [0, 0, 128, 128 + (1 << 14), 128 + (1 << 14) + (1 << 16), 0, 128 + (1 << 14) + (2 << 16)]
const KEY_SPACE = 128 + (1 << 14) + (3 << 16)
/**
 * Literals added since the last packing make a scan pack again when there are this many, or when none has
 * come for REPACK_QUIET scans: the engine's own fixed patterns (51 literals, `helper.js` and the parsers'
 * constants) are not in the builder's seed and arrive during the first parses; left below the count, they
 * were searched with `includes` by every scan for good (packing them: +15% parses per CPU-second).
 * A quiet repack needs lists added since the last packing (their pairs are read from JS arrays until
 * then) or at least QUIET_REPACK_MIN loose literals. A packing holds the event loop 25-60 ms; a loose
 * literal costs a scan one `includes` (~30-50 ns). After the warm-up (every list indexed, the samples'
 * literals packed), the engine's code still brings one or two with the first user agents of some kinds
 * (`elibom`, an Android Chrome without a known model): a repack for them held a request's turn 25-30 ms.
 */
const REPACK_AFTER = 64
const REPACK_QUIET = 256
const QUIET_REPACK_MIN = 8
/** Bits of the second filter of the hashed tiers (32 KB). */
const CHECK_BITS = 18

/**
 * Rolling value of `s[at..at+n)`, n in 2..6, as the scan computes it: for n = 2 the low 7 bits of each
 * character (exact for ASCII; non-ASCII characters share keys, told apart by comparing), unmasked above.
 */
function rollingOf(s: string, at: number, n: number) {
  const a = s.charCodeAt(at)
  const b = s.charCodeAt(at + 1)
  if (n === 2) return ((a & 127) << 7) | (b & 127)
  let h = (a * 131 + b) * 131 + s.charCodeAt(at + 2)
  if (n === 3) return h
  h = h * 131 + s.charCodeAt(at + 3)
  if (n === 4) return h
  return (h * 131 + s.charCodeAt(at + 4)) * 131 + s.charCodeAt(at + 5)
}

/** Bucket key of a rolling value of tier n. */
const keyOf = (h: number, n: number) => TIER_BASE[n]! + (n <= 2 ? h : h & HASH_MASK)
/**
 * Second filter position of a hashed tier's rolling value: another hash of it (its high bits by a
 * multiplicative hash, where the bucket key took its low bits), so a text position whose key merely
 * collides with a filled bucket's is mostly turned away before the bucket is read.
 */
const checkOf = (h: number, n: number) => Math.imul((h | 0) + n, 0x9e3779b1) >>> (32 - CHECK_BITS)

const hasBit = (bits: Int32Array, k: number) => (bits[k >>> 5]! & (1 << (k & 31))) !== 0

/**
 * Every packed literal by bucket, in typed arrays: a bit per key says whether its bucket holds anything
 * (27 KB, stays in cache, so the empty buckets most positions hit cost no memory access), and for the
 * hashed tiers a second bit, set by another hash of the same characters (a two-hash Bloom filter, 32 KB),
 * turns away most positions whose key only collides with a filled bucket's (two thirds of the buckets a
 * scan read before had none of its literals). Bucket K's literals are the records `start[K] .. start[K + 1]`
 * of `records`, each `[length, offset, id >> 16, id & 0xffff, pairs, ...characters, ...(list, entry >> 16,
 * entry & 0xffff) for each of its pairs]`: one bucket's literals, their ids, characters and the list entries
 * that require them sit side by side, so a visit reads one stretch of memory, and a literal found hands its
 * entries to the lists from there (from a JS array per literal, it was three more lines of cold memory a
 * literal found, ~5 µs of a scan after 2 MB written elsewhere).
 *
 * A literal is keyed by one window of its characters (of its tier's length), at `offset`: the window the
 * fewest literals share. Keyed by their first characters, `iphone`, `androi` and `window` each keyed
 * hundreds of literals (`iphone10c3`, `iphone x`, `android tv`…), which every iPhone, Android or Windows
 * UA compared one by one: 110 records a scan of a uap-core UA, against 14 keyed by their rarest window (51 on main).
 */
class PackedBuckets {
  readonly filled = new Int32Array(KEY_SPACE >>> 5)
  readonly check = new Int32Array(1 << (CHECK_BITS - 5))
  readonly start = new Int32Array(KEY_SPACE + 1)
  readonly records: Uint16Array
  /**
   * One-character ASCII literals (16 in Matomo's data, `s`, `m`, `/`…), as pairs (character code, id): they
   * occur at most positions of a text (visiting their buckets there was 27 of a scan's 47 visits), so the
   * scan marks the characters it reads in a 128-bit set and looks them up there once, reading no string.
   */
  readonly singles: Int32Array
  /** Literals searched with `includes` instead: empty, or one non-ASCII character. */
  readonly unkeyed: number[] = []

  /**
   * @param users by literal id, its (list number, entry) pairs (`LiteralTable.use`)
   */
  constructor(literals: string[], users: number[][]) {
    const singles: number[] = []
    // The key of every window of every literal (literal i's from `first[i]`), and how many literals have a
    // window on each key, to key each literal by its least shared window.
    const first = new Int32Array(literals.length + 1)
    const windows: number[] = []
    const load = new Int32Array(KEY_SPACE)
    literals.forEach((l, id) => {
      const tier = tierOf(l.length)
      if (l.length > 1)
        for (let o = 0; o + tier <= l.length; o++) {
          const key = keyOf(rollingOf(l, o, tier), tier)
          windows.push(key)
          load[key]!++
        }
      first[id + 1] = windows.length
    })
    const offsets = new Int32Array(literals.length)
    const keys = literals.map((l, id) => {
      const tier = tierOf(l.length)
      if (l.length <= 1) {
        if (l.length === 1 && l.charCodeAt(0) < 128) singles.push(l.charCodeAt(0), id)
        else this.unkeyed.push(id)
        return -1
      }
      let best = first[id]!
      for (let w = best + 1; w < first[id + 1]!; w++) if (load[windows[w]!]! < load[windows[best]!]!) best = w
      offsets[id] = best - first[id]!
      const h = rollingOf(l, offsets[id]!, tier)
      if (tier >= 3) {
        const c = checkOf(h, tier)
        this.check[c >>> 5]! |= 1 << (c & 31)
      }
      return keyOf(h, tier)
    })
    this.singles = Int32Array.from(singles)
    const size = (id: number) => 5 + literals[id]!.length + ((users[id]?.length ?? 0) / 2) * 3
    keys.forEach((key, id) => {
      if (key >= 0) this.start[key + 1]! += size(id)
    })
    for (let k = 1; k <= KEY_SPACE; k++) this.start[k]! += this.start[k - 1]!
    const slot = this.start.slice()
    this.records = new Uint16Array(this.start[KEY_SPACE]!)
    keys.forEach((key, id) => {
      if (key < 0) return
      const l = literals[id]!
      const pairs = users[id] ?? []
      let at = slot[key]!
      slot[key] = at + size(id)
      this.records[at++] = l.length
      this.records[at++] = offsets[id]!
      this.records[at++] = id >>> 16
      this.records[at++] = id & 0xffff
      this.records[at++] = pairs.length / 2
      for (let k = 0; k < l.length; k++) this.records[at++] = l.charCodeAt(k)
      for (let k = 0; k < pairs.length; k += 2) {
        this.records[at++] = pairs[k]!
        this.records[at++] = pairs[k + 1]! >>> 16
        this.records[at++] = pairs[k + 1]! & 0xffff
      }
      this.filled[key >>> 5]! |= 1 << (key & 31)
    })
  }
}

class LiteralTable {
  readonly literals: string[] = []
  private readonly ids = new Map<string, number>()
  private packed: PackedBuckets | null = null
  /** How many literals were added since the last packing. */
  private unpacked = 0
  /** Scans since the last literal was added. */
  private quiet = 0
  /** Ids the scan searches with `includes`: those added since the last packing, and the unkeyed ones. */
  private loose: number[] = []
  /** Hit stamps: literal i occurs in the current text when stamp[i] === generation. */
  private stamp = new Int32Array(1024)
  /** The ASCII characters of the text being scanned, a bit each (for the one-character literals). */
  private readonly seen = new Int32Array(4)
  private generation = 0
  private scanned: string | null = null
  /** Literal ids found in the last scanned text. */
  hits: number[] = []
  /** By literal id: pairs (list number, entry) of the indexed lists' entries requiring it (see `ListIndex`). */
  private readonly users: number[][] = []
  /** Pairs (list number, entry) whose literals the last scan found, for the lists to pick theirs. */
  found: number[] = []
  /** Whether the packed records hold every literal's pairs (see `use`). */
  private usersPacked = false

  /** Registers entry `entry` of list number `list` as requiring literal `id`. */
  use(id: number, list: number, entry: number) {
    if (list > 0xffff) throw new Error('more than 65,536 indexed lists: the packed records keep a list number in 16 bits')
    ;(this.users[id] ??= []).push(list, entry)
    this.scanned = null // the last scan's `found` holds only the lists known then
    // The packed records lack this pair: the scans read every literal's pairs from `users` until the
    // table packs again, once no new literal or pair has come for REPACK_QUIET scans.
    this.usersPacked = false
    this.quiet = 0
  }

  get size() {
    return this.literals.length
  }

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
    this.unpacked++
    this.quiet = 0
    this.loose.push(id)
    this.scanned = null // a new literal: the last scan no longer covers every literal
    return id
  }

  /** Marks the literals of bucket `key` that occur in `lower` with their key window at `i`. */
  private visit(p: PackedBuckets, key: number, lower: string, i: number, gen: number) {
    const records = p.records
    for (let r = p.start[key]!, end = p.start[key + 1]!; r < end; ) {
      const length = records[r]!
      const at = i - records[r + 1]!
      const from = r + 5
      r = from + length + records[r + 4]! * 3
      if (at < 0 || at + length > lower.length) continue
      let k = 0
      while (k < length && records[from + k] === lower.charCodeAt(at + k)) k++
      if (k < length) continue
      const id = (records[from - 3]! << 16) | records[from - 2]!
      if (this.stamp[id] === gen) continue // found before at another position
      this.stamp[id] = gen
      this.hits.push(id)
      if (!this.usersPacked) continue
      for (let q = from + length; q < r; q += 3) this.found.push(records[q]!, (records[q + 1]! << 16) | records[q + 2]!)
    }
  }

  /** Finds every literal in `text` (once per distinct text in a row). */
  scan(text: string) {
    if (text === this.scanned) return
    const pending = this.unpacked >= QUIET_REPACK_MIN || !this.usersPacked
    const p = !this.packed || this.unpacked >= REPACK_AFTER || (pending && ++this.quiet > REPACK_QUIET) ? this.pack() : this.packed
    this.scanned = text
    const gen = ++this.generation
    this.hits = []
    this.found = []
    const { filled, check } = p
    const lower = TEXT_START + text.toLowerCase() // `^` in a literal is this character (literals.ts)
    const n = lower.length
    const seen = this.seen
    seen.fill(0)
    // keyOf and checkOf written out for each tier, with the rolling value carried from one tier to the next.
    // Non-ASCII characters are keyed too (literals may hold caseless ones: 붉은별, أنغامي, ’), at no cost to ASCII text.
    for (let i = 0; i + 1 < n; i++) {
      const a = lower.charCodeAt(i)
      const b = lower.charCodeAt(i + 1)
      if (a < 128) seen[a >>> 5]! |= 1 << (a & 31)
      let key = 128 + (((a & 127) << 7) | (b & 127))
      if (hasBit(filled, key)) this.visit(p, key, lower, i, gen)
      if (i + 2 >= n) continue
      const c = lower.charCodeAt(i + 2)
      let h = (a * 131 + b) * 131 + c
      key = TIER_BASE[3]! + (h & HASH_MASK)
      if (hasBit(filled, key) && hasBit(check, checkOf(h, 3))) this.visit(p, key, lower, i, gen)
      if (i + 3 >= n) continue
      const d = lower.charCodeAt(i + 3)
      h = h * 131 + d
      key = TIER_BASE[4]! + (h & HASH_MASK)
      if (hasBit(filled, key) && hasBit(check, checkOf(h, 4))) this.visit(p, key, lower, i, gen)
      if (i + 5 >= n) continue
      const e = lower.charCodeAt(i + 4)
      const f = lower.charCodeAt(i + 5)
      h = (h * 131 + e) * 131 + f
      key = TIER_BASE[6]! + (h & HASH_MASK)
      if (hasBit(filled, key) && hasBit(check, checkOf(h, 6))) this.visit(p, key, lower, i, gen)
    }
    const fromBuckets = this.hits.length // their pairs are in `found` already, when the records hold them
    const last = lower.charCodeAt(n - 1)
    if (last < 128) seen[last >>> 5]! |= 1 << (last & 31)
    const singles = p.singles
    for (let k = 0; k < singles.length; k += 2) {
      const c = singles[k]!
      if ((seen[c >>> 5]! & (1 << (c & 31))) === 0) continue
      const id = singles[k + 1]!
      this.stamp[id] = gen
      this.hits.push(id)
    }
    for (const id of this.loose)
      if (lower.includes(this.literals[id]!)) {
        this.stamp[id] = gen
        this.hits.push(id)
      }
    // The lists' entries whose literals are here, so asking a list for candidates reads no table of its own;
    // the buckets' literals handed theirs from the records (see `PackedBuckets`).
    for (let h = this.usersPacked ? fromBuckets : 0; h < this.hits.length; h++) {
      const user = this.users[this.hits[h]!]
      if (user) for (let k = 0; k < user.length; k++) this.found.push(user[k]!)
    }
  }

  present(id: number) {
    return this.stamp[id] === this.generation
  }

  /** Packings so far (tests: none after the warm-up). */
  packs = 0

  packIfNeeded() {
    if (!this.packed || this.unpacked > 0 || !this.usersPacked) this.pack()
  }

  /** Packs every literal and pair known now (tens of ms: ~42,000 literals). */
  pack(): PackedBuckets {
    this.packs++
    const packed = (this.packed = new PackedBuckets(this.literals, this.users))
    this.usersPacked = true
    this.unpacked = 0
    this.loose = packed.unkeyed.slice()
    this.scanned = null
    return packed
  }
}

const table = new LiteralTable()

/**
 * Packs the literals now rather than in the scan of a request: the ua service's warm-up steps call it,
 * before and after their sample parses have brought in the engine's own patterns (service.ts `warmUp`).
 * Only when a literal or a list came since the last packing: a data swap over the same detection data warms
 * a generation whose lists exist already, and each packing holds the event loop 25-60 ms while the old
 * generation serves.
 */
export const packLiterals = () => void table.packIfNeeded()

/** How often the literal table was packed, and how many lists are indexed (tests: what a warm-up leaves to requests). */
export const literalTableStats = () => ({ packs: table.packs, lists: listCount })

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

/** How many lists are indexed: each has a number, under which the literal table collects its entries. */
let listCount = 0

/**
 * An ordered list of patterns indexed by literal, to visit only the entries that may match. Each entry is
 * registered with the literal table under its literals, and a scan collects the (list, entry) pairs of the
 * literals it found (~23 a scan over all lists), so asking a list costs a pass over those and sorting its
 * few candidates. (Short lists used to ask each entry's `possible`, ~120 entries a parse; long ones probed a
 * table per literal found, ~160 probes of cold memory a parse, 5-6 µs.)
 */
export class ListIndex {
  private readonly no = listCount++
  /** Entries without literals: candidates for every text. */
  private readonly always: number[] = []
  private lastText: string | null = null
  private last: number[] = []

  /**
   * @param matchers each entry's Matcher, by position, for the engine to run a candidate's without looking
   *   it up by pattern (a Map of 30,000 long strings, read at random: ~7% of a parse, 22 lookups)
   * @param keys for an object of entries (brands), their keys in `for…in` order
   */
  constructor(
    readonly matchers: Matcher[],
    readonly keys: string[] = [],
  ) {
    matchers.forEach((m, i) => {
      if (!m.literals) this.always.push(i)
      else for (const id of new Set(m.literals)) table.use(id, this.no, i)
    })
  }

  /** Indices of the entries that may match `text`, ascending (so the first match is the stock one). */
  candidates(text: string): number[] {
    if (text === this.lastText) return this.last
    table.scan(text)
    const out: number[] = this.always.length ? this.always.slice() : []
    const found = table.found
    for (let k = 0; k < found.length; k += 2) if (found[k] === this.no) out.push(found[k + 1]!)
    sortUnique(out)
    this.lastText = text
    this.last = out
    return out
  }
}

/** Sorts ascending and drops repeats, in place: by insertion when short, as candidate lists mostly are (a few entries). */
function sortUnique(out: number[]) {
  if (out.length > 32) out.sort((a, b) => a - b)
  else
    for (let i = 1; i < out.length; i++) {
      const v = out[i]!
      let j = i
      while (j > 0 && out[j - 1]! > v) out[j] = out[--j]!
      out[j] = v
    }
  let n = out.length ? 1 : 0
  for (let k = 1; k < out.length; k++) if (out[k] !== out[n - 1]) out[n++] = out[k]!
  out.length = n
}

const indexes = new WeakMap<object, ListIndex>()

/** The index of an ordered array of `{regex}` items: its candidates for a text, and each entry's Matcher. */
export function listIndex(list: { regex: string }[]): ListIndex {
  let index = indexes.get(list)
  if (!index) indexes.set(list, (index = new ListIndex(list.map((item) => baseMatcher(item.regex)))))
  return index
}

/** The index of an object of `{regex}` items (brands), as the list of its keys in `for…in` order. */
export function keyIndex(collection: Record<string, { regex: string }>): ListIndex {
  let index = indexes.get(collection)
  if (!index) {
    const keys = Object.keys(collection)
    indexes.set(
      collection,
      (index = new ListIndex(
        keys.map((k) => baseMatcher(collection[k]!.regex)),
        keys,
      )),
    )
  }
  return index
}

/** Literals computed by the builder for each normalized pattern, to skip the analysis at start. */
export function seedLiterals(literals: Record<string, string[] | null>) {
  for (const [pattern, lits] of Object.entries(literals)) {
    seeded.set(pattern, lits)
    // Registered now, so the table is packed once rather than grown by every list's first use.
    if (lits) for (const l of lits) table.idOf(l)
  }
}
