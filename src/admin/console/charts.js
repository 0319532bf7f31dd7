/**
 * Charts in plain SVG, built with DOM calls (every label is a text node, never markup): stacked bars over
 * periods, horizontal bars for rankings, and a line for live samples. Each chart is an `role="img"` with
 * a text summary, and its numbers are also shown as text in the tables beside it.
 */
const SVG = 'http://www.w3.org/2000/svg'

/** Okabe–Ito: told apart by people with any common colour vision deficiency. */
export const PALETTE = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00', '#F0E442', '#555555']

const el = (name, attributes = {}, text) => {
  const node = document.createElementNS(SVG, name)
  for (const [k, v] of Object.entries(attributes)) node.setAttribute(k, String(v))
  if (text !== undefined) node.textContent = String(text)
  return node
}

/** A short form of a count: 950, 1.2k, 3.4M. */
export const short = (n) => {
  const abs = Math.abs(n)
  if (abs >= 1e9) return `${+(n / 1e9).toFixed(1)}G`
  if (abs >= 1e6) return `${+(n / 1e6).toFixed(1)}M`
  if (abs >= 1e4) return `${+(n / 1e3).toFixed(0)}k`
  if (abs >= 1e3) return `${+(n / 1e3).toFixed(1)}k`
  return `${+n.toFixed(2)}`
}

/** Round tick values from 0 to at least `max`: steps of 1, 2 or 5 times a power of ten. */
export function ticks(max, count = 4) {
  if (!(max > 0)) return [0, 1]
  const raw = max / count
  const power = 10 ** Math.floor(Math.log10(raw))
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power
  const out = []
  for (let v = 0; v < max + step; v += step) out.push(+v.toFixed(10))
  return out
}

function frame(container, width, height, summary) {
  container.replaceChildren()
  const svg = el('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img', class: 'chart', 'aria-label': summary })
  svg.append(el('title', {}, summary))
  container.append(svg)
  return svg
}

function legend(container, names) {
  const list = document.createElement('ul')
  list.className = 'legend'
  names.forEach((name, i) => {
    const item = document.createElement('li')
    const swatch = document.createElement('span')
    swatch.className = `swatch swatch-${i % PALETTE.length}`
    item.append(swatch, document.createTextNode(name))
    list.append(item)
  })
  container.append(list)
}

function yAxis(svg, scale, height, top, left, right) {
  const max = scale.at(-1)
  for (const v of scale) {
    const y = top + height - (v / max) * height
    svg.append(el('line', { x1: left, x2: right, y1: y, y2: y, class: v === 0 ? 'axis' : 'grid' }))
    svg.append(el('text', { x: left - 6, y: y + 4, 'text-anchor': 'end', class: 'tick' }, short(v)))
  }
}

/**
 * Stacked bars: one bar per period, one colour per series (its values align with `periods`). `labels`
 * are the periods as shown under the axis (every few are left out when they would overlap).
 */
export function stackedBars(container, { periods, labels, series, unit = 'requests', empty = 'No requests in this period.' }) {
  const total = periods.map((_, i) => series.reduce((sum, s) => sum + (s.values[i] ?? 0), 0))
  const sum = total.reduce((a, b) => a + b, 0)
  const width = 640
  const height = 240
  const [top, left, bottom, right] = [12, 48, 40, 8]
  const summary = `${short(sum)} ${unit} over ${periods.length} periods, ${series.length} series`
  const svg = frame(container, width, height, sum ? summary : empty)
  const scale = ticks(Math.max(...total, 0))
  const plot = height - top - bottom
  yAxis(svg, scale, plot, top, left, width - right)
  const slot = (width - left - right) / Math.max(periods.length, 1)
  const barWidth = Math.max(1, slot * 0.75)
  const every = Math.ceil(periods.length / Math.floor((width - left - right) / 56))
  periods.forEach((_, i) => {
    const x = left + i * slot + (slot - barWidth) / 2
    let y = top + plot
    series.forEach((s, k) => {
      const v = s.values[i] ?? 0
      if (!v) return
      const h = (v / scale.at(-1)) * plot
      y -= h
      const bar = el('rect', { x, y, width: barWidth, height: h, class: `fill-${k % PALETTE.length}` })
      bar.append(el('title', {}, `${labels[i]}: ${s.name} ${v} ${unit}`))
      svg.append(bar)
    })
    if (i % every === 0)
      svg.append(el('text', { x: x + barWidth / 2, y: height - bottom + 16, 'text-anchor': 'middle', class: 'tick' }, labels[i]))
  })
  if (!sum) svg.append(el('text', { x: width / 2, y: height / 2, 'text-anchor': 'middle', class: 'empty' }, empty))
  legend(
    container,
    series.map((s) => s.name),
  )
}

/** Horizontal bars, one per item, largest first as given: rankings (top callers, refusals by reason). */
export function horizontalBars(container, items, { unit = 'requests', empty = 'Nothing to show.' } = {}) {
  const rowHeight = 24
  const width = 480
  const labelWidth = 150
  const height = Math.max(1, items.length) * rowHeight + 28
  const max = Math.max(...items.map((i) => i.value), 0)
  const summary = items.length ? items.map((i) => `${i.label}: ${i.value} ${unit}`).join('; ') : empty
  const svg = frame(container, width, height, summary)
  const scale = ticks(max)
  const span = width - labelWidth - 16
  for (const v of scale) {
    const x = labelWidth + (v / scale.at(-1)) * span
    svg.append(el('line', { x1: x, x2: x, y1: 0, y2: height - 20, class: v === 0 ? 'axis' : 'grid' }))
    svg.append(el('text', { x, y: height - 6, 'text-anchor': 'middle', class: 'tick' }, short(v)))
  }
  items.forEach((item, i) => {
    const y = i * rowHeight + 4
    const label = item.label.length > 22 ? `${item.label.slice(0, 21)}…` : item.label
    svg.append(el('text', { x: labelWidth - 8, y: y + 15, 'text-anchor': 'end', class: 'label' }, label))
    const w = scale.at(-1) ? (item.value / scale.at(-1)) * span : 0
    const bar = el('rect', {
      x: labelWidth,
      y,
      width: Math.max(w, item.value ? 1 : 0),
      height: rowHeight - 8,
      class: `fill-${item.colour ?? 0}`,
    })
    bar.append(el('title', {}, `${item.label}: ${item.value} ${unit}`))
    svg.append(bar, el('text', { x: labelWidth + w + 4, y: y + 13, class: 'value' }, short(item.value)))
  })
  if (!items.length) svg.append(el('text', { x: width / 2, y: 18, 'text-anchor': 'middle', class: 'empty' }, empty))
}

/** A line over samples `{at: ms, value}`, the time axis in seconds before the last sample. */
export function line(container, samples, { unit = 'per second' } = {}) {
  const width = 640
  const height = 180
  const [top, left, bottom, right] = [12, 48, 28, 8]
  const last = samples.at(-1)
  const svg = frame(container, width, height, last ? `Latest ${short(last.value)} ${unit}, ${samples.length} samples` : 'No samples yet.')
  const scale = ticks(Math.max(...samples.map((s) => s.value), 0))
  const plot = height - top - bottom
  yAxis(svg, scale, plot, top, left, width - right)
  if (samples.length < 2) return
  const first = samples[0].at
  const spanMs = Math.max(last.at - first, 1)
  const x = (s) => left + ((s.at - first) / spanMs) * (width - left - right)
  const y = (s) => top + plot - (s.value / scale.at(-1)) * plot
  svg.append(el('polyline', { points: samples.map((s) => `${x(s).toFixed(1)},${y(s).toFixed(1)}`).join(' '), class: 'stroke-0' }))
  svg.append(el('text', { x: left, y: height - 8, class: 'tick' }, `${Math.round(spanMs / 1000)} s ago`))
  svg.append(el('text', { x: width - right, y: height - 8, 'text-anchor': 'end', class: 'tick' }, 'now'))
}
