/**
 * The QR service: payload text -> matrix -> image (png, svg, or a base64 data URI), stored and linked
 * for png and svg. No HTTP here: the route builds the payload with `payloads.ts`, passes the common
 * options, the origin links are made for and the caller (whose share of the store a stored image is
 * charged to, `shares.ts`), and presents the result.
 */
import { colorText, colorWarnings, parseColor } from './colors.ts'
import { isLarge, type MadeImage, makeImage, smallestImageBytes } from './image.ts'
import type { EcLevel } from './matrix.ts'
import type { Preset } from './payloads.ts'
import { createRenderPool, type RenderPool, type RenderPoolStats } from './render-pool.ts'
import { overShare, type StoreLedger } from './shares.ts'
import { CONTENT_TYPES, type ObjectStore } from './store.ts'

export const FORMATS = ['png', 'svg', 'base64'] as const
export type Format = (typeof FORMATS)[number]

/** SPEC "QR codes": common parameters, their defaults and ranges. */
export const DEFAULTS = {
  format: 'png' as Format,
  size: 400,
  fg_color: '#000000',
  bg_color: '#FFFFFF',
  error_correction: 'M' as EcLevel,
  margin: 4,
  ttl: 86400,
}
export const RANGES = { size: [100, 2000], margin: [0, 20], ttl: [60, 2592000] } as const

export interface QrOptions {
  format?: Format
  size?: number
  fg_color?: string
  bg_color?: string
  error_correction?: EcLevel
  margin?: number
  ttl?: number
}

export interface QrResult {
  /** png, svg: the link; absent for base64. */
  url?: string
  format: Format
  /** png, svg: Unix time the link stops working. */
  expires?: number
  preset: Preset
  /** base64 only. */
  data_uri?: string
  /** Pixels per side (png, base64); null for svg, which has no pixel size. */
  size: number | null
  fg_color: string
  bg_color: string
  error_correction: EcLevel
  margin: number
  /** QR version (1-40) chosen for the payload. */
  version: number
  /** Modules per side, quiet zone excluded. */
  modules: number
  /** Conditions that may stop the code from scanning, or options that were ignored or cut. */
  warnings: string[]
}

export interface QrStats {
  /** Images made on the event loop and in the render workers. */
  madeOnLoop: number
  madeInWorker: number
  /** png/svg requests refused (429) before any image was made: not even the smallest one fitted the key's share. */
  refusedUnmade: number
  pool: RenderPoolStats
}

export interface QrService {
  /**
   * `options` holds only the options given: a member set to undefined would replace its default.
   * `payloadWarnings`: what the route said about reading the payload (e.g. a WiFi network taken as open), first in `warnings`.
   */
  generate(
    preset: Preset,
    payload: string,
    field: string,
    options: QrOptions,
    origin: string,
    caller: string,
    payloadWarnings?: readonly string[],
  ): Promise<QrResult>
  readonly store: ObjectStore
  readonly ledger: StoreLedger
  stats(): QrStats
  close(): void
}

export interface StoreShares {
  ledger: StoreLedger
  /** Bytes one caller's live images may take in the store. */
  perCaller: number
}

export function openQrService(
  store: ObjectStore,
  shares: StoreShares,
  now: () => number = Date.now,
  pool: RenderPool = createRenderPool(),
): QrService {
  const { ledger, perCaller } = shares
  let madeOnLoop = 0
  let refusedUnmade = 0
  async function generate(
    preset: Preset,
    payload: string,
    field: string,
    options: QrOptions,
    origin: string,
    caller: string,
    payloadWarnings: readonly string[] = [],
  ): Promise<QrResult> {
    const o = { ...DEFAULTS, ...options } as Required<QrOptions>
    const fg = parseColor(o.fg_color)
    const bg = parseColor(o.bg_color)
    const warnings: string[] = [...payloadWarnings]
    if (o.format === 'svg') {
      if (options.fg_color !== undefined || options.bg_color !== undefined)
        warnings.push('fg_color and bg_color are ignored for svg, which is always black on white')
      if (options.size !== undefined) warnings.push('size is ignored for svg, which scales to any size')
    } else warnings.push(...colorWarnings(fg, bg))
    if (o.format === 'base64' && options.ttl !== undefined)
      warnings.push('ttl is ignored for base64, which is returned inline and not stored')

    const nowSeconds = Math.floor(now() / 1000)
    // A key with no room left for even the smallest image is refused before its image is made: a key at
    // its share costs the loop a ledger read, not an image. The charge below still decides for the rest.
    if (o.format !== 'base64') {
      const smallest = smallestImageBytes(o)
      const room = await ledger.check(caller, smallest, nowSeconds, perCaller)
      if (!room.ok) {
        refusedUnmade++
        throw overShare(room.held, smallest, perCaller, nowSeconds, room.freesAt, true)
      }
    }
    // Large symbols and large PNGs are made in a worker (`image.ts` says which), the rest right here.
    let image: MadeImage
    if (isLarge(payload, o)) image = await pool.make(payload, field, o, caller)
    else {
      image = makeImage(payload, field, o)
      madeOnLoop++
    }
    const total = image.modules + 2 * o.margin
    if (o.format !== 'svg' && o.size < 2 * total) {
      warnings.push(
        `small modules: ${total} modules (quiet zone included) in ${o.size} pixels is under 2 pixels a module; use a size of at ` +
          `least ${2 * total} for reliable scanning`,
      )
    }
    const common = {
      size: o.format === 'svg' ? null : o.size,
      fg_color: o.format === 'svg' ? '#000000' : colorText(fg),
      bg_color: o.format === 'svg' ? '#FFFFFF' : colorText(bg),
      error_correction: o.error_correction,
      margin: o.margin,
      version: image.version,
      modules: image.modules,
      warnings,
    }
    if (o.format === 'base64') {
      return { format: 'base64', preset, data_uri: 'data:image/png;base64,' + Buffer.from(image.bytes).toString('base64'), ...common }
    }
    const name = image.name
    let ttl = o.ttl
    if (ttl > store.maxTtl) {
      warnings.push(`ttl cut from ${ttl} to ${store.maxTtl} seconds: presigned S3 links live at most 7 days`)
      ttl = store.maxTtl
    }
    const at = Math.floor(now() / 1000) // the image may have waited for a worker
    const expires = at + ttl
    // The caller's share first (429, its own problem), then the store's global cap (503, everyone's).
    const charge = await ledger.charge(caller, name, image.bytes.length, expires, at, perCaller)
    if (!charge.ok) throw overShare(charge.held, image.bytes.length, perCaller, at, charge.freesAt)
    try {
      await store.put({ name, bytes: image.bytes, contentType: CONTENT_TYPES.get(image.extension)! }, expires)
    } catch (e) {
      // The store's failure is the answer; a give-back that fails too (the ledger down as well) only leaves
      // the bytes charged until the link would have expired, against this caller alone.
      await charge.undo().catch(() => {})
      throw e
    }
    return { url: store.link(name, expires, origin, at), format: o.format, expires, preset, ...common }
  }
  return {
    generate,
    store,
    ledger,
    stats: () => {
      const p = pool.stats()
      return { madeOnLoop, madeInWorker: p.made, refusedUnmade, pool: p }
    },
    close() {
      pool.close()
      store.close()
      ledger.close()
    },
  }
}

/** The service's counters in Prometheus text, for `/metrics`. */
export const qrMetrics = (s: QrStats) =>
  [
    '# HELP almanac_qr_images_made_total QR images made (matrix and png/svg bytes), on the event loop or in the render workers.',
    '# TYPE almanac_qr_images_made_total counter',
    `almanac_qr_images_made_total{where="loop"} ${s.madeOnLoop}`,
    `almanac_qr_images_made_total{where="worker"} ${s.madeInWorker}`,
    '# HELP almanac_qr_refused_unmade_total png/svg requests refused (429) before an image was made: not even the smallest fitted the ' +
      "key's share.",
    '# TYPE almanac_qr_refused_unmade_total counter',
    `almanac_qr_refused_unmade_total ${s.refusedUnmade}`,
    '# HELP almanac_qr_render_jobs Large QR images being made in a render worker or waiting for one.',
    '# TYPE almanac_qr_render_jobs gauge',
    `almanac_qr_render_jobs{state="running"} ${s.pool.busy}`,
    `almanac_qr_render_jobs{state="queued"} ${s.pool.queued}`,
  ].join('\n') + '\n'
