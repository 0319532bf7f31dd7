/**
 * "Did you mean": the nearest known name to a mistyped or synonymous one, for the CLI's unknown commands, flags
 * and settings and the API's unknown body members, query parameters, fields, routes and zones (one rule for all,
 * so a typo reads the same everywhere). Only ever computed for a refusal, never on a request that succeeds.
 */

/** Edit distance, for "did you mean"; names are short (< 64 characters), so the quadratic table is tiny. */
export function distance(a: string, b: string): number {
  if (a.length > 64 || b.length > 64) return Math.abs(a.length - b.length) + 64
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    prev = row
  }
  return prev[b.length]!
}

/**
 * Names that mean the same as an API name but are spelled nothing like it (`lon` is two edits from `lat`,
 * and three from `lng`): each group is one meaning, and a name of a group suggests the group's name the
 * input takes. The API's names (the routes' schemas) and what callers of other geo, search and hashing
 * APIs send instead; a group's names are never two names one input takes (QR's `latitude` and postal's `lat`
 * are different routes).
 */
const SYNONYM_GROUPS: readonly (readonly string[])[] = [
  ['lng', 'lon', 'long', 'longitude'],
  ['lat', 'latitude'],
  ['radius_km', 'radius', 'distance', 'distance_km', 'km'],
  ['q', 'query', 'search', 'term', 'keywords', 'keyword'],
  ['input', 'data', 'value', 'plaintext', 'string'],
  ['ip', 'ip_address', 'ipaddress', 'addr'],
  ['ips', 'ip_list', 'addresses', 'ip_addresses'],
  ['email', 'email_address', 'mail'],
  ['emails', 'email_list', 'addresses'],
  ['ua', 'user_agent', 'useragent', 'user-agent'],
  ['ua_list', 'user_agents', 'useragents', 'uas'],
  ['country_code', 'country', 'cc', 'iso_code', 'alpha_2'],
  ['postal_code', 'postcode', 'zip', 'zipcode', 'zip_code', 'postalcode'],
  ['limit', 'per_page', 'page_size', 'max_results', 'count'],
  ['offset', 'skip', 'start'],
  ['fields', 'select', 'only'],
  ['error_correction', 'ecc', 'ec_level', 'ecl'],
]

const SYNONYMS = new Map<string, (readonly string[])[]>()
for (const group of SYNONYM_GROUPS) for (const name of group) SYNONYMS.set(name, [...(SYNONYMS.get(name) ?? []), group])

/** The candidate that means what `name` means (SYNONYM_GROUPS), when exactly one of them does. */
export function synonym(name: string, candidates: Iterable<string>): string | undefined {
  const groups = SYNONYMS.get(name.toLowerCase())
  if (!groups) return undefined
  const found = [...candidates].filter((c) => groups.some((g) => g.includes(c.toLowerCase())) && c.toLowerCase() !== name.toLowerCase())
  return found.length === 1 ? found[0] : undefined
}

/** The closest candidate within a few edits (or one meaning the same, SYNONYM_GROUPS), or undefined. */
export function nearest(name: string, candidates: Iterable<string>): string | undefined {
  const list = [...candidates]
  const same = synonym(name, list)
  if (same) return same
  let best: string | undefined
  let bestDistance = Infinity
  for (const c of list) {
    const d = distance(name.toLowerCase(), c.toLowerCase())
    if (d < bestDistance) [best, bestDistance] = [c, d]
  }
  return bestDistance <= Math.max(2, Math.floor(name.length / 3)) ? best : undefined
}

export const didYouMean = (name: string, candidates: Iterable<string>) => {
  const n = nearest(name, candidates)
  return n ? ` (did you mean ${n}?)` : ''
}

/**
 * Why a name that is not one of `known` is refused (an API body member, a query parameter): the nearest
 * known name when one is close, else the names there are. The last dotted segment of `field` is the name.
 */
export function unknownName(field: string, known: readonly string[], what: 'member' | 'query parameter' = 'member'): string {
  if (!known.length)
    return `unknown ${what}: ${what === 'member' ? 'this object takes no members' : 'this route takes no query parameters'}`
  const near = nearest(field.slice(field.lastIndexOf('.') + 1), known)
  return near ? `unknown ${what} (did you mean ${near}?)` : `unknown ${what}; known: ${known.join(', ')}`
}
