/**
 * What route handlers return, and how it becomes a response body in the caller's form.
 *
 * Handlers build their resource in the caller's form (they receive `form` in the context and call the
 * domain presenter), then return `one(item)` or `list(items, …)`. This file alone knows the two
 * wrappers of the SPEC ("Response forms") and applies `fields` to the resource, never to the wrapper.
 */
import type { ResponseForm } from '../../config.ts'
import { GenerationalCache } from '../../lib/cache.ts'
import { nearest } from '../../lib/did-you-mean.ts'
import { badRequest } from '../../lib/errors.ts'
import type { Problem } from './problem.ts'

export type { ResponseForm }

export const FORM_HEADER = 'x-response-form'

/**
 * Every JSON answer's body depends on the caller's X-Response-Form, and its coding on Accept-Encoding
 * (http/edge/compression.ts), so shared caches must key on both.
 */
export const JSON_HEADERS = { 'content-type': 'application/json', vary: 'X-Response-Form, Accept-Encoding' }

export interface ReplyOptions {
  /**
   * The data is one object served to every request that asks for it and never changed (the route memoizes
   * it): its JSON is made once and kept with it. Large bodies with text beyond Latin-1 gain most, as Bun's
   * JSON.stringify is several times slower on such strings (a country with its subdivisions: ~45 µs).
   */
  stable?: boolean
  /**
   * The data's JSON text, written by the domain from parts it keeps serialised (used unless `fields`
   * selects); it must equal `JSON.stringify(data)`, which its tests check.
   */
  json?: () => string
}

export class Reply {
  constructor(
    readonly kind: 'one' | 'list',
    readonly data: unknown,
    /** Sibling keys next to `data` in Form A. */
    readonly enveloped: Record<string, unknown>,
    /** Sibling keys next to `results` in Form B; `null` means Form B returns the item itself. */
    readonly bare: Record<string, unknown> | null,
    readonly options: ReplyOptions,
  ) {}
}

/** A single resource: Form A `{status, data, error}`, Form B the object itself. */
export const one = (item: unknown, options: ReplyOptions = {}) => new Reply('one', item, {}, null, options)

export interface ListMeta extends ReplyOptions {
  /** Total matches before paging. Form A: `total`; Form B: `count`. Omit for batch results. */
  total?: number
  /** Extra Form A siblings (e.g. `total_count`, `limit`, `offset` on postal nearby/within). */
  enveloped?: Record<string, unknown>
  /** Extra Form B siblings. */
  bare?: Record<string, unknown>
}

/**
 * A list: Form A `{status, data: [...], error, total?}`, Form B `{count?, results: [...]}`. `items` may be
 * null when `meta.json` gives them as JSON text (made off the event loop): they are then parsed only if
 * `fields` selects from them.
 */
export function list(items: unknown[] | null, meta: ListMeta = {}): Reply {
  if (!items && !meta.json) throw new TypeError('a list needs its items or their JSON')
  return new Reply(
    'list',
    items,
    { ...(meta.total !== undefined ? { total: meta.total } : {}), ...meta.enveloped },
    { ...(meta.total !== undefined ? { count: meta.total } : {}), ...meta.bare },
    { stable: meta.stable, json: meta.json },
  )
}

export const RESPONSE_FORMS: readonly ResponseForm[] = ['enveloped', 'bare']

/**
 * A 400 for an `X-Response-Form` that names neither form (any case, spaces around): answering in the
 * default form would leave the caller parsing a shape it did not ask for. An empty value is no value.
 */
export function checkFormHeader(request: Request): void {
  const asked = request.headers.get(FORM_HEADER)?.trim().toLowerCase()
  if (asked && !(RESPONSE_FORMS as readonly string[]).includes(asked))
    throw badRequest(`X-Response-Form must be ${RESPONSE_FORMS.join(' or ')}; got "${asked.slice(0, 40)}".`, {
      errors: [{ in: 'header', field: 'X-Response-Form', message: `expected ${RESPONSE_FORMS.join(' or ')}` }],
    })
}

/** The form for this request: `X-Response-Form` header, else the deployment default. */
export function formOf(request: Request, fallback: ResponseForm): ResponseForm {
  const asked = request.headers.get(FORM_HEADER)?.trim().toLowerCase()
  return asked === 'bare' || asked === 'enveloped' ? asked : fallback
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Selected keys: `true` keeps the whole value, a nested selection picks inside an object. */
type Selection = Map<string, true | Selection>

/** Limits on `fields` (also in its query schema, paging.ts): longer, wider or deeper selections are a 400. */
export const FIELDS_LIMITS = { length: 1024, names: 64, depth: 8 } as const

const tooMuch = (what: string) => badRequest(`fields ${what}.`, { errors: [{ in: 'query', field: 'fields', message: what }] })

/** Parses `fields=a,b.c` into a tree of selected keys. */
function parseSelection(fields: string): Selection {
  if (fields.length > FIELDS_LIMITS.length) throw tooMuch(`is longer than ${FIELDS_LIMITS.length} characters`)
  const names = fields.split(',')
  if (names.length > FIELDS_LIMITS.names) throw tooMuch(`names more than ${FIELDS_LIMITS.names} fields`)
  // Empty names between commas (`a,,b`, a trailing comma) are skipped; a text naming nothing at all is refused.
  if (names.every((n) => !n.trim())) throw tooMuch('names no field (only commas): name at least one, or leave fields out')
  const out: Selection = new Map()
  for (const raw of names) {
    const name = raw.trim()
    if (!name) continue
    let node = out
    const path = name.split('.')
    if (path.length > FIELDS_LIMITS.depth) throw tooMuch(`path ${name.slice(0, 80)} is deeper than ${FIELDS_LIMITS.depth} levels`)
    for (let i = 0; i < path.length; i++) {
      const key = path[i]!
      const current = node.get(key)
      if (current === true) break // the whole value is already selected
      if (i === path.length - 1) node.set(key, true)
      else if (current) node = current
      else {
        const child: Selection = new Map()
        node.set(key, child)
        node = child
      }
    }
  }
  return out
}

/**
 * Parsed selections by `fields` text: clients repeat the same few, so each is parsed once. Bounded in
 * entries and bytes (a selection weighs a few times its text).
 */
const selections = new GenerationalCache<string, Selection>(1000, 4 * 1024 * 1024, (text) => 64 + text.length * 8)
function selectionOf(fields: string): Selection {
  let found = selections.get(fields)
  if (!found) selections.set(fields, (found = parseSelection(fields)))
  return found
}

/** The dotted paths below a selected key, as the caller wrote them: `true` -> [''], {b: {c}} -> ['.b.c']. */
const leaves = (sel: true | Selection): string[] =>
  sel === true ? [''] : [...sel].flatMap(([key, sub]) => leaves(sub).map((rest) => `.${key}${rest}`))

const has = (o: Record<string, unknown>, key: string) => Object.hasOwn(o, key)

function pick(item: unknown, sel: Selection): unknown {
  if (!isPlainObject(item)) return item
  const out: Record<string, unknown> = {}
  for (const [key, sub] of sel) {
    if (!has(item, key)) continue
    const value = item[key]
    out[key] = sub === true || !isPlainObject(value) ? value : pick(value, sub)
  }
  return out
}

/** What a value is, for a path that tries to select inside it. */
const kindOf = (value: unknown) => (Array.isArray(value) ? 'a list' : typeof value === 'string' ? 'a string' : `a ${typeof value}`)

/**
 * Checks every selected name against the names the items carry, at every depth the caller wrote; a
 * stranger is a 400 listing the valid ones. A path into a value that is not an object (`name.foo` on a
 * string, `subdivisions.name` on a list) is a 400 saying what the value is: `fields` selects inside objects
 * only. A member that is null in every item may be an object elsewhere, so a path into it passes. Nothing
 * to select from (an empty list, no declared names) passes.
 */
function checkNames(items: unknown[], sel: Selection, declared?: readonly string[]) {
  const objects = items.filter(isPlainObject)
  if (!objects.length && !declared?.length) return
  const unknown: string[] = []
  /** For each unknown path, the nearest name there is where it went astray (`capitol`: `capital`). */
  const near = new Map<string, string>()
  const notObjects: { path: string; why: string }[] = []
  const visit = (objects: Record<string, unknown>[], sel: Selection, prefix: string, declared?: readonly string[]) => {
    for (const [key, sub] of sel) {
      const path = prefix + key
      if (!declared?.includes(key) && !objects.some((o) => has(o, key))) {
        const guess = nearest(key, new Set([...(declared ?? []), ...objects.flatMap((o) => Object.keys(o))]))
        for (const rest of leaves(sub)) {
          unknown.push(path + rest)
          if (guess) near.set(path + rest, prefix + guess + rest)
        }
        continue
      }
      if (sub === true) continue
      const values = objects.map((o) => o[key]).filter((v) => v !== undefined && v !== null)
      const nested = values.filter(isPlainObject)
      if (nested.length) visit(nested, sub, `${path}.`)
      else if (values.length)
        notObjects.push(...leaves(sub).map((rest) => ({ path: path + rest, why: `${path} is ${kindOf(values[0])}, not an object` })))
    }
  }
  visit(objects, sel, '', declared)
  if (notObjects.length) {
    const [first] = notObjects
    throw badRequest(`fields ${first!.path}: ${first!.why}; fields selects members of objects only.`, {
      errors: notObjects.map(({ path, why }) => ({ in: 'query', field: 'fields', message: `${path}: ${why}` })),
    })
  }
  if (unknown.length) {
    const names = [...new Set([...(declared ?? []), ...objects.flatMap((o) => Object.keys(o))])].sort()
    const named = unknown.map((field) => (near.has(field) ? `${field} (did you mean ${near.get(field)}?)` : field))
    throw badRequest(`Unknown field${unknown.length > 1 ? 's' : ''} ${named.join(', ')} in fields. Valid fields: ${names.join(', ')}.`, {
      errors: named.map((field) => ({ in: 'query', field: 'fields', message: `unknown field ${field}` })),
      valid_fields: names,
    })
  }
}

/**
 * Applies `fields` to the resource(s) of a reply. `declared`: the names the route's response schema gives
 * its items in this form (route-table.ts), valid even where no item carries them (an empty list).
 */
export function applyFields(reply: Reply, fields: string | undefined, declared?: readonly string[]): unknown {
  const data = reply.data === null && reply.options.json ? JSON.parse(reply.options.json()) : reply.data
  if (!fields || !fields.trim()) return data
  const sel = selectionOf(fields)
  const items = reply.kind === 'list' ? (data as unknown[]) : [data]
  checkNames(items, sel, declared)
  return reply.kind === 'list' ? items.map((i) => pick(i, sel)) : pick(data, sel)
}

/** JSON of stable data, by the data object (see `ReplyOptions.stable`). */
const stableJson = new WeakMap<object, string>()

/**
 * Items serialized this many at a time. Bun's JSON.stringify leaves its fast path for the whole value at
 * the first string holding a character beyond Latin-1 (`İstanbul`) and redoes the work; in chunks only
 * that chunk pays. 100 IP answers with one such name: 143 -> 42 µs; all Latin-1: 38.0 -> 38.4 µs.
 */
const CHUNK = 10

/** `JSON.stringify(items)`, made in chunks (above). */
export function itemsJson(items: unknown[]): string {
  const parts: string[] = []
  for (let i = 0; i < items.length; i += CHUNK) parts.push(JSON.stringify(items.slice(i, i + CHUNK)).slice(1, -1))
  return `[${parts.join(',')}]`
}

/** The resource(s) of a reply as JSON text, `fields` applied. */
function dataJson(reply: Reply, fields: string | undefined, declared: readonly string[] | undefined): string {
  const selecting = !!fields && !!fields.trim()
  if (!selecting && reply.options.json) return reply.options.json()
  const data = selecting ? applyFields(reply, fields, declared) : reply.data
  const serialize = () => (Array.isArray(data) && data.length > CHUNK ? itemsJson(data) : (JSON.stringify(data) ?? 'null'))
  if (selecting || !reply.options.stable || typeof data !== 'object' || data === null) return serialize()
  let json = stableJson.get(data)
  if (json === undefined) stableJson.set(data, (json = serialize()))
  return json
}

/** `{"a":1}` -> `"a":1`: the members of an object, to splice next to serialized data. */
const members = (o: Record<string, unknown>) => JSON.stringify(o).slice(1, -1)

/** The response body for a successful reply in the given form, as JSON text (`fields` applied; see applyFields). */
export function bodyJson(reply: Reply, form: ResponseForm, fields: string | undefined, declared?: readonly string[]): string {
  const json = dataJson(reply, fields, declared)
  if (form === 'enveloped') {
    const rest = members(reply.enveloped)
    return `{"status":"ok","data":${json},"error":null${rest ? ',' + rest : ''}}`
  }
  if (reply.kind === 'one') return json
  const rest = members(reply.bare!)
  return `{${rest ? rest + ',' : ''}"results":${json}}`
}

/** The response body for a problem: Form A `{status: 'error', data: null, error}`, Form B the problem. */
export const problemBody = (problem: Problem, form: ResponseForm): unknown =>
  form === 'enveloped' ? { status: 'error', data: null, error: problem } : problem
