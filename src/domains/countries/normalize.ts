/**
 * Text folding shared by the builder (which stores folded names) and the service (which folds `q`), so
 * both sides agree: accents dropped, case folded, punctuation turned into word breaks.
 */

/** Letters that Unicode decomposition leaves alone but that readers treat as plain Latin letters. */
const LETTERS: Record<string, string> = {
  ß: 'ss',
  æ: 'ae',
  ø: 'o',
  œ: 'oe',
  ł: 'l',
  đ: 'd',
  ð: 'd',
  þ: 'th',
  ı: 'i',
  ŀ: 'l',
  ħ: 'h',
  ŧ: 't',
}

/** `Côte d'Ivoire` -> `cote d ivoire`; `Åland` -> `aland`. */
export function fold(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[ßæøœłđðþıŀħŧ]/g, (c) => LETTERS[c]!)
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim()
}

/**
 * The searchable text of a record: each name folded, framed by spaces and separated by `|`, so a folded
 * query matches when ` query` occurs in it: a prefix of any word, or of a run of words within one name.
 */
export const searchText = (names: (string | null | undefined)[]) =>
  ' ' +
  [
    ...new Set(
      names
        .filter((n): n is string => !!n)
        .map(fold)
        .filter(Boolean),
    ),
  ].join(' | ') +
  ' '
