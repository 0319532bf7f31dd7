/**
 * Real headless Chromium (Debian's `/usr/bin/chromium`) driven by playwright-core, with a fresh profile and
 * every request to a host outside the loopback range refused and recorded, so a page that needs the
 * internet fails its test instead of passing on a machine that happens to have a network.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type BrowserContext, type Page } from 'playwright-core'

export const CHROMIUM = process.env.ALMANAC_CHROMIUM ?? '/usr/bin/chromium'

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

const isLoopback = (host: string) => host === 'localhost' || host === '[::1]' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host)

export interface Browser {
  page: Page
  context: BrowserContext
  /** URLs the page tried to fetch from a non-loopback host (all were refused). */
  outside: string[]
  /** Console errors and uncaught page errors. */
  errors: string[]
  close(): Promise<void>
}

export async function openBrowser(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'almanac-chromium-'))
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: ARGS, offline: false })
  const outside: string[] = []
  const errors: string[] = []
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url())
    if (
      (url.protocol === 'http:' || url.protocol === 'https:' || url.protocol === 'ws:' || url.protocol === 'wss:') &&
      !isLoopback(url.hostname)
    ) {
      outside.push(url.href)
      return route.abort('blockedbyclient')
    }
    return route.continue()
  })
  context.on('request', (request) => {
    const url = new URL(request.url())
    if (url.protocol.startsWith('http') && !isLoopback(url.hostname) && !outside.includes(url.href)) outside.push(url.href)
  })
  const page = context.pages()[0] ?? (await context.newPage())
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text())
  })
  page.on('pageerror', (e) => errors.push(String(e)))
  return {
    page,
    context,
    outside,
    errors,
    async close() {
      await context.close()
      rmSync(profile, { recursive: true, force: true })
    },
  }
}
