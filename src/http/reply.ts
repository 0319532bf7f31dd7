/**
 * What route handlers return, and how it becomes a response body in the caller's form.
 *
 * Handlers build their resource in the caller's form (they receive `form` in the context and call the
 * domain presenter), then return `one(item)` or `list(items, …)`. This file alone knows the two
 * wrappers of the SPEC ("Response forms") and applies `fields` to the resource, never to the wrapper.
 */
import type { ResponseForm } from '../config.ts'
import { badRequest } from '../lib/errors.ts'
import type { Problem } from './problem.ts'

export type { ResponseForm }

export const FORM_HEADER = 'x-response-form'

export interface ReplyOptions {
  /**
   * The names `fields` may select, when they cannot be read off the items (e.g. an empty list).
   * Defaults to the keys of the items themselves.
   */
  fieldNames?: readonly string[]
  /**
   * The data is one object served to every request that asks for it and never changed (the route memoizes
   * it): its JSON is made once and kept with it. Large bodies with text beyond Latin-1 gain most, as Bun's
   * JSON.stringify is several times slower on such strings (a country with its subdivisions: ~45 µs).
   */
  stable?: boolean
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

/** A list: Form A `{status, data: [...], error, total?}`, Form B `{count?, results: [...]}`. */
export const list = (items: unknown[], meta: ListMeta = {}) =>
  new Reply(
    'list',
    items,
    { ...(meta.total !== undefined ? { total: meta.total } : {}), ...meta.enveloped },
    { ...(meta.total !== undefined ? { count: meta.total } : {}), ...meta.bare },
    { fieldNames: meta.fieldNames, stable: meta.stable },
  )

/** The form for this request: `X-Response-Form` header, else the deployment default. */
export function formOf(request: Request, fallback: ResponseForm): ResponseForm {
  const asked = request.headers.get(FORM_HEADER)?.trim().toLowerCase()
  return asked === 'bare' || asked === 'enveloped' ? asked : fallback
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Parses `fields=a,b.c` into a tree of selected keys (`true` keeps the whole value). */
function selection(fields: string): Map<string, true | Set<string>> {
  const out = new Map<string, true | Set<string>>()
  for (const raw of fields.split(',')) {
    const name = raw.trim()
    if (!name) continue
    const dot = name.indexOf('.')
    if (dot < 0) {
      out.set(name, true)
      continue
    }
    const head = name.slice(0, dot)
    const rest = name.slice(dot + 1)
    const current = out.get(head)
    if (current === true) continue
    out.set(head, (current ?? new Set<string>()).add(rest))
  }
  return out
}

function pick(item: unknown, sel: Map<string, true | Set<string>>): unknown {
  if (!isPlainObject(item)) return item
  const out: Record<string, unknown> = {}
  for (const [key, sub] of sel) {
    if (!(key in item)) continue
    const value = item[key]
    if (sub === true || !isPlainObject(value)) out[key] = value
    else out[key] = pick(value, selection([...sub].join(',')))
  }
  return out
}

/** Checks every selected name against the names the items carry; a stranger is a 400 listing the valid ones. */
function checkNames(items: unknown[], sel: Map<string, true | Set<string>>, declared?: readonly string[]) {
  const objects = items.filter(isPlainObject)
  const valid = new Set<string>(declared ?? [])
  for (const o of objects) for (const k of Object.keys(o)) valid.add(k)
  if (!valid.size) return // nothing to select from (empty list, no declared names)
  const unknown: string[] = []
  for (const [key, sub] of sel) {
    if (!valid.has(key)) {
      unknown.push(key)
      continue
    }
    if (sub === true) continue
    const nested = new Set<string>()
    for (const o of objects) if (isPlainObject(o[key])) for (const k of Object.keys(o[key] as object)) nested.add(k)
    if (!nested.size) continue
    for (const path of sub) if (!nested.has(path.split('.')[0]!)) unknown.push(`${key}.${path}`)
  }
  if (unknown.length) {
    const names = [...valid].sort()
    throw badRequest(`Unknown field${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} in fields. Valid fields: ${names.join(', ')}.`, {
      errors: unknown.map((field) => ({ in: 'query', field: 'fields', message: `unknown field ${field}` })),
      valid_fields: names,
    })
  }
}

/** Applies `fields` to the resource(s) of a reply. */
export function applyFields(reply: Reply, fields: string | undefined): unknown {
  if (!fields || !fields.trim()) return reply.data
  const sel = selection(fields)
  const items = reply.kind === 'list' ? (reply.data as unknown[]) : [reply.data]
  checkNames(items, sel, reply.options.fieldNames)
  return reply.kind === 'list' ? items.map((i) => pick(i, sel)) : pick(reply.data, sel)
}

/** JSON of stable data, by the data object (see `ReplyOptions.stable`). */
const stableJson = new WeakMap<object, string>()

/** `{"a":1}` -> `"a":1`: the members of an object, to splice next to pre-serialized data. */
const members = (o: Record<string, unknown>) => JSON.stringify(o).slice(1, -1)

/** The response body for a successful reply in the given form, as JSON text. */
export function bodyJson(reply: Reply, form: ResponseForm, fields: string | undefined): string {
  const data = reply.data
  if (!reply.options.stable || (fields && fields.trim()) || typeof data !== 'object' || data === null) return JSON.stringify(body(reply, form, fields))
  let json = stableJson.get(data)
  if (json === undefined) stableJson.set(data, (json = JSON.stringify(data)))
  // The same members, in the same order, as `body` gives.
  if (form === 'enveloped') {
    const rest = members(reply.enveloped)
    return `{"status":"ok","data":${json},"error":null${rest ? ',' + rest : ''}}`
  }
  if (reply.kind === 'one') return json
  const rest = members(reply.bare!)
  return `{${rest ? rest + ',' : ''}"results":${json}}`
}

/** The response body for a successful reply in the given form. */
export function body(reply: Reply, form: ResponseForm, fields: string | undefined): unknown {
  const data = applyFields(reply, fields)
  if (form === 'enveloped') return { status: 'ok', data, error: null, ...reply.enveloped }
  if (reply.kind === 'one') return data
  return { ...reply.bare, results: data }
}

/** The response body for a problem: Form A `{status: 'error', data: null, error}`, Form B the problem. */
export const problemBody = (problem: Problem, form: ResponseForm): unknown =>
  form === 'enveloped' ? { status: 'error', data: null, error: problem } : problem
