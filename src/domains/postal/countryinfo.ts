/**
 * GeoNames `countryInfo.txt`: ISO alpha-2 / alpha-3 codes, English names, and the postal code format
 * and regex of each country. The postal domain reads its own copy so it needs no other domain.
 */
import { postalFormat } from '../../lib/postal-formats.ts'

export interface CountryPostalInfo {
  alpha2: string
  alpha3: string
  name: string
  /** GeoNames pattern (`@# #@@|…`), '' when the country has no postal system. */
  geonamesFormat: string
  geonamesRegex: string
  /** The pattern codes are laid out in: GeoNames' format, corrected where formats.ts says. */
  pattern: string
  /** SPEC notation (`A# #AA / …`), null without a postal system; corrected where formats.ts says. */
  format: string | null
  /** Full-match regex derived from GeoNames' (see formats.ts, corrections included), null without a postal system. */
  regex: string | null
}

/** Parses countryInfo.txt (tab-separated, `#` comment lines, CRLF as upstream ships it). */
export function parseCountryInfo(text: string): CountryPostalInfo[] {
  const out: CountryPostalInfo[] = []
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r$/, '')
    if (!line || line.startsWith('#')) continue
    const c = line.split('\t')
    if (c.length < 15 || !/^[A-Z]{2}$/.test(c[0]!) || !/^[A-Z]{3}$/.test(c[1]!))
      throw new Error(`countryInfo.txt: unexpected line ${JSON.stringify(line.slice(0, 80))}`)
    const geonamesFormat = c[13]!.trim()
    const geonamesRegex = c[14]!.trim()
    out.push({
      alpha2: c[0]!,
      alpha3: c[1]!,
      name: c[4]!.trim(),
      geonamesFormat,
      geonamesRegex,
      ...postalFormat(c[0]!, geonamesFormat, geonamesRegex),
    })
  }
  if (out.length < 200) throw new Error(`countryInfo.txt: only ${out.length} countries found; the file looks truncated`)
  return out
}
