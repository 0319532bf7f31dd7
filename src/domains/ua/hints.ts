/**
 * Client Hints as the API accepts them: the SPEC's eight headers plus `Sec-CH-UA-Full-Version-List`,
 * names matched case-insensitively. Values are bounded and checked before any regex sees them; other
 * names are ignored (a caller may forward all of its request headers), so they never change an answer
 * or the cache key.
 */
import { invalid } from '../../lib/errors.ts'

/** Accepted hint names, lower case -> the spelling used in answers and errors. */
export const HINT_NAMES = new Map<string, string>(
  [
    'Sec-CH-UA',
    'Sec-CH-UA-Mobile',
    'Sec-CH-UA-Platform',
    'Sec-CH-UA-Platform-Version',
    'Sec-CH-UA-Arch',
    'Sec-CH-UA-Bitness',
    'Sec-CH-UA-Model',
    'Sec-CH-UA-Full-Version-List',
    'X-Requested-With',
  ].map((n) => [n.toLowerCase(), n]),
)

/** Longest accepted hint value (a full version list of a dozen brands is ~300 characters). */
export const HINT_MAX_LENGTH = 1024
/** Most members of `headers` looked at (forwarded request headers included). */
export const HEADERS_MAX_MEMBERS = 64

/** Hints that matter, by lower-case name, in a fixed order; `key` identifies them for the cache. */
export interface Hints {
  values: Map<string, string>
  key: string
}

const controlCharacter = /[\u0000-\u001f\u007f]/

/**
 * Checks and normalizes `headers` (the request member); `field` is its name in errors. Returns null when
 * no accepted hint has a non-empty value.
 */
export function readHints(headers: unknown, field = 'headers'): Hints | null {
  if (headers === undefined || headers === null) return null
  if (typeof headers !== 'object' || Array.isArray(headers)) throw invalid(field, 'expected an object of Client Hint headers (name: value)')
  const entries = Object.entries(headers)
  if (entries.length > HEADERS_MAX_MEMBERS) throw invalid(field, `at most ${HEADERS_MAX_MEMBERS} members`)
  const values = new Map<string, string>()
  for (const [name, value] of entries) {
    const lower = name.toLowerCase()
    const canonical = HINT_NAMES.get(lower)
    if (!canonical) continue
    const path = `${field}.${name}`
    if (typeof value !== 'string')
      throw invalid(path, `expected a string, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`)
    if (value.length > HINT_MAX_LENGTH) throw invalid(path, `longer than ${HINT_MAX_LENGTH} characters`)
    if (controlCharacter.test(value)) throw invalid(path, 'holds a control character')
    if (values.has(lower)) throw invalid(path, `${canonical} is given twice (names are case-insensitive)`)
    const trimmed = value.trim()
    if (lower === 'sec-ch-ua-mobile' && trimmed !== '' && trimmed !== '?0' && trimmed !== '?1')
      throw invalid(path, 'expected ?0 or ?1 (a structured-field boolean)')
    if (trimmed !== '') values.set(lower, trimmed)
  }
  if (!values.size) return null
  const ordered = new Map([...HINT_NAMES.keys()].filter((n) => values.has(n)).map((n) => [n, values.get(n)!]))
  return { values: ordered, key: [...ordered].map(([n, v]) => `${n}=${v}`).join('\n') }
}

/** The engine's input: header names in lower case (src/vendor/node-device-detector/client-hints.js reads them so). */
export const engineHeaders = (hints: Hints) => Object.fromEntries(hints.values)
