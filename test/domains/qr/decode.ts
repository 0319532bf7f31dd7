/**
 * Independent QR decoders for the tests: zbar's `zbarimg` (Debian zbar-tools; `-Sbinary` gives the raw
 * bytes, no charset guessing) and npm `jsqr` over pixels read by npm `pngjs`. SVG is rasterised first by
 * librsvg's `rsvg-convert` (Debian librsvg2-bin). None of them shares code with what they check.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import jsQR from 'jsqr'
import { PNG } from 'pngjs'

const dir = mkdtempSync(join(tmpdir(), 'almanac-qr-decode-'))
process.on('exit', () => rmSync(dir, { recursive: true, force: true }))
let counter = 0

/** The payload zbar reads from a PNG, as UTF-8 text; null when it finds no code. */
export function zbar(png: Uint8Array): string | null {
  const file = join(dir, `${counter++}.png`)
  writeFileSync(file, png)
  const run = Bun.spawnSync(['zbarimg', '--raw', '-q', '-Sbinary', '-Sdisable', '-Sqrcode.enable', file], { stderr: 'pipe' })
  rmSync(file, { force: true })
  if (run.exitCode !== 0) return null
  return Buffer.from(run.stdout).toString('utf8')
}

export interface Pixels {
  width: number
  height: number
  /** RGBA, row-major. */
  data: Uint8Array
}

/** Pixels of any PNG, by pngjs. */
export function readPng(png: Uint8Array): Pixels {
  const image = PNG.sync.read(Buffer.from(png))
  return { width: image.width, height: image.height, data: new Uint8Array(image.data) }
}

/** The payload jsQR reads from a PNG, as UTF-8 text of its raw bytes; null when it finds no code. */
export function jsqr(png: Uint8Array): string | null {
  const { width, height, data } = readPng(png)
  const found = jsQR(new Uint8ClampedArray(data.buffer, data.byteOffset, data.length), width, height, { inversionAttempts: 'attemptBoth' })
  return found ? Buffer.from(found.binaryData).toString('utf8') : null
}

/** An SVG rasterised to a PNG `width` pixels wide by rsvg-convert, on white. */
export function rasterise(svg: string | Uint8Array, width = 600): Uint8Array {
  const run = Bun.spawnSync(['rsvg-convert', '-w', String(width), '-b', 'white', '-f', 'png'], {
    stdin: typeof svg === 'string' ? Buffer.from(svg) : svg,
    stderr: 'pipe',
  })
  if (run.exitCode !== 0) throw new Error(`rsvg-convert failed: ${run.stderr.toString()}`)
  return new Uint8Array(run.stdout)
}

/** Both decoders must agree on a PNG; returns what they read. */
export function decodeBoth(png: Uint8Array): { zbar: string | null; jsqr: string | null } {
  return { zbar: zbar(png), jsqr: jsqr(png) }
}

/** Bytes of a `data:image/png;base64,` URI. */
export function fromDataUri(uri: string): Uint8Array {
  const prefix = 'data:image/png;base64,'
  if (!uri.startsWith(prefix)) throw new Error(`not a PNG data URI: ${uri.slice(0, 40)}`)
  return new Uint8Array(Buffer.from(uri.slice(prefix.length), 'base64'))
}
