/**
 * What the Bible build writes and the service reads, in one place both import (the service never loads
 * the build): the artifact's name and the layout facts of its tables.
 */
export const BIBLE_ARTIFACT = 'bible.sqlite'

/** Verse ids are `translation index << ID_SHIFT | position` (build.ts explains the layout). */
export const ID_SHIFT = 16

/**
 * How deep the stored ranking of a term in a translation goes (`search_terms.translations`, build.ts):
 * ten pages of the default 20; a page past it is ranked live.
 */
export const RANKED_IDS = 200

/** One translation's part of a term's statistics: its verses holding the term, and the first of them by BM25. */
export interface TermInTranslation {
  translation: number
  docs: number
  /** The first min(docs, RANKED_IDS) verses in FTS5's BM25 order, as positions (id minus the translation's first id), uint16 LE. */
  ranked: Uint8Array
}

/**
 * `search_terms.translations`: for each translation holding the term, in index order, the translation index
 * (one byte), its verse count (LEB128: 7 bits a byte, low first, high bit set on all but the last) and its
 * first min(count, RANKED_IDS) verses as uint16 LE positions (their number follows from the count).
 */
export function encodeTermTranslations(parts: readonly TermInTranslation[]): Uint8Array {
  const out: number[] = []
  for (const p of parts) {
    if (p.translation > 255) throw new Error(`translation index ${p.translation} does not fit search_terms.translations`)
    out.push(p.translation)
    for (let v = p.docs; ; v = Math.floor(v / 128)) {
      if (v < 128) {
        out.push(v)
        break
      }
      out.push((v % 128) | 128)
    }
    out.push(...p.ranked)
  }
  return Uint8Array.from(out)
}

export function decodeTermTranslations(bytes: Uint8Array): TermInTranslation[] {
  const parts: TermInTranslation[] = []
  for (let i = 0; i < bytes.length; ) {
    const translation = bytes[i++]!
    let docs = 0
    for (let scale = 1; ; scale *= 128) {
      // Bytes that end inside a count are not this layout: an error, never a loop past the end.
      if (i >= bytes.length) throw new Error('search_terms.translations ends inside a verse count')
      const b = bytes[i++]!
      docs += (b & 127) * scale
      if (b < 128) break
    }
    const end = i + Math.min(docs, RANKED_IDS) * 2
    parts.push({ translation, docs, ranked: bytes.subarray(i, end) })
    i = end
  }
  return parts
}
