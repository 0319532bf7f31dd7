/**
 * The QR service: payload text -> matrix -> image (png, svg, or a base64 data URI), stored and linked
 * for png and svg. No HTTP here: the route builds the payload with `payloads.ts`, passes the common
 * options, the origin links are made for and the caller (whose share of the store a stored image is
 * charged to, `shares.ts`), and presents the result.
 */
import { createHash } from 'node:crypto'
import { invalid } from '../../lib/errors.ts'
import { colorText, colorWarnings, parseColor, type Rgb } from './colors.ts'
import { encodeMatrix, type EcLevel, type QrMatrix } from './matrix.ts'
import type { Preset } from './payloads.ts'
import { renderPng } from './png.ts'
import { overShare, type StoreLedger } from './shares.ts'
import { renderSvg } from './svg.ts'
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

export interface RenderedImage {
  matrix: QrMatrix
  bytes: Uint8Array
  extension: 'png' | 'svg'
}

/** The image alone, for one payload and fully resolved options (used by the service and the bench). */
export const renderImage = (payload: string, field: string, o: Required<QrOptions>): RenderedImage =>
  renderMatrix(encodeMatrix(payload, o.error_correction, field), o, parseColor(o.fg_color), parseColor(o.bg_color))

/** `fg` and `bg` are `o.fg_color` and `o.bg_color` parsed (by the caller, which needs them too). */
function renderMatrix(matrix: QrMatrix, o: Required<QrOptions>, fg: Rgb, bg: Rgb): RenderedImage {
  if (o.format === 'svg') return { matrix, bytes: new TextEncoder().encode(renderSvg(matrix, o.margin)), extension: 'svg' }
  return {
    matrix,
    bytes: renderPng(matrix, { size: o.size, margin: o.margin, fg, bg }),
    extension: 'png',
  }
}

export interface QrService {
  /** `options` holds only the options given: a member set to undefined would replace its default. */
  generate(preset: Preset, payload: string, field: string, options: QrOptions, origin: string, caller: string): Promise<QrResult>
  readonly store: ObjectStore
  readonly ledger: StoreLedger
  close(): void
}

export interface StoreShares {
  ledger: StoreLedger
  /** Bytes one caller's live images may take in the store. */
  perCaller: number
}

export function createQrService(store: ObjectStore, shares: StoreShares, now: () => number = Date.now): QrService {
  const { ledger, perCaller } = shares
  async function generate(
    preset: Preset,
    payload: string,
    field: string,
    options: QrOptions,
    origin: string,
    caller: string,
  ): Promise<QrResult> {
    const o = { ...DEFAULTS, ...options } as Required<QrOptions>
    const fg = parseColor(o.fg_color)
    const bg = parseColor(o.bg_color)
    const warnings: string[] = []
    if (o.format === 'svg') {
      if (options.fg_color !== undefined || options.bg_color !== undefined)
        warnings.push('fg_color and bg_color are ignored for svg, which is always black on white')
      if (options.size !== undefined) warnings.push('size is ignored for svg, which scales to any size')
    } else warnings.push(...colorWarnings(fg, bg))
    if (o.format === 'base64' && options.ttl !== undefined)
      warnings.push('ttl is ignored for base64, which is returned inline and not stored')

    const matrix = encodeMatrix(payload, o.error_correction, field)
    const total = matrix.size + 2 * o.margin
    if (o.format !== 'svg' && o.size < total) {
      const message = `is ${o.size} pixels, fewer than the ${total} modules (quiet zone included) of this code (version ${matrix.version}): modules would be lost. Use a size of at least ${total} (${2 * total} or more scans reliably), a smaller margin or a lower error_correction`
      throw invalid('size', message)
    }
    const image = renderMatrix(matrix, o, fg, bg)
    if (o.format !== 'svg' && o.size < 2 * total) {
      warnings.push(
        `small modules: ${total} modules (quiet zone included) in ${o.size} pixels is under 2 pixels a module; use a size of at least ${2 * total} for reliable scanning`,
      )
    }
    const common = {
      size: o.format === 'svg' ? null : o.size,
      fg_color: o.format === 'svg' ? '#000000' : colorText(fg),
      bg_color: o.format === 'svg' ? '#FFFFFF' : colorText(bg),
      error_correction: o.error_correction,
      margin: o.margin,
      version: matrix.version,
      modules: matrix.size,
      warnings,
    }
    if (o.format === 'base64') {
      return { format: 'base64', preset, data_uri: 'data:image/png;base64,' + Buffer.from(image.bytes).toString('base64'), ...common }
    }
    const name = `${createHash('sha256').update(image.bytes).digest('hex')}.${image.extension}`
    let ttl = o.ttl
    if (ttl > store.maxTtl) {
      warnings.push(`ttl cut from ${ttl} to ${store.maxTtl} seconds: presigned S3 links live at most 7 days`)
      ttl = store.maxTtl
    }
    const nowSeconds = Math.floor(now() / 1000)
    const expires = nowSeconds + ttl
    // The caller's share first (429, its own problem), then the store's global cap (503, everyone's).
    const charge = ledger.charge(caller, name, image.bytes.length, expires, nowSeconds, perCaller)
    if (!charge.ok) throw overShare(charge.held, image.bytes.length, perCaller, nowSeconds, charge.freesAt)
    try {
      await store.put({ name, bytes: image.bytes, contentType: CONTENT_TYPES.get(image.extension)! }, expires)
    } catch (e) {
      charge.undo()
      throw e
    }
    return { url: store.link(name, expires, origin), format: o.format, expires, preset, ...common }
  }
  return {
    generate,
    store,
    ledger,
    close() {
      store.close()
      ledger.close()
    },
  }
}
