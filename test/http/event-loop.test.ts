/**
 * The event-loop monitor behind `/metrics`: the gauge and histogram are exposed, and a block of the loop
 * (a busy loop in this process, which is also the server's) shows in the next scrape.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { liveServer, type LiveServer } from './helpers.ts'

let server: LiveServer
beforeAll(async () => {
  server = await liveServer({ env: { ALMANAC_ACCESS_LOG: 'false' } })
})
afterAll(() => server.stop())

const scrape = async () => (await fetch(server.url + '/metrics')).text()
const maxBlock = (text: string) => Number(/^almanac_event_loop_max_block_seconds (\S+)$/m.exec(text)?.[1])

/** Holds the loop: no timer can run until it returns. */
function holdLoop(ms: number) {
  const until = performance.now() + ms
  while (performance.now() < until) {}
}

test('the longest block and the lag histogram are exposed', async () => {
  const text = await scrape()
  expect(text).toContain('# TYPE almanac_event_loop_max_block_seconds gauge')
  expect(text).toContain('# TYPE almanac_event_loop_lag_seconds histogram')
  expect(text).toMatch(/^almanac_event_loop_lag_seconds_bucket\{le="0.05"\} \d+$/m)
  expect(text).toMatch(/^almanac_event_loop_lag_seconds_count \d+$/m)
  expect(maxBlock(text)).toBeGreaterThanOrEqual(0)
})

test('a blocked loop shows in the next scrape', async () => {
  await scrape() // resets the since-last-scrape maximum
  holdLoop(120)
  // The 10 ms timer ran about 110 ms late: the gauge says at least most of the 120 ms hold.
  expect(maxBlock(await scrape())).toBeGreaterThanOrEqual(0.1)
})
