/**
 * /docs in real headless Chromium: the page renders the API from /openapi.json with every asset served by
 * Almanac itself; any request to a host outside loopback is refused and fails the test.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { domains as allDomains } from '../../src/domains/index.ts'
import { openBrowser, CHROMIUM, type Browser } from '../support/chromium.ts'
import { sampleDomain } from '../support/sample-domain.ts'
import { liveServer, type LiveServer } from './helpers.ts'

let server: LiveServer
let browser: Browser

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`)
  server = await liveServer({ domains: [...allDomains, sampleDomain()] })
  browser = await openBrowser()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop()
})

test('the docs page lists the endpoints of /openapi.json, offline', async () => {
  const { page } = browser
  const served: string[] = []
  page.on('response', (r) => served.push(`${r.status()} ${new URL(r.url()).pathname}`))
  await page.goto(`${server.url}/docs`, { waitUntil: 'load' })
  await page.waitForSelector('.opblock-summary-path', { timeout: 30_000 })

  const listed = await page.$$eval('.opblock-summary-path', (els) => els.map((e) => e.getAttribute('data-path') ?? e.textContent ?? ''))
  const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, unknown> }
  const documented = Object.keys(doc.paths)
  expect(documented).toContain('/api/v1/planets/{name}')
  // Every path of the document is on the page (Swagger UI lists each operation under its tag).
  for (const path of documented) expect(listed.map((p) => p.replace(/\u200b/g, ''))).toContain(path)

  const text = await page.textContent('body')
  expect(text).toContain('Almanac API')
  expect(text).toContain('Several planets')
  // The UI came from our own routes, not a CDN.
  expect(served).toContain('200 /docs/swagger-ui-bundle.js')
  expect(served).toContain('200 /docs/swagger-ui.css')
  expect(served).toContain('200 /openapi.json')
  expect(browser.outside).toEqual([])
  expect(browser.errors.filter((e) => !/favicon/.test(e))).toEqual([])
}, 90_000)

test('an operation expands to show the security scheme and both response forms', async () => {
  const { page } = browser
  await page.click('#operations-planets-postApiV1PlanetsBulk .opblock-summary')
  await page.waitForSelector('#operations-planets-postApiV1PlanetsBulk .responses-table', { timeout: 15_000 })
  const text = (await page.textContent('#operations-planets-postApiV1PlanetsBulk')) ?? ''
  expect(text).toContain('Quota cost')
  expect(text).toContain('429')
  expect(text).toContain('X-Quota-Remaining')
  expect(await page.$('.btn.authorize')).not.toBeNull()
  expect(browser.outside).toEqual([])
}, 60_000)
