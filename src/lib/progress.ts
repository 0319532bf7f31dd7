/**
 * Progress of a long build step: a redrawn bar with count, rate and ETA on a terminal; a plain line
 * every few seconds otherwise (CI logs, pipes).
 */
import type { Progress } from '../data/types.ts'

const PLAIN_EVERY_MS = 5000

export function progress(label: string, total: number | undefined, log: (line: string) => void, tty = !!process.stderr.isTTY): Progress {
  const started = performance.now()
  let count = 0
  let lastShown = 0
  const line = () => {
    const seconds = (performance.now() - started) / 1000
    const rate = count / Math.max(seconds, 0.001)
    if (!total) return `${label}: ${count.toLocaleString('en')} (${Math.round(rate).toLocaleString('en')}/s)`
    const share = Math.min(1, count / total)
    const eta = rate > 0 ? Math.max(0, (total - count) / rate) : 0
    const bar = tty ? `[${'#'.repeat(Math.round(share * 24)).padEnd(24, '.')}] ` : ''
    return `${label}: ${bar}${count.toLocaleString('en')}/${total.toLocaleString('en')} ${(share * 100).toFixed(0)}% ETA ${eta.toFixed(0)}s`
  }
  return {
    tick(n = 1) {
      count += n
      const now = performance.now()
      if (now - lastShown < (tty ? 100 : PLAIN_EVERY_MS)) return
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
