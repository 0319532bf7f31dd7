/**
 * Limits on the shape of a JSON request body, checked on its text before it is parsed or validated.
 * Schema validation recurses into the value (10,000 nested arrays overflowed the stack: a 500) and a
 * failed validation serializes it (10,000 nested objects in 59 KB blocked the event loop for 1-2 s and
 * took 300-680 MB), so what reaches them must be shallow and of bounded size. No endpoint takes more than
 * six levels; the largest body is a postal polygon at its 10,000-position limit (about 30,000 values),
 * which must still reach the domain to get its own 422.
 *
 * The same pass finds a per-item route's list (route-facts.ts `cost`) and where it passes one item over its maximum, so
 * a list far over it is never parsed past that point: a 1 MB bulk of 12,000 user agents (the limit is 100)
 * is refused from 101 of them, by the same check, with the same problem, for a few µs of parsing instead of
 * ~3 ms with the event loop held (large-bodies.ts). The pass itself can be made in parts (`advance`).
 */
import { badRequest, invalid } from '../../lib/errors.ts'
import type { PerItemCost } from '../routing/route-facts.ts'

export const JSON_LIMITS = { depth: 32, values: 50_000 } as const

const QUOTE = 34
const BACKSLASH = 92
const OPEN_ARRAY = 91
const OPEN_OBJECT = 123
const CLOSE_ARRAY = 93
const CLOSE_OBJECT = 125
const COMMA = 44
const COLON = 58

/**
 * One pass over a JSON text, resumable: throws a 400 when the text nests deeper than JSON_LIMITS.depth or holds more
 * than JSON_LIMITS.values values (counted as containers plus separators; string contents are skipped). Malformed
 * text is left to JSON.parse.
 *
 * With `list` (a per-item route's declaration), each occurrence of its list (the body itself when the field
 * is '', else the root object's member of that name) that holds more than `max + 1` items is noted from the
 * separator after item `max + 1` to its closing bracket; `parseable()` is the text without those spans. Its
 * value is the body's with such a list cut to `max + 1` items, so it fails the route's schema on the list's
 * length as the whole would, with the same errors for the items kept. (A text malformed only inside a span
 * left out is then refused for the list's length rather than as malformed: either is a refusal.)
 */
export class JsonScan {
  private at = 0
  private depth = 0
  private values = 1
  /** Where the last string at depth 1 (a member name when a colon follows) starts and ends. */
  private nameFrom = -1
  private nameTo = -1
  private nameIsList = false
  private inString = false
  /** Depth inside the list being counted (0: none), its separators so far, and where its cut starts. */
  private listDepth = 0
  private items = 0
  private cutFrom = -1
  private readonly cuts: [number, number][] = []

  constructor(
    private readonly text: string,
    private readonly list?: PerItemCost,
  ) {}

  get done(): boolean {
    return this.at >= this.text.length
  }

  /** Scans up to `chars` more characters (all that are left by default). */
  advance(chars = Infinity): void {
    const { text, list } = this
    const limits = JSON_LIMITS
    const end = Math.min(text.length, this.at + chars)
    // Locals for the loop: fields read and written per character made the pass twice as slow.
    let { depth, values, listDepth, items, inString } = this
    const cutAt = list ? list.max + 2 : 0
    let i = this.at
    // `inString`: the last pass stopped inside a string; `i` starts there (and at a string's first character
    // below), so that a string longer than a pass is skipped in parts too.
    for (i = inString ? i - 1 : i; i < end; i++) {
      const c = inString ? QUOTE : text.charCodeAt(i)
      if (c === QUOTE) {
        if (!inString && depth === 1) this.nameFrom = i
        // Skip to the closing quote; a backslash escapes the next character.
        for (i++; i < end; i++) {
          const d = text.charCodeAt(i)
          if (d === BACKSLASH) i++
          else if (d === QUOTE) break
        }
        inString = i >= end
        if (inString) break
        if (depth === 1) this.nameTo = i
      } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
        if (list && c === OPEN_ARRAY && !listDepth && (list.field === '' ? depth === 0 : depth === 1 && this.nameIsList)) {
          listDepth = depth + 1
          items = 1
        }
        if (depth === 1) this.nameIsList = false
        if (++depth > limits.depth)
          throw badRequest(`The request body nests deeper than ${limits.depth} levels.`, {
            errors: [{ in: 'body', field: '(root)', message: `nested deeper than ${limits.depth} levels` }],
          })
        values++
      } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
        if (depth === listDepth) {
          if (this.cutFrom >= 0) this.cuts.push([this.cutFrom, i])
          this.cutFrom = -1
          listDepth = 0
        }
        depth--
      } else if (c === COMMA) {
        if (++values > limits.values)
          throw badRequest(`The request body holds more than ${limits.values} values.`, {
            errors: [{ in: 'body', field: '(root)', message: `more than ${limits.values} values` }],
          })
        if (depth === listDepth && ++items === cutAt) this.cutFrom = i
      } else if (c === COLON && depth === 1 && list && list.field !== '') this.nameIsList = this.nameAtIs(list.field)
    }
    this.at = Math.min(i, text.length)
    this.depth = depth
    this.values = values
    this.listDepth = listDepth
    this.items = items
    this.inString = inString
  }

  /** The text to parse: the whole, or without the spans of over-long lists (above). */
  parseable(): string {
    if (!this.cuts.length) return this.text
    let kept = ''
    let from = 0
    for (const [cut, to] of this.cuts) {
      kept += this.text.slice(from, cut)
      from = to
    }
    return kept + this.text.slice(from)
  }

  /** Whether the last string at depth 1 is `name` (escapes read as JSON reads them). */
  private nameAtIs(name: string): boolean {
    if (this.nameFrom < 0) return false
    const raw = this.text.slice(this.nameFrom + 1, this.nameTo)
    if (!raw.includes('\\')) return raw === name
    try {
      return JSON.parse(`"${raw}"`) === name
    } catch {
      return false
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
