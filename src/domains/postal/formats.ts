/**
 * Postal code formats: GeoNames countryInfo patterns (`#` digit, `@` letter, `|` between alternatives)
 * turned into the SPEC's notation (`#`, `A`, ` / `), the regex each country is checked against, and
 * the normalisation that lets `sw1a1aa`, `FI-00100` or `1000001` find `SW1A 1AA`, `00100`, `1000-001`.
 */

/** GeoNames `AD###|@@ ##` -> SPEC `AD### / AA ##`. Literal letters stay as they are. */
export const specFormat = (geonames: string): string | null =>
  geonames.trim() ? geonames.split('|').map((alt) => alt.trim().replace(/@/g, 'A')).join(' / ') : null

/**
 * The regex a code must match as a whole. GeoNames publishes some without anchors (`96799`,
 * `FIQQ 1ZZ`), one without `$` (IE) and one whose `^a|b$` anchors only one side of each alternative
 * (GB); wrapping the body in `^(?:…)$` makes every one a full-string match, as the format intends.
 */
export function effectiveRegex(geonames: string): string | null {
  let body = geonames.trim()
  if (!body) return null
  if (body.startsWith('^')) body = body.slice(1)
  if (body.endsWith('$') && !body.endsWith('\\$')) body = body.slice(0, -1)
  return `^(?:${body})$`
}

/** The GeoNames alternatives of a format (`@# #@@|@## #@@` -> two patterns). */
export const patternsOf = (geonames: string) => geonames.split('|').map((p) => p.trim()).filter(Boolean)

const isDigit = (c: string) => c >= '0' && c <= '9'
const isLetter = (c: string) => c >= 'A' && c <= 'Z'
const SEPARATOR = /[\s\-‐‑‒–—]+/g

/** `compact` (no separators) laid out as `pattern` when every character fits; otherwise null. */
function layout(compact: string, pattern: string): string | null {
  const slots = pattern.replace(/[ -]/g, '')
  if (slots.length !== compact.length) return null
  let out = ''
  let i = 0
  for (const p of pattern) {
    if (p === ' ' || p === '-') {
      out += p
      continue
    }
    const c = compact[i++]!
    if (p === '#' ? !isDigit(c) : p === '@' ? !isLetter(c) : p !== c) return null
    out += c
  }
  return out
}

/** Leading literal characters of a pattern (`LV-####` -> `LV-`, `AD###` -> `AD`). */
const literalPrefix = (pattern: string) => /^[^#@]*/.exec(pattern)![0].replace(/[ -]+$/, '')

/**
 * Spellings of `input` to try, most specific first: laid out as each of the country's patterns (with
 * the pattern's literal prefix added or the country's own code removed where that makes it fit), then
 * the upper-cased input with single spaces, then with no separators at all.
 */
export function codeCandidates(input: string, country: string, geonamesFormat: string): string[] {
  const upper = input.normalize('NFKC').trim().toUpperCase().replace(/[‐‑‒–—]/g, '-').replace(/\s+/g, ' ')
  const compact = upper.replace(SEPARATOR, '')
  const out: string[] = []
  const add = (s: string | null) => {
    if (s && !out.includes(s)) out.push(s)
  }
  const bare = [compact]
  if (compact.startsWith(country) && compact.length > country.length) bare.push(compact.slice(country.length))
  for (const pattern of patternsOf(geonamesFormat)) {
    const prefix = literalPrefix(pattern).replace(/[ -]/g, '')
    for (const c of bare) {
      add(layout(c, pattern))
      if (prefix && !c.startsWith(prefix)) add(layout(prefix + c, pattern))
    }
  }
  add(upper)
  add(compact)
  return out
}

/**
 * The district part of a laid-out code (`SW1A 1AA` -> `SW1A`, `90210-1234` -> `90210`): what the
 * short GeoNames files for GB, CA and NL hold, and the 5-digit ZIP of a ZIP+4.
 */
export function districtOf(code: string): string | null {
  const m = /^([^ -]{2,})[ -]./.exec(code)
  return m ? m[1]! : null
}
