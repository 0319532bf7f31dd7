/**
 * Place-name folding for accent- and case-insensitive prefix search: the build stores the folded name
 * in an indexed column, and a query is folded the same way, so `zurich` finds `Zürich` with an index
 * range scan instead of a table scan.
 */

/** Letters that Unicode decomposition does not split into a base letter plus a mark. */
const SPECIAL: Record<string, string> = {
  ß: 'ss',
  ẞ: 'ss',
  æ: 'ae',
  Æ: 'ae',
  œ: 'oe',
  Œ: 'oe',
  ø: 'o',
  Ø: 'o',
  ł: 'l',
  Ł: 'l',
  đ: 'd',
  Đ: 'd',
  ð: 'd',
  Ð: 'd',
  þ: 'th',
  Þ: 'th',
  ı: 'i',
  ħ: 'h',
  Ħ: 'h',
  ŧ: 't',
  Ŧ: 't',
  ŀ: 'l',
  Ŀ: 'l',
}
const SPECIAL_RE = new RegExp(`[${Object.keys(SPECIAL).join('')}]`, 'g')

export function foldName(name: string): string {
  return name
    .replace(SPECIAL_RE, (c) => SPECIAL[c]!)
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[’'`]/g, "'")
    .replace(/\s+/g, ' ')
    .trim()
}

/** The smallest string greater than every string that starts with `prefix` (for `>= p AND < next`). */
export const prefixEnd = (prefix: string) => prefix + '\u{10FFFF}'
