/**
 * Content coding of text answers (RFC 9110 section 8.4, 12.5.3): gzip or brotli when the caller's
 * Accept-Encoding allows it and the body is worth it. A plain function wrapper around the app (composed in
 * server.ts inside the metrics wrapper, so the access log sees the final response), not a hook.
 *
 * Only bodies a layer declared are compressed: the JSON replies (caching.ts) and problems (problem-response.ts), the OpenAPI
 * document and the /docs assets record their body on the exchange (`body`), so deciding "not worth it" is
 * a property read and a length, never a read of the Response's stream. Images (QR PNG), streams and
 * anything else undeclared go out as they are.
 *
 * Why these settings (measured on this machine; docs/operations.md, "Compression"):
 * - `MIN_BYTES` 1024: below about one TCP segment (~1460 bytes) a smaller body saves no packet and no
 *   round trip, and short JSON shrinks by a few hundred bytes at most (a 92-byte answer grows to 99 in gzip).
 * - Answers made per request: gzip level 4 and brotli quality 4. On the 53 KB country list gzip 4 makes
 *   8.9 KB at ~2.9 µs/KB of event-loop time, gzip 6 8.4 KB at ~5.5 µs/KB (about what making the JSON
 *   cost), brotli 4 8.9 KB at ~4.8 µs/KB, brotli 5 8.0 KB at ~8.6 µs/KB, brotli 11 6.3 KB at ~840 µs/KB.
 *   gzip is preferred when the caller accepts both equally (same size, less CPU). Bodies over
 *   `OFF_LOOP_BYTES` are compressed on zlib's thread pool, so a large list does not hold the loop.
 * - Bodies the same on every request (`bodyKey`: /docs assets, /openapi.json) are compressed once, off the
 *   event loop, at the best settings (brotli 11, gzip 9: the 1.7 MB Swagger bundle goes to 359 KB and
 *   459 KB; 2.4 s of a pool thread, once), and kept. brotli is preferred for them. Until the best form is
 *   ready, callers get the per-request form rather than waiting seconds for it (the first /docs visit).
 *
 * ETags: a compressed answer is a different representation, so its ETag is made weak (`W/"…"`, RFC 9110
 * section 8.8.1 and 8.8.3); If-None-Match uses the weak comparison, so either form revalidates to a 304,
 * and a 304 carries the ETag its 200 would have had. Every declared answer says `Vary: Accept-Encoding`
 * (in its own headers, so nothing is appended per request).
 */
import { promisify } from 'node:util'
import zlib from 'node:zlib'
import { existingExchange } from './exchange.ts'

type Handle = (request: Request) => Response | Promise<Response>
type Coding = 'br' | 'gzip'

/** Declared bodies shorter than this (in UTF-16 units for text; bytes >= that) go out as they are. */
export const MIN_BYTES = 1024
/** Per-request bodies from this size on are compressed off the event loop. */
export const OFF_LOOP_BYTES = 64 * 1024
/** Longer Accept-Encoding headers are not read (identity). Real ones are under 100 characters. */
const MAX_HEADER = 512

const DYNAMIC_ORDER: readonly Coding[] = ['gzip', 'br']
const STATIC_ORDER: readonly Coding[] = ['br', 'gzip']

const brotli = promisify(zlib.brotliCompress)
const gzip = promisify(zlib.gzip)
const brotliParams = (quality: number, size: number) => ({
  params: { [zlib.constants.BROTLI_PARAM_QUALITY]: quality, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: size },
})

type Body = string | Uint8Array
const bytesOf = (body: Body): Uint8Array<ArrayBuffer> => (typeof body === 'string' ? Buffer.from(body) : (body as Uint8Array<ArrayBuffer>))

function compressNow(coding: Coding, body: Body): Uint8Array {
  const bytes = bytesOf(body)
  return coding === 'gzip' ? Bun.gzipSync(bytes, { level: 4 }) : zlib.brotliCompressSync(bytes, brotliParams(4, bytes.length))
}

function compressOffLoop(coding: Coding, body: Body, best: boolean): Promise<Uint8Array> {
  const bytes = bytesOf(body)
  return coding === 'gzip' ? gzip(bytes, { level: best ? 9 : 4 }) : brotli(bytes, brotliParams(best ? 11 : 4, bytes.length))
}

export interface Negotiated {
  /** The coding to use, or undefined for none. */
  coding?: Coding
  /** The caller said `identity;q=0` (or `*;q=0` without naming identity): compress whatever the size. */
  identityRefused: boolean
}

/** A qvalue (RFC 9110 section 12.4.2): 0 to 1 with up to three decimals; anything else is NaN (element ignored). */
function qvalue(raw: string): number {
  return /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(raw) ? Number(raw) : Number.NaN
}

/**
 * The caller's Accept-Encoding against the codings we have, in `order` of preference on equal q. No header
 * means identity (as curl without --compressed expects); an empty one means identity only.
 */
export function negotiate(header: string | null, order: readonly Coding[] = DYNAMIC_ORDER): Negotiated {
  if (!header || header.length > MAX_HEADER) return { identityRefused: false }
  const q = new Map<string, number>()
  for (const element of header.toLowerCase().split(',')) {
    const [name, ...params] = element.split(';').map((s) => s.trim())
    if (!name) continue
    let weight = 1
    for (const p of params) if (p.startsWith('q=')) weight = qvalue(p.slice(2))
    if (Number.isNaN(weight)) continue
    q.set(name === 'x-gzip' ? 'gzip' : name, weight)
  }
  const star = q.get('*')
  const weightOf = (coding: string) => q.get(coding) ?? star ?? 0
  const identity = q.get('identity') ?? (star === 0 ? 0 : 1)
  let best: Coding | undefined
  for (const coding of order) if (weightOf(coding) > 0 && (!best || weightOf(coding) > weightOf(best))) best = coding
  // A coding the caller likes less than no coding at all is not used; identity's own weight counts only
  // when the caller gave one (unnamed, it is merely acceptable: `gzip;q=0.5` still asks for gzip).
  if (best && weightOf(best) < (q.get('identity') ?? star ?? 0)) best = undefined
  return { coding: best, identityRefused: identity === 0 }
}

/** Whether a header might refuse identity; checked only for small bodies, so it must be cheap. */
const mayRefuseIdentity = (header: string) => header.includes('identity') || header.includes('*')

const weak = (etag: string | null) => (etag && !etag.startsWith('W/') ? `W/${etag}` : etag)

/**
 * Compressed forms of the bodies that are the same on every request, by their key and coding. One for the
 * process, not per app: an app is rebuilt at every data swap and, on a first start, as each domain opens,
 * and the /docs bundle (1.7 MB at brotli 11) must not be compressed again each time. A key names its bytes
 * exactly (a file path; the OpenAPI document's `path#hash`, whose older versions are dropped when a new one
 * is kept), so the set stays as small as the set of assets.
 */
interface Kept {
  best?: Uint8Array
  made: Promise<void>
}
const kept = new Map<string, Kept>()

/** Settles when every best form started so far is kept (tests: the answer after the first is the best one). */
export const bestFormsKept = () => Promise.all([...kept.values()].map((k) => k.made))
/** Forgets every kept form (tests: they are the process's, and another test file may have made them). */
export const forgetKeptForms = () => kept.clear()

/** Wraps the app's handler: declared bodies are compressed as the caller accepts. */
export function withCompression(handle: Handle): Handle {
  const encode = (request: Request, response: Response): Response | Promise<Response> => {
    const exchange = existingExchange(request)
    const body = exchange?.body
    if (body === undefined) return response
    const header = request.headers.get('accept-encoding')
    if (header === null) return response
    const small = body.length < MIN_BYTES
    if (small && !mayRefuseIdentity(header)) return response
    const key = exchange!.bodyKey
    const { coding, identityRefused } = negotiate(header, key ? STATIC_ORDER : DYNAMIC_ORDER)
    if (!coding || (small && !identityRefused) || request.method === 'HEAD') return response
    const headers = response.headers
    if (headers.has('content-encoding')) return response
    const etag = weak(headers.get('etag'))
    if (etag) headers.set('etag', etag)
    // A 304 (or 204) has no body: only its ETag changes, to the one the compressed 200 carries.
    if (response.status === 304 || response.status === 204) return response
    headers.set('content-encoding', coding)
    headers.delete('content-length')
    const reply = (bytes: Uint8Array) => {
      exchange!.sentBytes = bytes.byteLength
      return new Response(bytes, { status: response.status, statusText: response.statusText, headers })
    }
    if (key) {
      const id = `${coding}:${key}`
      let entry = kept.get(id)
      if (!entry) {
        const base = `${coding}:${key.split('#')[0]}#`
        if (key.includes('#')) for (const old of kept.keys()) if (old.startsWith(base)) kept.delete(old)
        const fresh: Kept = {
          made: compressOffLoop(coding, body, true).then(
            (bytes) => void (fresh.best = bytes),
            () => void kept.delete(id), // made again for the next caller
          ),
        }
        kept.set(id, (entry = fresh))
      }
      if (entry.best) return reply(entry.best)
    }
    if (body.length >= OFF_LOOP_BYTES) return compressOffLoop(coding, body, false).then(reply)
    return reply(compressNow(coding, body))
  }

  return (request) => {
    const answer = handle(request)
    return answer instanceof Promise ? answer.then((r) => encode(request, r)) : encode(request, answer)
  }
}
