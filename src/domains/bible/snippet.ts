/**
 * The highlighted snippet of a search hit, made from the verse's display text (the index holds only
 * the folded form): every run of words that matches a term of the query is wrapped in `<mark>` and
 * `</mark>`. The rest of the text is HTML-escaped (`&`, `<`, `>`), so the snippet can be inserted into a
 * page as HTML. A verse longer than SNIPPET_CHARS is cut around its first match, with `…` at the cuts.
 */
import { GenerationalCache } from '../../lib/cache.ts'
import { ASCII_WORD, CJK, foldText, wordsOf } from './fold.ts'
import type { Term } from './query.ts'

export const SNIPPET_CHARS = 240

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

interface Word {
  start: number
  end: number
  /** The word's folded form(s): one display word may fold into several index words (CJK, ß). */
  folded: string[]
}

const DISPLAY_WORD = /[\p{L}\p{N}\p{M}\u0640]+/gu

/**
 * Folded forms of display words, which repeat across hits (`und`, `der`, every Chinese character):
 * folding one costs a few µs (two normalisations), a lookup nothing. Keys come from the verse texts,
 * never from the caller; at most FOLD_CACHE_MAX words of at most 40 characters.
 */
const FOLD_CACHE_MAX = 50_000
const foldCache = new GenerationalCache<string, string[]>(FOLD_CACHE_MAX)

/** The index words of one display word; plain ASCII words (most of the English texts) only lower-case. */
function foldWord(word: string): string[] {
  if (ASCII_WORD.test(word)) return [word.toLowerCase()]
  let folded = foldCache.get(word)
  if (!folded) {
    folded = wordsOf(foldText(word))
    if (word.length <= 40) foldCache.set(word, folded)
  }
  return folded
}

/**
 * The display words of a text (their spans) and the index words they stand for, in order: `matches(i)`
 * says whether index word `i` is `want` (or starts with it), `of(i)` which display word it came from.
 */
interface TextWords {
  start: number[]
  end: number[]
  indexWords: number
  matches(i: number, want: string, prefix: boolean): boolean
  of(i: number): number
}

/**
 * A display word character outside ASCII. Texts without one have only ASCII words, whatever punctuation
 * they hold (`’`, `–`, `“`): 99.9% of the KJV's verses (92% are ASCII alone), all of the WEB's (61%).
 */
const NON_ASCII_WORD_CHAR = /[[\p{L}\p{N}\p{M}\u0640]--[\x00-\x7f]]/v

const isAsciiWordChar = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122)

/**
 * ASCII words: the same words as the general path gives, without its Unicode classes, fold cache and
 * objects per word: a display word is a run of letters and digits, its index word its lower case,
 * compared in place in the lower-cased text (punctuation keeps its length when lower-cased).
 */
function asciiWords(text: string, lower: string): TextWords {
  const start: number[] = []
  const end: number[] = []
  for (let i = 0; i < text.length; ) {
    if (!isAsciiWordChar(text.charCodeAt(i))) {
      i++
      continue
    }
    start.push(i)
    while (i < text.length && isAsciiWordChar(text.charCodeAt(i))) i++
    end.push(i)
  }
  return {
    start,
    end,
    indexWords: start.length,
    matches: (i, want, prefix) => {
      const length = end[i]! - start[i]!
      return (prefix ? length >= want.length : length === want.length) && lower.startsWith(want, start[i])
    },
    of: (i) => i,
  }
}

function unicodeWords(text: string): TextWords {
  const words: Word[] = []
  for (const m of text.matchAll(DISPLAY_WORD)) {
    if (!CJK.test(m[0])) {
      const parts = foldWord(m[0])
      if (parts.length <= 1) {
        if (parts.length) words.push({ start: m.index!, end: m.index! + m[0].length, folded: parts })
        continue
      }
    }
    // CJK runs (and words that fold into several) are one index word per character: each character
    // gets its own span.
    let at = m.index!
    for (const ch of m[0]) {
      const f = foldWord(ch)
      if (f.length) words.push({ start: at, end: at + ch.length, folded: f })
      at += ch.length
    }
  }
  const flat: { w: string; of: number }[] = []
  words.forEach((word, i) => word.folded.forEach((w) => flat.push({ w, of: i })))
  return {
    start: words.map((w) => w.start),
    end: words.map((w) => w.end),
    indexWords: flat.length,
    matches: (i, want, prefix) => (prefix ? flat[i]!.w.startsWith(want) : flat[i]!.w === want),
    of: (i) => flat[i]!.of,
  }
}

/** Which display words a term of the query covers (1 = marked). */
function mark(words: TextWords, terms: Term[]): Uint8Array {
  const marked = new Uint8Array(words.start.length)
  for (const term of terms) {
    const n = term.words.length
    for (let i = 0; i + n <= words.indexWords; i++) {
      let ok = true
      for (let k = 0; k < n && ok; k++) ok = words.matches(i + k, term.words[k]!, k === n - 1 && term.prefix)
      if (ok) for (let k = 0; k < n; k++) marked[words.of(i + k)] = 1
    }
  }
  return marked
}

const HTML_SPECIAL = /[&<>]/
const BLANK = /^\s*$/

/**
 * Spans of the marked display words, in text order; consecutive marked words with only blanks between them
 * are one span.
 */
function markedSpans(text: string, terms: Term[]): [number, number][] {
  const lower = NON_ASCII_WORD_CHAR.test(text) ? undefined : text.toLowerCase()
  const ascii = lower !== undefined && lower.length === text.length
  if (ascii && terms.every((t) => t.words.length === 1)) return mergeSpans(text, wordSpans(lower, terms))
  const words = ascii ? asciiWords(text, lower) : unicodeWords(text)
  const marked = mark(words, terms)
  const spans: [number, number][] = []
  for (let i = 0; i < marked.length; i++) if (marked[i]) spans.push([words.start[i]!, words.end[i]!])
  return mergeSpans(text, spans)
}

/**
 * The ASCII words that single-word terms mark, found in place in the lower-cased text (`indexOf` at word
 * starts), in text order: the same words as `asciiWords` and `mark` give, without listing every word of
 * the verse first (a snippet of an ASCII verse: ~2.9 -> ~1.1 µs in process).
 */
function wordSpans(lower: string, terms: Term[]): [number, number][] {
  const spans: [number, number][] = []
  for (const { words, prefix } of terms) {
    const want = words[0]!
    for (let at = lower.indexOf(want); at >= 0; at = lower.indexOf(want, at + 1)) {
      if (at > 0 && isAsciiWordChar(lower.charCodeAt(at - 1))) continue
      let end = at + want.length
      if (end < lower.length && isAsciiWordChar(lower.charCodeAt(end))) {
        if (!prefix) continue
        while (end < lower.length && isAsciiWordChar(lower.charCodeAt(end))) end++
      }
      spans.push([at, end])
    }
  }
  // Several terms may mark the same word (`lord lor*`); each word is one span.
  if (terms.length > 1) spans.sort((a, b) => a[0] - b[0])
  return spans.filter((s, i) => i === 0 || s[0] !== spans[i - 1]![0])
}

/** Marked words in text order, those with only blanks between them joined into one span. */
function mergeSpans(text: string, words: [number, number][]): [number, number][] {
  const spans: [number, number][] = []
  for (const [start, end] of words) {
    const last = spans[spans.length - 1]
    if (last && BLANK.test(text.slice(last[1], start))) last[1] = end
    else spans.push([start, end])
  }
  return spans
}

export function snippet(text: string, terms: Term[]): string {
  const spans = markedSpans(text, terms)
  let from = 0
  let to = text.length
  if (text.length > SNIPPET_CHARS) {
    const first = spans[0]?.[0] ?? 0
    from = Math.max(0, first - Math.floor(SNIPPET_CHARS / 3))
    to = Math.min(text.length, from + SNIPPET_CHARS)
    // Cut at word boundaries.
    while (from > 0 && /\S/.test(text[from - 1]!) && first - from < SNIPPET_CHARS / 2) from--
    while (to < text.length && /\S/.test(text[to]!) && to - from < SNIPPET_CHARS + 40) to++
  }
  const html = HTML_SPECIAL.test(text) ? escapeHtml : (x: string) => x
  let out = from > 0 ? '…' : ''
  let at = from
  for (const [s, e] of spans) {
    if (e <= from || s >= to) continue
    const a = Math.max(s, from)
    const b = Math.min(e, to)
    out += html(text.slice(at, a)) + '<mark>' + html(text.slice(a, b)) + '</mark>'
    at = b
  }
  out += html(text.slice(at, to)) + (to < text.length ? '…' : '')
  return out
}
