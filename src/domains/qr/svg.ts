/**
 * QR matrix -> SVG text: a white background and one black path of horizontal runs, in module units with
 * the quiet zone inside the viewBox. The SPEC fixes the SVG palette to black on white and ignores `size`,
 * so the image has no width or height of its own and scales to whatever box shows it.
 */
import type { QrMatrix } from './matrix.ts'

export function renderSvg(matrix: QrMatrix, margin: number): string {
  const n = matrix.size
  const total = n + 2 * margin
  const path: string[] = []
  for (let y = 0; y < n; y++) {
    const base = y * n
    let x = 0
    while (x < n) {
      if (!matrix.data[base + x]) {
        x++
        continue
      }
      const start = x
      while (x < n && matrix.data[base + x]) x++
      path.push(`M${start + margin} ${y + margin}h${x - start}v1h-${x - start}z`)
    }
  }
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${total} ${total}" shape-rendering="crispEdges">` +
    `<rect width="${total}" height="${total}" fill="#FFFFFF"/>` +
    `<path fill="#000000" d="${path.join('')}"/>` +
    `</svg>\n`
  )
}
