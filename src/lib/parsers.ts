/**
 * The parsers settings are declared with (lib/settings.ts): each reads a raw value (a string from the
 * environment or a flag, any JSON from the config file) and names the setting as the operator wrote it
 * when the value is wrong.
 */
import { ConfigError, type Parser } from './settings.ts'

export const fail = (name: string, why: string): never => {
  throw new ConfigError(`${name}: ${why}`)
}

export const integer =
  (min: number, max: number): Parser<number> =>
  (raw, name) => {
    const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^-?\d+$/.test(raw.trim()) ? Number(raw) : NaN
    if (!Number.isSafeInteger(n) || n < min || n > max) fail(name, `expected an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`)
    return n
  }

/** 0 (meaning "work it out") or an integer from min to max. */
export const zeroOrAtLeast =
  (min: number, max: number): Parser<number> =>
  (raw, name) => {
    const n = integer(0, max)(raw, name)
    if (n !== 0 && n < min) fail(name, `expected 0 (automatic) or an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`)
    return n
  }

export const boolean: Parser<boolean> = (raw, name) => {
  if (typeof raw === 'boolean') return raw
  const s = String(raw).trim().toLowerCase()
  if (['1', 'true', 'yes', 'on'].includes(s)) return true
  if (['0', 'false', 'no', 'off'].includes(s)) return false
  return fail(name, `expected true or false, got ${JSON.stringify(raw)}`)
}

export const text: Parser<string> = (raw, name) => {
  if (typeof raw !== 'string' || raw.trim() === '') fail(name, 'expected a non-empty string')
  return (raw as string).trim()
}

export const oneOf =
  <const V extends string>(...values: V[]): Parser<V> =>
  (raw, name) => {
    const s = String(raw).trim().toLowerCase()
    if (!(values as string[]).includes(s)) fail(name, `expected one of ${values.join(', ')}, got ${JSON.stringify(raw)}`)
    return s as V
  }

export const list: Parser<string[]> = (raw, name) => {
  if (Array.isArray(raw)) return raw.map((v, i) => text(v, `${name}[${i}]`))
  if (typeof raw !== 'string') return fail(name, 'expected a comma-separated list')
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
}

/** `*`, or origins as browsers send them (`https://app.example.com`, scheme://host[:port], no path). */
export const origins: Parser<string[]> = (raw, name) => {
  const values = list(raw, name)
  for (const o of values) {
    if (o === '*') continue
    let url: URL | undefined
    try {
      url = new URL(o)
    } catch {}
    if (!url || url.origin !== o || url.origin === 'null')
      fail(
        name,
        `expected * or origins such as https://app.example.com (scheme, host and port only, no trailing slash), got ${JSON.stringify(o)}`,
      )
  }
  return values
}

/** An absolute http(s) origin without path, query or fragment (a trailing slash is dropped). */
export const origin: Parser<string> = (raw, name) => {
  const s = text(raw, name).replace(/\/+$/, '')
  let url: URL | undefined
  try {
    url = new URL(s)
  } catch {}
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.pathname !== '/' || url.search || url.hash)
    fail(name, `expected an http(s) origin such as https://api.example.com, got ${JSON.stringify(raw)}`)
  return url!.origin
}

export const secret =
  (minLength: number): Parser<string> =>
  (raw, name) => {
    const s = text(raw, name)
    if (s.length < minLength) fail(name, `expected at least ${minLength} characters`)
    return s
  }

/** The one place a store's spelling is read: the settings keep it as written, `storesOf` turns it into a StoreLocation. */
/** `redis://`, `rediss://`, or a Redis Cluster or Sentinel group (`redis+cluster://`, `redis+sentinel://`: stores/redis-topology.ts). */
const isRedisUrl = (s: string) => /^rediss?(\+(cluster|sentinel))?:\/\//.test(s)

/** `memory`, `sqlite` or a `redis://` URL; `kinds` are those this store may be. */
export const storeSetting =
  (kinds: readonly ('memory' | 'sqlite')[]): Parser<string> =>
  (raw, name) => {
    const s = text(raw, name)
    if ((kinds as string[]).includes(s) || isRedisUrl(s)) return s
    return fail(name, `expected ${kinds.join(', ')} or a redis:// URL, got ${JSON.stringify(s)}`)
  }

/** An http(s) URL, kept with a trailing slash so `{base}domain/{name}` joins cleanly. */
export const httpUrl: Parser<string> = (raw, name) => {
  const s = text(raw, name)
  let url: URL
  try {
    url = new URL(s)
  } catch {
    return fail(name, `expected an http(s) URL, got ${JSON.stringify(s)}`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') fail(name, `expected an http(s) URL, got ${JSON.stringify(s)}`)
  return s.endsWith('/') ? s : s + '/'
}
