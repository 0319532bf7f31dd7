/**
 * Progress of a long build step or download: a redrawn bar with count, rate and ETA on a terminal; a
 * plain line every few seconds otherwise (CI logs, pipes). Counts are items, or bytes (`unit: 'bytes'`,
 * shown as kB/MB/GB and a rate per second).
 */
/** What a build step reports its progress to (BuildContext.progress hands one out). */
export interface Progress {
  tick(n?: number): void
  done(): void
}

const PLAIN_EVERY_MS = 5000

/** 1,234,567 bytes -> `1.2 MB` (decimal units, as download sizes are usually given). */
export function formatBytes(n: number): string {
  if (n < 1000) return `${n} B`
  const units = ['kB', 'MB', 'GB', 'TB']
  let v = n
  let i = -1
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000
    i++
  }
  return `${v.toFixed(v < 10 ? 2 : 1)} ${units[i]}`
}

export interface ProgressOptions {
  unit?: 'items' | 'bytes'
  /** Plain lines at most this often (default 5 s); a bar is redrawn at most every 100 ms. */
  everyMs?: number
}

export function progress(
  label: string,
  total: number | undefined,
  log: (line: string) => void,
  tty = !!process.stderr.isTTY,
  options: ProgressOptions = {},
): Progress {
  const started = performance.now()
  const every = tty ? 100 : (options.everyMs ?? PLAIN_EVERY_MS)
  const amount = options.unit === 'bytes' ? formatBytes : (n: number) => Math.round(n).toLocaleString('en')
  let count = 0
  let lastShown = 0
  const line = () => {
    const seconds = (performance.now() - started) / 1000
    const rate = count / Math.max(seconds, 0.001)
    if (!total) return `${label}: ${amount(count)} (${amount(rate)}/s)`
    const share = Math.min(1, count / total)
    const eta = rate > 0 ? Math.max(0, (total - count) / rate) : 0
    const bar = tty ? `[${'#'.repeat(Math.round(share * 24)).padEnd(24, '.')}] ` : ''
    const speed = options.unit === 'bytes' ? `${amount(rate)}/s ` : ''
    return `${label}: ${bar}${amount(count)}/${amount(total)} ${(share * 100).toFixed(0)}% ${speed}ETA ${eta.toFixed(0)}s`
  }
  return {
    tick(n = 1) {
      count += n
      const now = performance.now()
      if (now - lastShown < every) return
      lastShown = now
      if (tty) process.stderr.write(`\r${line()}\x1b[K`)
      else log(line())
    },
    done() {
      if (tty) process.stderr.write(`\r${line()}\x1b[K\n`)
      else log(line())
    },
  }
}
