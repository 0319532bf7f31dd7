/**
 * Required literals of a detection regex: a set of lower-case strings at least one of which must occur in
 * any text the regex matches (case-insensitively). When none of them is in a user agent, the regex cannot
 * match and is not run: that is the whole prefilter. `null` means no such set was found (the regex always
 * runs). Being conservative is always correct: a missed literal only costs speed, a wrong one a miss.
 *
 * The analysis walks the pattern once: a sequence requires the best requirement of any of its mandatory
 * parts (a run of plain characters, or a group that must occur), an alternation requires the union of
 * what each branch requires, and anything optional, repeated from zero, a class, an escape class or a
 * look-around requires nothing.
 */

type Requirement = string[] | null

/**
 * The start of the text, as a character: `^` (no `m` flag in the engine's regexes) is read as this
 * character, and the scan searches the literals in the lower-cased text behind it (prefilter.ts), so
 * `^Anghami\/` requires `\u0001anghami/` and `^(?:chrome|node)$` (a bot list's branch) no longer runs
 * on every UA that holds `chrome` somewhere. A UA holding the character itself is only scanned in vain.
 */
export const TEXT_START = '\u0001'

/**
 * Text of the most frequent user agents (Chrome on Windows and Android, Safari on iPhone, Firefox on a
 * Mac, a WebView): a literal found in it would admit nearly every request, so a requirement made of such
 * literals is chosen only when a pattern offers nothing rarer. `Apple[ _]*TV` is thus prefiltered on `tv`,
 * not on `apple` (every AppleWebKit UA). (Adding the common Android versions' UAs here made it worse: 4.40 ->
 * 4.49 regexes run a parse, as patterns fell back to shorter literals.)
 */
const FREQUENT_TEXT = [
  'mozilla/5.0 (windows nt 10.0; win64; x64) applewebkit/537.36 (khtml, like gecko) chrome/120.0.0.0 safari/537.36 edg/120.0.0.0',
  'mozilla/5.0 (linux; android 10; k) applewebkit/537.36 (khtml, like gecko) chrome/120.0.0.0 mobile safari/537.36',
  'mozilla/5.0 (linux; android 13; sm-s911b build/tp1a.220624.014; wv) applewebkit/537.36 (khtml, like gecko) version/4.0 ' +
    'chrome/120.0.6099.144 mobile safari/537.36',
  'mozilla/5.0 (iphone; cpu iphone os 17_1_2 like mac os x) applewebkit/605.1.15 (khtml, like gecko) version/17.1 mobile/15e148 ' +
    'safari/604.1',
  'mozilla/5.0 (macintosh; intel mac os x 10.15; rv:120.0) gecko/20100101 firefox/120.0',
  'mozilla/5.0 (x11; linux x86_64) applewebkit/537.36 (khtml, like gecko) chrome/120.0.0.0 safari/537.36',
]
  .map((ua) => TEXT_START + ua)
  .join('\n')

const frequent = (literals: string[]) => literals.some((l) => FREQUENT_TEXT.includes(l))

/** Rarer first (no literal of the frequent UAs), then a longer shortest literal, then fewer alternatives. */
function better(a: Requirement, b: Requirement): Requirement {
  if (!a) return b
  if (!b) return a
  const fa = frequent(a)
  const fb = frequent(b)
  if (fa !== fb) return fa ? b : a
  const minA = Math.min(...a.map((s) => s.length))
  const minB = Math.min(...b.map((s) => s.length))
  if (minA !== minB) return minA > minB ? a : b
  return a.length <= b.length ? a : b
}

const QUANTIFIER = /^(?:[?*+]|\{(\d+)(?:,(\d*))?\})\??/

/**
 * Characters kept in a literal run: printable ASCII, and the non-ASCII characters whose case the scan's
 * `toLowerCase()` folds exactly as the regex `i` flag does (see `foldsLikeTheRegex`). Other characters
 * end a run (their case folding is left to the regex).
 */
const plain = (c: string) => {
  const code = c.charCodeAt(0)
  return code < 0x80 ? code >= 0x20 && code < 0x7f : foldsLikeTheRegex(code)
}

/** By character code: 1 when a non-ASCII character may be in a literal (built at the first such character). */
let foldSafe: Uint8Array | null = null

/**
 * Whether every character the regex `i` flag matches to `code` lower-cases to the same single character as
 * it, so that the literal (lower case) is found in the scan's lower-cased text whenever the regex matches.
 * Without the `u` flag a regex compares characters by their upper case (ECMA-262 Canonicalize: the
 * character itself when its upper case is several characters, or ASCII for a non-ASCII one), so the
 * characters with the same such key form a class; a class is safe when `toLowerCase` maps all its members
 * to one and the same character. Not safe, hence never in a literal: the sigmas (Σ, σ and final ς lower-case
 * apart, and `toLowerCase` of a whole text depends on the next letter), İ (two characters lower-cased),
 * those lower-cased into ASCII (the Kelvin sign), and surrogates (the scan's `toLowerCase` works on code
 * points, the regex on halves).
 */
function foldsLikeTheRegex(code: number): boolean {
  if (!foldSafe) {
    const keyOf = (c: number) => {
      const upper = String.fromCharCode(c).toUpperCase()
      return upper.length !== 1 || upper.charCodeAt(0) < 0x80 ? c : upper.charCodeAt(0)
    }
    // The one lower-case character of each class (by key), or -2 when its members disagree.
    const lowerOf = new Int32Array(0x10000).fill(-1)
    for (let c = 0x80; c < 0x10000; c++) {
      if (c >= 0xd800 && c <= 0xdfff) continue
      const lower = String.fromCharCode(c).toLowerCase()
      const l = lower.length === 1 && lower.charCodeAt(0) >= 0x80 ? lower.charCodeAt(0) : -2
      const k = keyOf(c)
      lowerOf[k] = lowerOf[k] === -1 || lowerOf[k] === l ? l : -2
    }
    foldSafe = new Uint8Array(0x10000)
    for (let c = 0x80; c < 0x10000; c++) if (!(c >= 0xd800 && c <= 0xdfff) && lowerOf[keyOf(c)]! >= 0) foldSafe[c] = 1
  }
  return foldSafe[code] === 1
}

/** Most strings an exact set may hold (products of classes and groups grow fast). */
const EXACT_CAP = 32
/** Most members a character class may have to count as exact (`[ _]`, `[78]`, `[1-3]`). */
const CLASS_CAP = 6

/** What a piece of pattern requires, and its whole language when that is a small finite set. */
interface Analysis {
  req: Requirement
  /** Every string the piece can match (lower case), or null when unknown or too many. */
  exact: string[] | null
}

const product = (a: string[], b: string[]) => a.flatMap((x) => b.map((y) => x + y))
/** Drops the strings that hold another of the set: where they occur, it does (`bar`, `foobar` -> `bar`). */
const shortest = (set: string[]) => set.filter((s) => !set.some((t) => t !== s && s.includes(t)))
const dedupe = (xs: string[]) => [...new Set(xs)]

class Walker {
  i = 0
  constructor(readonly p: string) {}

  /** alternation := sequence ('|' sequence)* */
  alternation(): Analysis {
    const branches: Analysis[] = [this.sequence()]
    while (this.p[this.i] === '|') {
      this.i++
      branches.push(this.sequence())
    }
    const req = branches.some((b) => b.req === null) ? null : dedupe(branches.flatMap((b) => b.req!))
    const exact = branches.every((b) => b.exact) ? dedupe(branches.flatMap((b) => b.exact!)) : null
    return { req, exact: exact && exact.length <= EXACT_CAP ? exact : null }
  }

  /** Whether the last atom read had a quantifier; `optional` when that was `?` (zero or one). */
  quantified = false
  optional = false

  /** Reads a quantifier after an atom; returns the least number of repetitions (1 when none). */
  quantifier(): number {
    const m = QUANTIFIER.exec(this.p.slice(this.i, this.i + 24))
    this.quantified = !!m
    this.optional = m?.[0][0] === '?'
    if (!m) return 1
    this.i += m[0].length
    const q = m[0][0]
    if (q === '?' || q === '*') return 0
    if (q === '+') return 1
    return Number(m[1])
  }

  /**
   * A sequence requires the best of its factors: each maximal stretch of consecutive exact atoms (its
   * language: the product of theirs, e.g. `S(?:3[78]0|670)` -> s370, s380, s670), and each inexact group
   * that must occur (its own requirement).
   */
  sequence(): Analysis {
    let best: Requirement = null
    let segment: string[] | null = null
    let whole: string[] | null = ['']
    const flush = () => {
      if (segment && segment.every((s) => s.length > 0 && s !== TEXT_START)) best = better(best, shortest(segment))
      segment = null
    }
    const extend = (set: string[]) => {
      if (segment && segment.length * set.length <= EXACT_CAP) segment = dedupe(product(segment, set))
      else {
        flush()
        segment = set
      }
    }
    /** One atom with its language (`set`, null when inexact) and its inner requirement. */
    const atom = (set: string[] | null, inner: Requirement, zeroWidth = false) => {
      const min = this.quantifier()
      if (!zeroWidth && set && this.optional) {
        // `x?`: its language is x's and the empty string, so the stretch goes on (`Le ?X` -> lex, le x).
        const maybe = dedupe(['', ...set])
        extend(maybe)
        if (whole) whole = whole.length * maybe.length <= EXACT_CAP ? dedupe(product(whole, maybe)) : null
        return
      }
      if (zeroWidth || min === 0) {
        flush()
        whole = null
        return
      }
      if (this.quantified || !set) {
        // Repeated (at least once) or inexact: what one occurrence requires, then the stretch ends.
        if (set) extend(set)
        flush()
        if (!set) best = better(best, inner)
        whole = null
        return
      }
      extend(set)
      if (whole) whole = whole.length * set.length <= EXACT_CAP ? dedupe(product(whole, set)) : null
    }
    while (this.i < this.p.length) {
      const c = this.p[this.i]!
      if (c === '|' || c === ')') break
      if (c === '(') {
        this.i++
        let lookaround = false
        if (this.p[this.i] === '?') {
          const kind = this.p.slice(this.i, this.i + 3)
          if (kind.startsWith('?:')) this.i += 2
          else if (kind.startsWith('?=') || kind.startsWith('?!')) (this.i += 2), (lookaround = true)
          else if (kind === '?<=' || kind === '?<!') (this.i += 3), (lookaround = true)
          else if (kind.startsWith('?<'))
            this.i = this.p.indexOf('>', this.i) + 1 // named group
          else throw new Error(`unsupported group at ${this.i}`)
        }
        const inner = this.alternation()
        if (this.p[this.i] !== ')') throw new Error(`unbalanced group at ${this.i}`)
        this.i++
        atom(inner.exact, inner.req, lookaround)
        continue
      }
      if (c === '[') {
        atom(this.classSet(), null)
        continue
      }
      if (c === '\\') {
        const e = this.p[this.i + 1] ?? ''
        this.i += 2
        if (/[dDwWsSbBntrfv0-9cxuk]/.test(e)) {
          if (e === 'x') this.i += 2
          else if (e === 'u') this.i += this.p[this.i] === '{' ? this.p.indexOf('}', this.i) - this.i + 1 : 4
          else if (e === 'c') this.i += 1
          atom(null, null, e === 'b' || e === 'B')
        } else atom(plain(e) ? [e.toLowerCase()] : null, null)
        continue
      }
      this.i++
      if (c === '^') atom([TEXT_START], null)
      else if (c === '$') atom(null, null, true)
      else atom(c !== '.' && plain(c) ? [c.toLowerCase()] : null, null)
    }
    flush()
    return { req: best, exact: whole }
  }

  /** Reads a character class; returns its members (lower case) when few and plain, else null. */
  classSet(): string[] | null {
    this.i++ // '['
    let negated = false
    if (this.p[this.i] === '^') (negated = true), this.i++
    const members: string[] = []
    let exact = !negated
    // JavaScript, unlike PCRE, has no leading-`]` member: `[]` is an empty class.
    while (this.i < this.p.length && this.p[this.i] !== ']') {
      let ch = this.p[this.i]!
      this.i++
      if (ch === '\\') {
        const e = this.p[this.i] ?? ''
        this.i++
        if (/[dDwWsSbBntrfv0-9cxuk]/.test(e)) {
          exact = false
          if (e === 'x') this.i += 2
          else if (e === 'u') this.i += 4
          else if (e === 'c') this.i += 1
          continue
        }
        ch = e
      }
      if (this.p[this.i] === '-' && this.p[this.i + 1] !== ']' && this.i + 1 < this.p.length) {
        // A range a-z: exact only when short and plain.
        let to = this.p[this.i + 1]!
        this.i += 2
        if (to === '\\') {
          to = this.p[this.i] ?? ''
          this.i++
          if (/[dDwWsSbBntrfv0-9cxuk]/.test(to)) {
            exact = false
            continue
          }
        }
        const from = ch.charCodeAt(0)
        const until = to.charCodeAt(0)
        if (until - from >= CLASS_CAP || from < 0x20 || until >= 0x7f)
          exact = false // ASCII ranges only
        else for (let code = from; code <= until; code++) members.push(String.fromCharCode(code))
        continue
      }
      if (!plain(ch)) exact = false
      members.push(ch)
    }
    this.i++ // ']'
    const set = dedupe(members.map((m) => m.toLowerCase()))
    return exact && set.length > 0 && set.length <= CLASS_CAP ? set : null
  }
}

/** The literals one of which any match of `pattern` contains (lower case), or null when unknown. */
export function requiredLiterals(pattern: string): string[] | null {
  try {
    const w = new Walker(pattern)
    const { req } = w.alternation()
    if (w.i !== pattern.length) return null // a stray ')' : give up rather than guess
    return req && req.length ? req : null
  } catch {
    return null
  }
}
