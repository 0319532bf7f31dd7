/**
 * Postal code formats: GeoNames countryInfo patterns (`#` digit, `@` letter, `|` between alternatives)
 * turned into the SPEC's notation (`#`, `A`, ` / `), the regex each country is checked against, and
 * the normalisation that lets `sw1a1aa`, `FI-00100` or `1000001` find `SW1A 1AA`, `00100`, `1000-001`.
 */

/**
 * Where GeoNames' countryInfo contradicts itself or the postal codes GeoNames itself publishes: the
 * correction, keyed by alpha-2. `pattern` replaces the format (GeoNames notation), `regex` the regex.
 * Each is checked against real codes (test/domains/postal/formats.test.ts) and listed in docs/postal.md.
 */
export const FORMAT_CORRECTIONS: Readonly<Record<string, { pattern?: string; regex?: string }>> = {
  // Format `##### #####`, regex `^\d{5}-\d{5}$`: a space in one, a dash in the other. The format is what
  // the API shows and lays codes out in (a dash written where it has a space is still accepted and
  // normalised to the space), so the regex follows it.
  AE: { regex: '^\\d{5} \\d{5}$' },
  // Regex `^(?:AZ)*(\d{4})$`, Azerbaijan's prefix, under the format `AI-####`: the one real code, AI-2640, failed.
  AI: { regex: '^(?:AI-)?(\\d{4})$' },
  // Six digits in the regex, five in the format and in every GeoNames HN row.
  HN: { regex: '^(\\d{5})$' },
  // The regex requires the +4; the Marshall Islands' ZIP codes (GeoNames' MH rows) are five digits, the +4
  // optional, as the US, PR and VI regexes have it.
  MH: { regex: '^969\\d{2}(-\\d{4})?$' },
  // Format and regex `@####@`, a scheme never brought in; Ecuador's codes since 2008, and every GeoNames EC
  // row, are six digits.
  EC: { pattern: '######', regex: '^(\\d{6})$' },
}

/**
 * A country's layout pattern (GeoNames notation), SPEC format and full-match regex from its countryInfo
 * columns, corrected where FORMAT_CORRECTIONS says. The build stores the result and the service derives it
 * again from the stored upstream columns, so an artifact built before a correction is served corrected.
 */
export function postalFormat(
  alpha2: string,
  geonamesFormat: string,
  geonamesRegex: string,
): { pattern: string; format: string | null; regex: string | null } {
  const fix = FORMAT_CORRECTIONS[alpha2]
  const pattern = fix?.pattern ?? geonamesFormat
  if (!pattern) return { pattern, format: null, regex: null }
  const regex = fix?.regex ?? (geonamesRegex || pattern.replace(/#/g, '\\d').replace(/@/g, '[A-Z]'))
  return { pattern, format: specFormat(pattern), regex: effectiveRegex(regex) }
}

/** GeoNames `AD###|@@ ##` -> SPEC `AD### / AA ##`. Literal letters stay as they are. */
export const specFormat = (geonames: string): string | null =>
  geonames.trim()
    ? geonames
        .split('|')
        .map((alt) => alt.trim().replace(/@/g, 'A'))
        .join(' / ')
    : null

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
export const patternsOf = (geonames: string) =>
  geonames
    .split('|')
    .map((p) => p.trim())
    .filter(Boolean)

const isDigit = (c: string) => c >= '0' && c <= '9'
const isLetter = (c: string) => c >= 'A' && c <= 'Z'
const SEPARATOR = /[\s\-‐‑‒–—]+/g

/** Positions in the compact code before which a separator stands (`SW1A 1AA` -> {4}). */
function separatorPositions(spaced: string): Set<number> {
  const out = new Set<number>()
  let i = 0
  let pending = false
  for (const ch of spaced) {
    if (ch === ' ' || ch === '-') pending = true
    else {
      if (pending && i > 0) out.add(i)
      pending = false
      i++
    }
  }
  return out
}

/**
 * `compact` (no separators) laid out as `pattern` when every character fits and the separators the
 * caller wrote (`written`, positions in `compact`) stand where the pattern has one; otherwise null.
 * So `1000001` and `1000 001` become `1000-001` in Portugal, but `1000-001` is never moved to
 * `100-0001` in Japan.
 */
function layout(compact: string, pattern: string, written: Set<number>): string | null {
  const slots = pattern.replace(/[ -]/g, '')
  if (slots.length !== compact.length) return null
  const allowed = separatorPositions(pattern)
  for (const p of written) if (!allowed.has(p)) return null
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

const shifted = (positions: Set<number>, by: number) => new Set([...positions].map((p) => p + by).filter((p) => p > 0))

/**
 * Spellings of `input` to try, most specific first: laid out as each of the country's patterns (with
 * the pattern's literal prefix added or the country's own code removed where that makes it fit), then
 * the upper-cased input with single spaces.
 */
export function codeCandidates(input: string, country: string, geonamesFormat: string): string[] {
  const { laidOut, asWritten } = spellings(input, country, geonamesFormat)
  return laidOut.includes(asWritten) ? laidOut : [...laidOut, asWritten]
}

/**
 * Does the code match the country's regex? Laid-out spellings are also tried without their
 * separators, because some GeoNames regexes omit a separator their own format shows (LV `LV-####`
 * with regex `(?:LV)*(\d{4})`); the input as written is tried as it is. Returns the laid-out
 * spelling that matched, or null.
 */
export function matchFormat(input: string, country: string, geonamesFormat: string, re: RegExp): string | null {
  const { laidOut, asWritten } = spellings(input, country, geonamesFormat)
  for (const c of laidOut) if (re.test(c) || re.test(c.replace(/[ -]/g, ''))) return c
  return re.test(asWritten) ? asWritten : null
}

function spellings(input: string, country: string, geonamesFormat: string): { laidOut: string[]; asWritten: string } {
  const upper = input
    .normalize('NFKC')
    .trim()
    .toUpperCase()
    .replace(/[‐‑‒–—]/g, '-')
    .replace(/\s+/g, ' ')
  const compact = upper.replace(SEPARATOR, '')
  const written = separatorPositions(upper)
  const out: string[] = []
  const add = (s: string | null) => {
    if (s && !out.includes(s)) out.push(s)
  }
  const bare: [string, Set<number>][] = [[compact, written]]
  if (compact.startsWith(country) && compact.length > country.length)
    bare.push([compact.slice(country.length), shifted(written, -country.length)])
  for (const pattern of patternsOf(geonamesFormat)) {
    const prefix = literalPrefix(pattern).replace(/[ -]/g, '')
    for (const [c, seps] of bare) {
      add(layout(c, pattern, seps))
      if (prefix && !c.startsWith(prefix)) add(layout(prefix + c, pattern, shifted(seps, prefix.length)))
    }
  }
  // Separators are never dropped or moved outside a pattern.
  return { laidOut: out, asWritten: upper }
}

/**
 * The district part of a laid-out code (`SW1A 1AA` -> `SW1A`, `90210-1234` -> `90210`): what the
 * short GeoNames files for GB, CA and NL hold, and the 5-digit ZIP of a ZIP+4.
 */
export function districtOf(code: string): string | null {
  const m = /^([^ -]{2,})[ -]./.exec(code)
  return m ? m[1]! : null
}
