/**
 * Limits on the shape of a JSON request body, checked on its text before it is parsed or validated.
 * Schema validation recurses into the value (10,000 nested arrays overflowed the stack: a 500) and a
 * failed validation serializes it (10,000 nested objects in 59 KB blocked the event loop for 1-2 s and
 * took 300-680 MB), so what reaches them must be shallow and of bounded size. No endpoint takes more than
 * six levels; the largest body is a postal polygon at its 10,000-position limit (about 30,000 values),
 * which must still reach the domain to get its own 422.
 */
import { badRequest, invalid } from '../lib/errors.ts'

export const JSON_LIMITS = { depth: 32, values: 50_000 } as const

const QUOTE = 34
const BACKSLASH = 92
const OPEN_ARRAY = 91
const OPEN_OBJECT = 123
const CLOSE_ARRAY = 93
const CLOSE_OBJECT = 125
const COMMA = 44

/**
 * Throws a 400 when the JSON text nests deeper than `depth` or holds more than `values` values (counted
 * as containers plus separators: one linear pass that skips string contents). Malformed text is left to
 * JSON.parse.
 */
export function checkJsonShape(text: string, limits: { depth: number; values: number } = JSON_LIMITS): void {
  let depth = 0
  let values = 1
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      // Skip to the closing quote; a backslash escapes the next character.
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i)
        if (d === BACKSLASH) i++
        else if (d === QUOTE) break
      }
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > limits.depth)
        throw badRequest(`The request body nests deeper than ${limits.depth} levels.`, {
          errors: [{ in: 'body', field: '(root)', message: `nested deeper than ${limits.depth} levels` }],
        })
      values++
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--
    else if (c === COMMA && ++values > limits.values) {
      throw badRequest(`The request body holds more than ${limits.values} values.`, {
        errors: [{ in: 'body', field: '(root)', message: `more than ${limits.values} values` }],
      })
    }
  }
}

/**
 * Member names no request body has a use for, and that turn harmless data into a crash: an own
 * `toString` that is not a function makes every `${value}` throw (Elysia builds its validation message
 * that way: a 500), and `__proto__`, `constructor` and `prototype` are how code that merges objects gets
 * polluted.
 */
const RESERVED = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf']

/** The first reserved member name anywhere in a parsed body, with its dotted path, or null. */
function reservedMember(value: unknown): string | null {
  const stack: [unknown, string][] = [[value, '']]
  while (stack.length) {
    const [node, path] = stack.pop()!
    if (typeof node !== 'object' || node === null) continue
    for (const key of Object.keys(node)) {
      const at = path ? `${path}.${key}` : key
      if (RESERVED.includes(key)) return at
      stack.push([(node as Record<string, unknown>)[key], at])
    }
  }
  return null
}

/**
 * A request body's members, checked: a text that mentions a reserved name (directly or through a \u
 * escape) is walked, and a body holding one is a 422 naming where.
 */
export function checkMemberNames(text: string, parsed: unknown): void {
  if (!text.includes('\\u') && !RESERVED.some((name) => text.includes(name))) return
  const found = reservedMember(parsed)
  if (found) throw invalid(found, `the member name ${JSON.stringify(found.split('.').pop())} is not accepted in a request body`)
}
