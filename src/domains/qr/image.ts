/**
 * One image from a payload and fully resolved options: the matrix, the size check, the PNG or SVG bytes
 * and their content-addressed name. Pure and synchronous, so it runs the same on the event loop (small
 * symbols) and in the render worker (large ones, `render-pool.ts`). Also what the service knows about an
 * image before making it: whether it is large, and the fewest bytes any image of these options takes.
 */
import { createHash } from 'node:crypto'
import { invalid } from '../../lib/errors.ts'
import { parseColor } from './colors.ts'
import { dataBits, type EcLevel, encodeMatrix } from './matrix.ts'
import { renderPng } from './png.ts'
import { renderSvg } from './svg.ts'

/** The options an image depends on (the service's QrOptions with its defaults filled in). */
export interface ImageOptions {
  format: 'png' | 'svg' | 'base64'
  size: number
  fg_color: string
  bg_color: string
  error_correction: EcLevel
  margin: number
}

export interface MadeImage {
  version: number
  /** Modules per side, quiet zone excluded. */
  modules: number
  bytes: Uint8Array
  extension: 'png' | 'svg'
  /** `<sha256 of the bytes>.<extension>`: the object's name in the store. */
  name: string
}

/** Encodes, checks `size` against the modules (a 422 naming it) and renders; a payload over capacity is a 422 too. */
export function makeImage(payload: string, field: string, o: ImageOptions): MadeImage {
  const matrix = encodeMatrix(payload, o.error_correction, field)
  const total = matrix.size + 2 * o.margin
  if (o.format !== 'svg' && o.size < total) {
    const message =
      `is ${o.size} pixels, fewer than the ${total} modules (quiet zone included) of this code ` +
      `(version ${matrix.version}): modules would be lost. Use a size of at least ${total} (${2 * total} or more scans reliably), a ` +
      `smaller margin or a lower error_correction`
    throw invalid('size', message)
  }
  const extension = o.format === 'svg' ? 'svg' : 'png'
  const bytes =
    extension === 'svg'
      ? new TextEncoder().encode(renderSvg(matrix, o.margin))
      : renderPng(matrix, { size: o.size, margin: o.margin, fg: parseColor(o.fg_color), bg: parseColor(o.bg_color) })
  const name = `${createHash('sha256').update(bytes).digest('hex')}.${extension}`
  return { version: matrix.version, modules: matrix.size, bytes, extension, name }
}

/**
 * Versions from this one up are made in the render worker. Measured in process on this 2-core machine
 * (docs/qr.md): matrix + SVG or 400 px PNG takes ~0.3 ms p50 at version 9, ~0.6 ms at 20, ~0.8 ms at 25,
 * 1.2-1.8 ms at 33-40; below 20 a request holds the loop well under a millisecond.
 */
export const WORKER_VERSION = 20
/**
 * PNGs (and base64) this many pixels wide or more are made in the worker whatever the version: deflating ~0.5 MB of rows at
 * 2000 px takes ~0.7-1.5 ms.
 */
export const WORKER_PIXELS = 1000

/**
 * Whether to make this image in the worker. The payload's bits are bounded above by encoding it all as
 * bytes (8 per UTF-8 byte, plus a 20-bit header), so a payload this says is small always fits a version
 * below WORKER_VERSION; some payloads sent to the worker would have been small (digits, capitals): harmless.
 */
export function isLarge(payload: string, o: ImageOptions): boolean {
  if (o.format !== 'svg' && o.size >= WORKER_PIXELS) return true
  return Buffer.byteLength(payload, 'utf8') * 8 + 20 > dataBits(WORKER_VERSION - 1, o.error_correction)
}

/**
 * Fewer bytes than any png or svg of these options takes, whatever the payload: what a key must have left
 * of its share for its request to be worth making. An SVG's fixed text with an empty path (the path of a
 * real code only adds to it); a PNG's signature, IHDR, PLTE, IDAT, IEND chunks and the zlib stream's
 * 2-byte header and 4-byte checksum around at least one byte of deflate.
 */
export function smallestImageBytes(o: ImageOptions): number {
  if (o.format === 'svg')
    return new TextEncoder().encode(renderSvg({ size: 21, data: new Uint8Array(21 * 21), version: 1 }, o.margin)).length
  return 8 + 25 + 18 + (12 + 2 + 1 + 4) + 12
}
