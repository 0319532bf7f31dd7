/**
 * The operator console (/console) in real headless Chromium against a real `almanac serve` process (SQLite
 * key and quota stores in a temp state dir): an operator signs in with the token, issues a key and reads its
 * secret off the page, sees the key's request in the usage, moves it to a bigger plan and revokes it, each
 * with effect on the next /api/v1 request. The page asks nothing of any host outside loopback, logs no
 * error, runs under its CSP, shows a wrong token as such with no data, and a customer's key opens nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import type { Page } from 'playwright-core'
import { CONSOLE_CSP } from '../../src/admin/console.ts'
import { CHROMIUM, openBrowser, type Browser } from '../support/chromium.ts'
import { servedProcesses, type Served } from '../support/served.ts'
import { tempDirs } from '../support/temp.ts'

const TOKEN = 'x'.repeat(40)

let server: Served
let browser: Browser

// Registered before servedProcesses' own hook, so it runs first: the browser lets go of its connections,
// then the server stops (in its own time: a clean stop writes the ledger).
afterAll(async () => {
  await browser?.close()
  await server?.stop()
}, 30_000)

const serve = servedProcesses()
const tempDir = tempDirs('almanac-console-')

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`)
  server = await serve([], {
    ALMANAC_ADMIN_TOKENS: `ops:${TOKEN}`,
    ALMANAC_PLANS: 'small:5/1d,big:50/1d',
    ALMANAC_DEFAULT_PLAN: 'small',
    ALMANAC_QUOTA_STORE: 'sqlite',
    ALMANAC_STATE_DIR: tempDir(),
  })
  browser = await openBrowser()
}, 90_000)

/** A call to the public API with a customer's key, as a customer's program makes it. */
const country = (key: string) => fetch(`${server.url}/api/v1/countries/FR`, { headers: { 'x-api-key': key } })

/** Until the page's calls are answered and shown (it is `aria-busy` meanwhile). */
const settled = (page: Page) => page.locator('body[aria-busy]').waitFor({ state: 'detached' })

/** Opens the console signed out (a token left by an earlier test is forgotten first) and signs in with `token`. */
async function signIn(page: Page, token: string) {
  if (page.url().startsWith(server.url)) await page.evaluate('sessionStorage.clear()')
  const answer = await page.goto(`${server.url}/console`, { waitUntil: 'load' })
  await page.getByLabel('Operator token').fill(token)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await settled(page)
  return answer!
}

/** Shows a section of the console, its data read. */
async function open(page: Page, section: string) {
  await page.locator('#tabs').getByRole('button', { name: section }).click()
  await settled(page)
}

/** Reloads the usage section until the caller's row shows (the meter counts a request once its answer is sent). */
async function usageRow(page: Page, caller: string) {
  const row = page.locator(`#callers-table tbody tr[data-caller="${caller}"]`)
  for (let attempt = 0; attempt < 20 && (await row.count()) === 0; attempt++) {
    await page.getByRole('button', { name: 'Reload usage' }).click()
    await settled(page)
  }
  return row
}

describe('the operator console', () => {
  test('the page and its assets come from the server, under the CSP, with no inline script or style', async () => {
    const page = await fetch(`${server.url}/console`)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(page.headers.get('cache-control')).toBe('no-store')
    const html = await page.text()
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>|\sstyle=|<style|https?:\/\//)
    for (const [path, type] of [
      ['/console', 'text/html'],
      ['/console/assets/console.js', 'text/javascript'],
      ['/console/assets/charts.js', 'text/javascript'],
      ['/console/assets/console.css', 'text/css'],
    ]) {
      const r = await fetch(server.url + path)
      expect(r.status).toBe(200)
      expect(r.headers.get('content-type')).toStartWith(type!)
      expect(r.headers.get('content-security-policy')).toBe(CONSOLE_CSP)
      expect(r.headers.get('x-frame-options')).toBe('DENY')
      expect(r.headers.get('referrer-policy')).toBe('no-referrer')
      expect(r.headers.get('x-content-type-options')).toBe('nosniff')
      expect(r.headers.get('set-cookie')).toBeNull()
      // Revalidated, not refetched: the ETag answers a 304.
      const again = await fetch(server.url + path, { headers: { 'if-none-match': r.headers.get('etag')! } })
      expect(again.status).toBe(304)
    }
  })

  test('sign in, issue a key, see its usage, change its plan and revoke it, with effect on the next API request', async () => {
    const { page } = browser
    const answer = await signIn(page, TOKEN)
    expect(answer.headers()['content-security-policy']).toBe(CONSOLE_CSP)
    await page.locator('#operator', { hasText: 'ops' }).waitFor()
    expect(await page.evaluate('document.cookie')).toBe('')

    // A key on the small plan, its name markup-like: shown as text, never parsed.
    const name = 'shop <b>bold</b>'
    await page.locator('#key-create').getByLabel('Name').fill(name)
    await page.locator('#key-create').getByLabel('Plan').selectOption('small')
    await page.getByRole('button', { name: 'Create key' }).click()
    await page.locator('#secret').waitFor()
    const secret = await page.getByLabel('Secret', { exact: true }).inputValue()
    expect(secret).toMatch(/^alm_[0-9A-Za-z]{43}$/)
    const row = page.locator('#keys-table tbody tr', { hasText: name })
    await row.waitFor()
    const id = (await row.getAttribute('data-id'))!
    expect(id).toMatch(/^key_/)
    expect(await page.locator('#keys-table b').count()).toBe(0)

    const first = await country(secret)
    expect(first.status).toBe(200)
    expect(first.headers.get('x-quota-limit')).toBe('5')

    // The request shows in the usage, for that key.
    await open(page, 'Usage')
    const used = await usageRow(page, `key:${id}`)
    expect(await used.locator('.name').textContent()).toBe(name)
    expect(Number(await used.locator('.requests').textContent())).toBeGreaterThanOrEqual(1)
    expect(await page.locator('#chart-outcomes svg').getAttribute('aria-label')).toContain('2xx')
    expect(await page.locator('#chart-day-key svg rect').count()).toBeGreaterThan(0)

    // The big plan, effective on the next request (the key store is SQLite).
    await open(page, 'Keys')
    await row.getByLabel(`New plan for key ${name}`).selectOption('big')
    await row.getByRole('button', { name: 'Change plan' }).click()
    await page.locator(`#keys-table tr[data-id="${id}"] .plan`, { hasText: 'big' }).waitFor()
    const bigger = await country(secret)
    expect(bigger.status).toBe(200)
    expect(bigger.headers.get('x-quota-limit')).toBe('50')

    // Revoked after a confirmation: the next request is refused.
    await row.getByRole('button', { name: 'Revoke' }).click()
    await page.locator('#confirm[open]').waitFor()
    await page.locator('#confirm').getByRole('button', { name: 'Revoke' }).click()
    await page.locator(`#keys-table tr[data-id="${id}"] .state`, { hasText: 'revoked' }).waitFor()
    expect((await country(secret)).status).toBe(401)

    // The audit log names the operator for each change.
    await open(page, 'Audit')
    await page.locator('#audit-table tbody tr', { hasText: 'key.revoke' }).waitFor()
    expect(await page.locator('#audit-table tbody').textContent()).toContain('admin:ops')

    // Signing out forgets the token and what was read with it.
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.locator('#sign-in').waitFor()
    expect(await page.evaluate('sessionStorage.length')).toBe(0)
    expect(await page.locator('#keys-table tbody tr').count()).toBe(0)

    expect(browser.outside).toEqual([])
    expect(browser.errors).toEqual([])
  }, 90_000)

  test("a customer's plan applies to its key; a rotation with no grace leaves only the new secret", async () => {
    const { page } = browser
    await signIn(page, TOKEN)
    await open(page, 'Customers')
    const customers = page.locator('#customer-create')
    await customers.getByLabel('Name').fill('Acme')
    await customers.getByLabel('Plan').selectOption('big')
    await customers.getByRole('button', { name: 'Create customer' }).click()
    await settled(page)
    const customer = page.locator('#customers-table tbody tr', { hasText: 'Acme' })
    expect(await customer.locator('.plan').textContent()).toBe('big')
    const customerId = (await customer.getAttribute('data-id'))!

    await open(page, 'Keys')
    const keys = page.locator('#key-create')
    await keys.getByLabel('Name').fill('acme-shop')
    await keys.getByLabel('Customer').selectOption(customerId)
    await keys.getByRole('button', { name: 'Create key' }).click()
    await settled(page)
    const before = await page.getByLabel('Secret', { exact: true }).inputValue()
    expect((await country(before)).headers.get('x-quota-limit')).toBe('50')

    const row = page.locator('#keys-table tbody tr', { hasText: 'acme-shop' })
    await row.getByRole('button', { name: 'Rotate' }).click()
    await page.getByLabel('Old secret keeps working for (seconds)').fill('0')
    await page.locator('#confirm').getByRole('button', { name: 'Rotate' }).click()
    await settled(page)
    const after = await page.getByLabel('Secret', { exact: true }).inputValue()
    expect(after).not.toBe(before)
    await page.getByRole('button', { name: 'Copy' }).click()
    await page.locator('#notice', { hasText: 'copied' }).waitFor()
    expect((await country(after)).status).toBe(200)
    expect((await country(before)).status).toBe(401)
    await page.getByRole('button', { name: 'Sign out' }).click()
    expect(browser.outside).toEqual([])
    expect(browser.errors).toEqual([])
  }, 60_000)

  test('the datasets and the live figures read from the server', async () => {
    const { page } = browser
    await signIn(page, TOKEN)
    await open(page, 'Datasets')
    await page.locator('#datasets-table tbody tr[data-id="countries"]').waitFor()
    await open(page, 'Live')
    await page.locator('#live-figures dt', { hasText: 'Requests since start' }).waitFor()
    expect(await page.locator('#live-routes tbody').textContent()).toContain('/api/v1/countries/:code')
    await page.getByRole('button', { name: 'Sign out' }).click()
    expect(browser.outside).toEqual([])
    expect(browser.errors).toEqual([])
  }, 60_000)

  test('a wrong token is refused in words, and nothing is shown or kept', async () => {
    const { page } = browser
    await signIn(page, 'y'.repeat(40))
    const error = page.locator('#sign-in-error')
    await error.waitFor()
    expect(await error.textContent()).toContain('This token was refused (401)')
    expect(await page.locator('#app').isHidden()).toBe(true)
    expect(await page.locator('#keys-table tbody tr').count()).toBe(0)
    expect(await page.evaluate('sessionStorage.length')).toBe(0)
    // The browser reports the refused call itself; nothing else.
    expect(browser.errors.filter((e) => !/status of 401/.test(e))).toEqual([])
    expect(browser.outside).toEqual([])
  }, 60_000)

  test("a customer's key opens nothing of the console's data", async () => {
    const made = await fetch(`${server.url}/admin/v1/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'x-response-form': 'bare' },
      body: JSON.stringify({ name: 'customer' }),
    })
    expect(made.status).toBe(201)
    const { key } = (await made.json()) as { key: string }
    expect((await country(key)).status).toBe(200)
    const sent: Record<string, string>[] = [{ 'x-api-key': key }, { authorization: `Bearer ${key}` }]
    for (const headers of sent) {
      for (const path of ['/admin/v1/keys', '/admin/v1/usage', '/admin/v1/whoami']) {
        const r = await fetch(server.url + path, { headers: { ...headers, 'x-response-form': 'bare' } })
        expect(r.status).toBe(401)
        const body = (await r.json()) as Record<string, unknown>
        expect(body.status).toBe(401)
        expect(body.keys).toBeUndefined()
      }
    }
  })
})
