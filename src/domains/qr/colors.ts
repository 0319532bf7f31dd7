/**
 * Colours `#RGB` / `#RRGGBB` (case-insensitive) and the contrast check behind the `warnings` field. The
 * contrast is WCAG 2's ratio of relative luminances (1:1 to 21:1); scanners binarise the image, so a pair
 * below 3:1 is flagged, and so is a foreground lighter than its background (an inverted code, which many
 * scanners do not try).
 */

export interface Rgb {
  r: number
  g: number
  b: number
}

/** Schema pattern; the route checks it, so `parseColor` sees only well-formed text. */
export const COLOR_PATTERN = '^#([0-9A-Fa-f]{3}|[0-9A-Fa-f]{6})$'

export const MIN_CONTRAST = 3

export function parseColor(text: string): Rgb {
  const hex = text.slice(1)
  const full = hex.length === 3 ? hex.replace(/./g, (c) => c + c) : hex
  const n = parseInt(full, 16)
  return { r: (n >> 16) & 0xff, g: (n >> 8) & 0xff, b: n & 0xff }
}

/** `#RRGGBB`, upper case: how a colour is echoed. */
export const colorText = ({ r, g, b }: Rgb) =>
  '#' +
  [r, g, b]
    .map((v) => v.toString(16).padStart(2, '0'))
    .join('')
    .toUpperCase()

const channel = (v: number) => {
  const s = v / 255
  return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4
}

export const luminance = ({ r, g, b }: Rgb) => 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)

/** WCAG 2 contrast ratio, rounded to two decimals. */
export function contrastRatio(a: Rgb, b: Rgb): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number]
  return Math.round(((hi + 0.05) / (lo + 0.05)) * 100) / 100
}

/** Warnings about a colour pair; empty when it should scan. */
export function colorWarnings(fg: Rgb, bg: Rgb): string[] {
  const out: string[] = []
  const ratio = contrastRatio(fg, bg)
  if (ratio < MIN_CONTRAST)
    out.push(
      `low contrast: fg_color and bg_color have a contrast ratio of ${ratio}:1, below ${MIN_CONTRAST}:1; scanners may not read this code`,
    )
  if (luminance(fg) > luminance(bg))
    out.push('inverted: fg_color is lighter than bg_color; many scanners only read dark modules on a light background')
  return out
}
