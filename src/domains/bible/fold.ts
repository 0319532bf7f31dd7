/**
 * The search form of a text, used for the index and for queries alike: compatibility-decomposed,
 * diacritics removed (Latin, Greek and Cyrillic accents, Hebrew vowel points and cantillation, Arabic
 * harakat and tatweel; the kana voicing marks stay, they change the word), lower-cased, a few letters
 * that do not decompose spelled out (ß -> ss, final ς -> σ), and every Chinese, Japanese or Korean character set apart
 * as a word of its own, so that FTS5's unicode61 tokenizer indexes it alone and a query for a run of
 * such characters is a phrase of single characters: a substring match, as a trigram index gives.
 */

const SPECIAL = new Map([
  ['ß', 'ss'],
  ['ẞ', 'ss'],
  ['æ', 'ae'],
  ['Æ', 'ae'],
  ['œ', 'oe'],
  ['Œ', 'oe'],
  ['ø', 'o'],
  ['Ø', 'o'],
  ['ł', 'l'],
  ['Ł', 'l'],
  ['đ', 'd'],
  ['Đ', 'd'],
  ['ð', 'd'],
  ['Ð', 'd'],
  ['þ', 'th'],
  ['Þ', 'th'],
  ['ı', 'i'],
  ['ħ', 'h'],
  ['Ħ', 'h'],
  // Greek final sigma: a query typed with σ at the end of a word finds ς.
  ['ς', 'σ'],
])
const SPECIAL_RE = /[ßẞæÆœŒøØłŁđĐðÐþÞıħĦς]/g
const MARKS = /(?![\u3099\u309A])[\p{M}\u0640\u200C\u200D]/gu
/** A Chinese, Japanese or Korean character: each is a word of its own in the index. */
export const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u3005\u30FC]/u
const CJK_CHAR = new RegExp(`(${CJK.source})`, 'gu')
/** A word as the tokenizer sees it: letters and digits (CJK characters each alone, see above). */
export const WORD = /[\p{L}\p{N}]+/gu

export function foldText(text: string): string {
  return text
    .replace(SPECIAL_RE, (c) => SPECIAL.get(c)!)
    .normalize('NFKD')
    .replace(MARKS, '')
    .normalize('NFC')
    .toLowerCase()
    .replace(CJK_CHAR, ' $1 ')
}

/** A word of ASCII letters and digits, which `foldText` only lower-cases: its lower case is its one index word. */
export const ASCII_WORD = /^[A-Za-z0-9]+$/

/** The words of a folded text, in order. */
export const wordsOf = (folded: string) => folded.match(WORD) ?? []
