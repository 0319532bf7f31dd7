/**
 * The highlighted snippet of a search hit, made from the verse's display text (the index holds only
 * the folded form): every run of words that matches a term of the query is wrapped in `<mark>` and
 * `</mark>`. The rest of the text is HTML-escaped (`&`, `<`, `>`), so the snippet can be inserted into a
 * page as HTML. A verse longer than SNIPPET_CHARS is cut around its first match, with `…` at the cuts.
 */
import { GenerationalCache } from '../../lib/cache.ts'
import { CJK, foldText, wordsOf } from './fold.ts'
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
const ASCII_WORD = /^[A-Za-z0-9]+$/

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

function wordsWithOffsets(text: string): Word[] {
  const out: Word[] = []
  for (const m of text.matchAll(DISPLAY_WORD)) {
    if (!CJK.test(m[0])) {
      const parts = foldWord(m[0])
      if (parts.length <= 1) {
        if (parts.length) out.push({ start: m.index!, end: m.index! + m[0].length, folded: parts })
        continue
      }
    }
    // CJK runs (and words that fold into several) are one index word per character: each character
    // gets its own span.
    let at = m.index!
    for (const ch of m[0]) {
      const f = foldWord(ch)
      if (f.length) out.push({ start: at, end: at + ch.length, folded: f })
      at += ch.length
    }
  }
  return out
}

/** Flattened index words of the display words, with the display word each came from. */
function flatten(words: Word[]) {
  const flat: { w: string; of: number }[] = []
  words.forEach((word, i) => word.folded.forEach((w) => flat.push({ w, of: i })))
  return flat
}

export function snippet(text: string, terms: Term[]): string {
  const words = wordsWithOffsets(text)
  const flat = flatten(words)
  const marked = new Set<number>()
  for (const term of terms) {
    const n = term.words.length
    for (let i = 0; i + n <= flat.length; i++) {
      let ok = true
      for (let k = 0; k < n && ok; k++) {
        const w = flat[i + k]!.w
        const want = term.words[k]!
        ok = k === n - 1 && term.prefix ? w.startsWith(want) : w === want
      }
      if (ok) for (let k = 0; k < n; k++) marked.add(flat[i + k]!.of)
    }
  }
  // Spans of consecutive marked words (with what lies between them) become one <mark>.
  const spans: [number, number][] = []
  for (const i of [...marked].sort((a, b) => a - b)) {
    const w = words[i]!
    const last = spans[spans.length - 1]
    if (last && marked.has(i - 1) && /^\s*$/.test(text.slice(last[1], w.start))) last[1] = w.end
    else spans.push([w.start, w.end])
  }
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
  let out = from > 0 ? '…' : ''
  let at = from
  for (const [s, e] of spans) {
    if (e <= from || s >= to) continue
    const a = Math.max(s, from)
    const b = Math.min(e, to)
    out += escapeHtml(text.slice(at, a)) + '<mark>' + escapeHtml(text.slice(a, b)) + '</mark>'
    at = b
  }
  out += escapeHtml(text.slice(at, to)) + (to < text.length ? '…' : '')
  return out
}
