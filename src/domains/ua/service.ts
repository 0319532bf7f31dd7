/**
 * User-agent parsing (SPEC "User-agent parse result"), pure and HTTP-free: the vendored engine over the
 * detection data, bots first, Client Hints per the SPEC rules, a bounded result cache, and the
 * WURFL-style capability map of the device-catalog endpoint.
 */
import { unknownName } from '../../lib/did-you-mean.ts'
import { AlmanacError, invalid } from '../../lib/errors.ts'
import { Doorkeeper, GenerationalCache } from '../../lib/cache.ts'
import type { Definitions } from './definitions.ts'
import { createDetector, WARM_UP } from './engine.ts'
import { engineHeaders, readHints, type Hints } from './hints.ts'
import type { Bot, Client, Parse } from './parse.ts'
import { packLiterals } from './prefilter.ts'

export type { Bot, Client, Device, Os, Parse } from './parse.ts'

/** Longest accepted user agent: real ones stay under 500 characters; this bounds every regex run. */
export const UA_MAX_LENGTH = 2048

export interface UaResult extends Parse {
  is_bot: boolean
  /** The parse of the UA alone; null when no Client Hints were given (SPEC rule 1). */
  ua_only: Omit<Parse, 'bot'> | null
  /** The hints' client major version differs from the UA's (SPEC rule 2). */
  tampered: boolean
}

export interface ItemError {
  ua: unknown
  error: { field: string; message: string }
}

/** The members a bulk item takes: POST /ua's body. */
const ITEM_MEMBERS = ['ua', 'headers']

export const isItemError = (x: object): x is ItemError => 'error' in x

/**
 * Headless browsers are bots for the SPEC ("true for crawlers, monitors, headless browsers") though
 * Matomo's data files them as clients; they keep their client, and get a bot entry from this table.
 */
const HEADLESS = new Map<string, { producer: string; producer_url: string }>([
  ['Headless Chrome', { producer: 'Google', producer_url: 'https://www.google.com' }],
  ['Headless Edge', { producer: 'Microsoft', producer_url: 'https://www.microsoft.com' }],
  ['PhantomJS', { producer: 'PhantomJS', producer_url: 'https://phantomjs.org' }],
])

/** Checks a user agent given as `field`; returns it or throws an `invalid` error naming the field. */
export function checkUserAgent(ua: unknown, field = 'ua'): string {
  if (typeof ua !== 'string')
    throw invalid(
      field,
      `expected a string holding a User-Agent header, got ${ua === null ? 'null' : Array.isArray(ua) ? 'an array' : typeof ua}`,
    )
  if (ua.trim() === '') throw invalid(field, 'must not be empty')
  if (ua.length > UA_MAX_LENGTH) throw invalid(field, `longer than ${UA_MAX_LENGTH} characters (${ua.length})`)
  return ua
}

export interface UaService {
  /** Parses one user agent with optional Client Hints (`headers`); throws `invalid` naming the field
   * (`field` for the user agent, `hintsField` for the hints: by default `headers` beside it). */
  parse(ua: unknown, headers?: unknown, field?: string, hintsField?: string): UaResult
  /**
   * Each item answered on its own: a bad item is an ItemError in its place. `from`: the index of the first
   * item in the whole list, when a bulk is answered a slice at a time (errors name `<field>.<index>`).
   */
  bulk(items: readonly unknown[], field?: string, from?: number): ((UaResult & { ua: string }) | ItemError)[]
  /** Whether the UA carries a touch-screen token (for the device catalog). */
  touch(ua: string): boolean
  /**
   * The engine's one-off first-use work as steps of at most ~50 ms, to run one at a time after opening
   * (index.ts): the literal table packed, each of engine.ts's WARM_UP samples parsed, every list index made
   * (INDEXES_A_STEP a step), the table packed again with what they brought in.
   */
  warmUp: (() => void)[]
  /** The detection data's origin and date. */
  definitions: Definitions['source']
}

export interface UaServiceOptions {
  /** Result cache bounds (0 entries: no cache). */
  cacheEntries: number
  cacheBytes: number
}

/** List indexes made in one warm-up step: ~1,500 in all, ~70 ms, so ~3 ms a step. */
const INDEXES_A_STEP = 64

/** `runs` as steps of `size`, each running its share in order. */
const inGroups = (runs: (() => void)[], size: number): (() => void)[] =>
  Array.from({ length: Math.ceil(runs.length / size) }, (_, i) => () => {
    for (const run of runs.slice(i * size, (i + 1) * size)) run()
  })

export function openUaService(defs: Definitions, options: UaServiceOptions): UaService {
  const detector = createDetector(defs)
  // The settings are per generation; keys weigh 2 bytes a character. 0 entries turns the cache off.
  const cache =
    options.cacheEntries > 0
      ? new GenerationalCache<string, UaResult>(options.cacheEntries * 2, options.cacheBytes * 2, (key) => key.length * 2)
      : undefined
  // A result is kept from its UA's second asking: unique UAs (a suffix per request) cost 14 µs more a
  // request when each was frozen and kept (POST /ua in process, 146-148 against 132-133 µs).
  const doorkeeper = cache && new Doorkeeper()

  const uaOnly = (ua: string): Parse => {
    const bot = detector.bot(ua)
    if (bot) return { client: null, os: null, device: null, bot }
    const parsed = detector.detect(ua, undefined)
    return { ...parsed, bot: headlessBot(parsed.client) }
  }

  const compute = (ua: string, hints: Hints | null): UaResult => {
    const plain = uaOnly(ua)
    if (!hints) return { is_bot: plain.bot !== null, ...plain, ua_only: null, tampered: false }
    if (plain.bot && !plain.client) {
      // A crawler stays a crawler whatever hints it sends; ua_only is its (all-null) parse.
      return { is_bot: true, ...plain, ua_only: { client: null, os: null, device: null }, tampered: false }
    }
    const hinted = detector.detect(ua, engineHeaders(hints))
    const bot = headlessBot(hinted.client)
    return {
      is_bot: bot !== null,
      ...hinted,
      bot,
      ua_only: { client: plain.client, os: plain.os, device: plain.device },
      tampered: majorDiffers(hinted.client?.version, plain.client?.version),
    }
  }

  const parse = (input: unknown, headers?: unknown, field = 'ua', hintsField?: string): UaResult => {
    const ua = checkUserAgent(input, field)
    const hints = readHints(headers, hintsField ?? (field === 'ua' ? 'headers' : field.replace(/\.ua$/, '.headers')))
    if (!cache) return compute(ua, hints) // answered once, to this caller alone: nothing to freeze
    const key = hints ? `${ua}\u0000${hints.key}` : ua
    const hit = cache.get(key)
    if (hit) return hit
    if (!doorkeeper!.askedBefore(key)) return compute(ua, hints)
    const result = deepFreeze(compute(ua, hints))
    cache.set(key, result)
    return result
  }

  return {
    parse,
    bulk(items, field = 'ua_list', from = 0) {
      return items.map((item, i) => {
        const at = `${field}.${from + i}`
        const ua = item && typeof item === 'object' && !Array.isArray(item) ? (item as Record<string, unknown>).ua : undefined
        try {
          if (!item || typeof item !== 'object' || Array.isArray(item)) throw invalid(at, 'expected an object {ua, headers?}')
          // A member the item does not take is its own error, as an unknown member of POST /ua's body is a 422.
          const stranger = Object.keys(item).find((k) => !ITEM_MEMBERS.includes(k))
          if (stranger !== undefined) throw invalid(`${at}.${stranger}`, unknownName(stranger, ITEM_MEMBERS))
          const headers = (item as Record<string, unknown>).headers
          return { ua: ua as string, ...parse(ua, headers, `${at}.ua`) }
        } catch (e) {
          const fieldError = e instanceof AlmanacError ? e.options.errors?.[0] : undefined
          if (!fieldError) throw e // not a bad item but a fault: the request fails as any other would
          return {
            ua: typeof ua === 'string' ? ua.slice(0, UA_MAX_LENGTH) : (ua ?? null),
            error: { field: fieldError.field, message: fieldError.message },
          }
        }
      })
    },
    touch: (ua) => detector.touch(ua),
    warmUp: [packLiterals, ...WARM_UP.map((ua) => () => void uaOnly(ua)), ...inGroups(detector.indexes(), INDEXES_A_STEP), packLiterals],
    definitions: defs.source,
  }
}

function headlessBot(client: Client | null): Bot | null {
  const known = client && HEADLESS.get(client.name)
  if (!client || !known) return null
  return { name: client.name, category: 'Headless browser', producer: known.producer, url: '', producer_url: known.producer_url }
}

const major = (version: string | undefined) => (version ? version.split('.')[0]! : '')

/** SPEC rule 2: both versions known and their major parts differ. */
export const majorDiffers = (hinted: string | undefined, uaOnly: string | undefined) => {
  const a = major(hinted)
  const b = major(uaOnly)
  return a !== '' && b !== '' && a !== b
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const v of Object.values(value)) deepFreeze(v)
  }
  return value
}
