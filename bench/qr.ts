/**
 * QR image speed. In process, per call (p50/p99 over many single calls): our matrix + PNG written directly
 * against node-qrcode's own PNG path (`QRCode.toBuffer`, pngjs), measured in the same run: the issue's
 * target is a 400 px PNG in <= 1 ms p50. Then over HTTP (wrk) against a hello-world baseline: png with a
 * signed link (local store), svg, and base64. Prints figures; asserts nothing. Run: `bun bench/qr.ts`.
 * This machine's 2 cores are shared with other work: figures are noisy, compare ratios within one run.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import QRCode from 'qrcode'
import { encodeMatrix } from '../src/domains/qr/matrix.ts'
import { parseColor } from '../src/domains/qr/colors.ts'
import { renderPng } from '../src/domains/qr/png.ts'
import { renderSvg } from '../src/domains/qr/svg.ts'
import { makeImage } from '../src/domains/qr/image.ts'
import { DEFAULTS } from '../src/domains/qr/service.ts'
import { compareWithHello } from './lib.ts'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const URL_TEXT = 'https://example.com/products/12345?utm_source=qr&utm_medium=print'
const LONG_TEXT = 'The quick brown fox jumps over the lazy dog. '.repeat(20) // 900 bytes

interface Timing {
  p50: number
  p99: number
  mean: number
}

/** Times each call on its own (µs), after a warm-up. */
async function timeEach(calls: number, fn: () => unknown): Promise<Timing> {
  for (let i = 0; i < Math.min(200, calls); i++) await fn()
  const times = new Float64Array(calls)
  for (let i = 0; i < calls; i++) {
    const t0 = Bun.nanoseconds()
    const r = fn()
    if (r instanceof Promise) await r
    times[i] = (Bun.nanoseconds() - t0) / 1000
  }
  times.sort()
  const mean = times.reduce((a, b) => a + b, 0) / calls
  return { p50: times[Math.floor(calls * 0.5)]!, p99: times[Math.floor(calls * 0.99)]!, mean }
}

const options = (size: number, format: 'png' | 'svg' = 'png', error_correction: 'L' | 'M' | 'Q' | 'H' = 'M') => ({
  ...DEFAULTS,
  size,
  format,
  error_correction,
  margin: 4,
})

const rows: { name: string; t: Timing; baseline?: Timing }[] = []
const row = (name: string, t: Timing, baseline?: Timing) => rows.push({ name, t, baseline })

const fg = parseColor('#000000')
const bg = parseColor('#FFFFFF')
const urlMatrix = encodeMatrix(URL_TEXT, 'M', 'text')
const longMatrix = encodeMatrix(LONG_TEXT, 'M', 'text')

const baseline400 = await timeEach(1000, () => QRCode.toBuffer(URL_TEXT, { width: 400, margin: 4, errorCorrectionLevel: 'M', type: 'png' }))
row('node-qrcode toBuffer: URL, 400 px (baseline)', baseline400)
row('ours: URL -> matrix -> PNG, 400 px', await timeEach(5000, () => makeImage(URL_TEXT, 'text', options(400))), baseline400)
row(
  'ours: PNG only from the matrix, 400 px',
  await timeEach(5000, () => renderPng(urlMatrix, { size: 400, margin: 4, fg, bg })),
  baseline400,
)
row('ours: matrix only (npm qrcode core)', await timeEach(5000, () => encodeMatrix(URL_TEXT, 'M', 'text')), baseline400)
row('ours: URL -> SVG text', await timeEach(5000, () => renderSvg(urlMatrix, 4)), baseline400)

const baseline2000 = await timeEach(200, () =>
  QRCode.toBuffer(LONG_TEXT, { width: 2000, margin: 4, errorCorrectionLevel: 'M', type: 'png' }),
)
row('node-qrcode toBuffer: 900 bytes, 2000 px (baseline)', baseline2000)
row('ours: 900 bytes -> matrix -> PNG, 2000 px', await timeEach(1000, () => makeImage(LONG_TEXT, 'text', options(2000))), baseline2000)
row(
  'ours: PNG only, 900 bytes (version 24), 2000 px',
  await timeEach(1000, () => renderPng(longMatrix, { size: 2000, margin: 4, fg, bg })),
  baseline2000,
)
row(
  'ours: 4296 alphanumeric at L (version 40) -> PNG 400 px',
  await timeEach(50, () => makeImage('A1'.repeat(2148), 'text', options(400, 'png', 'L'))),
)

console.log('\nIn process, one call at a time (µs; ratio = baseline p50 / ours p50, higher is faster)')
console.log('| call | p50 µs | p99 µs | mean µs | speed-up vs baseline p50 |')
console.log('|---|---:|---:|---:|---:|')
for (const { name, t, baseline } of rows)
  console.log(
    `| ${name} | ${t.p50.toFixed(1)} | ${t.p99.toFixed(1)} | ${t.mean.toFixed(1)} ` +
      `| ${baseline ? (baseline.p50 / t.p50).toFixed(1) + 'x' : ''} |`,
  )
const ours = rows[1]!.t
console.log(
  `\n400 px PNG p50 ${(ours.p50 / 1000).toFixed(3)} ms (target <= 1 ms: ${ours.p50 <= 1000 ? 'met' : 'NOT met'}); ` +
    `node-qrcode ${(baseline400.p50 / 1000).toFixed(3)} ms`,
)

const state = mkdtempSync(join(tmpdir(), 'almanac-bench-qr-'))
try {
  const body = (format: string) => ({ url: URL_TEXT, format })
  await compareWithHello(
    `QR over HTTP (wrk, 32 connections, ${SECONDS} s each)`,
    [
      {
        name: 'POST /qr/url png 400 px, stored + signed link',
        method: 'POST',
        path: '/api/v1/qr/url',
        body: body('png'),
        seconds: SECONDS,
      },
      { name: 'POST /qr/url svg, stored + signed link', method: 'POST', path: '/api/v1/qr/url', body: body('svg'), seconds: SECONDS },
      { name: 'POST /qr/url base64 400 px (inline)', method: 'POST', path: '/api/v1/qr/url', body: body('base64'), seconds: SECONDS },
    ],
    { ALMANAC_STATE_DIR: state },
  )
} finally {
  rmSync(state, { recursive: true, force: true })
}
