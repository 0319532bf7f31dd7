/**
 * How long the event loop was held: a timer asks to run every 10 ms, and how late it runs is how long
 * something kept the loop from it (a synchronous query, a parse, a render). One monitor per process, since
 * there is one loop per process, whatever number of apps it builds (tests build many).
 *
 * Exposed at `/metrics` as the longest lateness since the previous scrape (a gauge that each scrape resets,
 * so one scrape interval's worst block is visible even when it lasted 60 ms of a 15 s interval) and a
 * histogram of every tick's lateness since start (for rates and alerts). A scrape also counts the tick
 * still waiting: a scrape answered right after a block sees it even before the timer catches up.
 * Cost: one timer callback every 10 ms doing a clock read and a bucket search.
 */

const INTERVAL_MS = 10
/** Lateness buckets in seconds: timer noise sits under 5 ms; 50 ms is the fairness target. */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

export interface EventLoopMonitor {
  /** Exposition text; resets the since-last-scrape maximum. */
  render(): string
}

function startMonitor(now: () => number = () => performance.now()): EventLoopMonitor {
  let last = now()
  let maxSinceScrape = 0
  const buckets = new Array<number>(BUCKETS.length).fill(0)
  let count = 0
  let sum = 0
  const timer = setInterval(() => {
    const t = now()
    const late = Math.max(0, t - last - INTERVAL_MS) / 1000
    last = t
    if (late > maxSinceScrape) maxSinceScrape = late
    count++
    sum += late
    let b = 0
    while (b < BUCKETS.length && late > BUCKETS[b]!) b++
    if (b < BUCKETS.length) buckets[b]!++
  }, INTERVAL_MS)
  // The monitor never keeps a process alive on its own.
  timer.unref?.()

  return {
    render() {
      const pending = Math.max(0, now() - last - INTERVAL_MS) / 1000
      const max = Math.max(maxSinceScrape, pending)
      maxSinceScrape = 0
      const out = [
        '# HELP almanac_event_loop_max_block_seconds Longest time the event loop was held (a 10 ms timer ran late) since the previous ' +
          'scrape; each scrape resets it.',
        '# TYPE almanac_event_loop_max_block_seconds gauge',
        `almanac_event_loop_max_block_seconds ${max}`,
        '# HELP almanac_event_loop_lag_seconds How late each 10 ms event-loop timer tick ran, since start.',
        '# TYPE almanac_event_loop_lag_seconds histogram',
      ]
      let cumulative = 0
      BUCKETS.forEach((le, i) => out.push(`almanac_event_loop_lag_seconds_bucket{le="${le}"} ${(cumulative += buckets[i]!)}`))
      out.push(`almanac_event_loop_lag_seconds_bucket{le="+Inf"} ${count}`)
      out.push(`almanac_event_loop_lag_seconds_sum ${sum}`)
      out.push(`almanac_event_loop_lag_seconds_count ${count}`)
      return out.join('\n')
    },
  }
}

let monitor: EventLoopMonitor | undefined

/** The process's monitor, started on first use. */
export const eventLoopMonitor = (): EventLoopMonitor => (monitor ??= startMonitor())
