/**
 * The three user-agent endpoints through the real app and the built detection data. Expectations are
 * public facts (who runs GPTBot, what curl is, Microsoft's Windows 11 Client Hints rule, Google's Pixel)
 * or Matomo's own fixtures, never our own output.
 */
import { afterAll, beforeAll, describe, expect, spyOn, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import uaDomain from '../../../src/domains/ua/index.ts'
import { testApp, type TestApp } from '../../support/app.ts'
import { turnCounter } from '../../support/turns.ts'
import { FIXTURES } from './corpus.ts'

let app: TestApp
beforeAll(async () => {
  app = await testApp({ domains: [uaDomain] })
})
afterAll(() => app.close())

const parse = (body: unknown, form: 'enveloped' | 'bare' = 'enveloped', query = '') =>
  app.json('POST', `/api/v1/ua${query}`, { body, form })

const CHROME_ANDROID_REDUCED =
  'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36'
const CHROME_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36'

describe('real user agents', () => {
  test('Chrome on Windows (Form A): browser, OS, desktop, not a bot, ua_only null without hints', async () => {
    const { status, body, headers } = await parse({ ua: CHROME_WINDOWS })
    expect(status).toBe(200)
    expect(body.status).toBe('ok')
    const d = body.data
    expect(d.is_bot).toBe(false)
    expect(d.client).toEqual({ type: 'browser', name: 'Chrome', version: '120.0.0.0', engine: 'Blink', engine_version: '120.0.0.0' })
    expect(d.os).toEqual({ name: 'Windows', version: '10', platform: 'x64' })
    expect(d.device.type).toBe('desktop')
    expect(d.bot).toBeNull()
    expect(d.ua_only).toBeNull()
    expect(d.tampered).toBe(false)
    // The date of the Matomo device-detector commit the detection data is built from (3856a286).
    expect(headers.get('x-definitions-updated')).toBe('2026-08-19')
    for (const h of ['x-quota-limit', 'x-quota-remaining', 'x-quota-reset']) expect(headers.get(h)).toMatch(/^\d+$/)
  })

  test('Form B is the object itself, without is_bot and ua_only', async () => {
    const { body } = await parse({ ua: CHROME_WINDOWS }, 'bare')
    expect(Object.keys(body).sort()).toEqual(['bot', 'client', 'device', 'os', 'tampered'])
    expect(body.client.name).toBe('Chrome')
  })

  test('fields=client,os,device returns only those three, in both forms', async () => {
    const a = await parse({ ua: CHROME_WINDOWS }, 'enveloped', '?fields=client,os,device')
    expect(Object.keys(a.body.data).sort()).toEqual(['client', 'device', 'os'])
    const b = await parse({ ua: CHROME_WINDOWS }, 'bare', '?fields=client,os,device')
    expect(Object.keys(b.body).sort()).toEqual(['client', 'device', 'os'])
    const bad = await parse({ ua: CHROME_WINDOWS }, 'bare', '?fields=client,nope')
    expect(bad.status).toBe(400)
  })

  test.each([
    ['GPTBot', 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)', /OpenAI/],
    ['ClaudeBot', 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)', /Anthropic/],
    ['Googlebot', 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', /Google/],
    ['BingBot', 'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)', /Microsoft/],
  ])('%s is a bot with its producer, and client, os, device null (SPEC rule 3)', async (name, ua, producer) => {
    const a = await parse({ ua })
    expect(a.body.data.is_bot).toBe(true)
    expect(a.body.data.bot.name).toBe(name)
    expect(a.body.data.bot.producer).toMatch(producer)
    expect(typeof a.body.data.bot.category).toBe('string')
    expect(a.body.data.bot.url).toMatch(/^https?:\/\//)
    const b = await parse({ ua }, 'bare')
    expect([b.body.client, b.body.os, b.body.device]).toEqual([null, null, null])
    expect(b.body.bot.name).toBe(name)
  })

  test.each([
    ['curl/8.5.0', 'curl', '8.5.0'],
    ['python-requests/2.31.0', 'Python Requests', '2.31.0'],
    ['Wget/1.21.4', 'Wget', '1.21.4'],
  ])('%s is a library client', async (ua, name, version) => {
    const { body } = await parse({ ua })
    expect(body.data.client).toMatchObject({ type: 'library', name, version })
  })

  test('headless Chrome is a bot that keeps its client', async () => {
    const ua = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.6099.109 Safari/537.36'
    const { body } = await parse({ ua })
    expect(body.data.is_bot).toBe(true)
    expect(body.data.client).toMatchObject({ name: 'Headless Chrome', version: '120.0.6099.109' })
    expect(body.data.bot).toMatchObject({ name: 'Headless Chrome', category: 'Headless browser' })
    expect(body.data.os.name).toBe('GNU/Linux')
  })

  test('TVs, consoles, cars and feature phones through HTTP answer as Matomo expects', async () => {
    const all = JSON.parse(readFileSync(FIXTURES, 'utf8')).devices as {
      ua: string
      file: string
      device: { type: string; brand: string }
    }[]
    for (const file of ['tv.yml', 'console.yml', 'car_browser.yml', 'feature_phone.yml', 'camera.yml', 'wearable.yml']) {
      const cases = all.filter((c) => c.file.startsWith(file.replace('.yml', ''))).slice(0, 5)
      expect(cases.length).toBeGreaterThan(0)
      const { body } = await app.json('POST', '/api/v1/ua/bulk', { body: { ua_list: cases.map((c) => ({ ua: c.ua })) }, form: 'bare' })
      expect(body.results.map((r: any) => [r.device?.type, r.device?.brand])).toEqual(cases.map((c) => [c.device.type, c.device.brand]))
    }
  })
})

describe('Client Hints (SPEC rules 1-2)', () => {
  test('Android model and version from the hints; ua_only keeps the reduced UA parse', async () => {
    const headers = {
      'Sec-CH-UA': '"Not_A Brand";v="8", "Chromium";v="120", "Google Chrome";v="120"',
      'Sec-CH-UA-Mobile': '?1',
      'Sec-CH-UA-Platform': '"Android"',
      'Sec-CH-UA-Platform-Version': '"14.0.0"',
      'Sec-CH-UA-Model': '"Pixel 8"',
    }
    const { body } = await parse({ ua: CHROME_ANDROID_REDUCED, headers })
    const d = body.data
    expect(d.device).toMatchObject({ type: 'smartphone', brand: 'Google', model: 'Pixel 8' })
    expect(d.os.name).toBe('Android')
    expect(d.os.version).toMatch(/^14/)
    expect(d.ua_only.os.version).toBe('10')
    expect(d.ua_only.device.model).toBe('')
    expect(d.tampered).toBe(false)
  })

  test('hint names are case-insensitive', async () => {
    const { body } = await parse({
      ua: CHROME_ANDROID_REDUCED,
      headers: { 'sec-ch-ua-model': '"Pixel 8"', 'SEC-CH-UA-PLATFORM': '"Android"' },
    })
    expect(body.data.device.model).toBe('Pixel 8')
  })

  test('Windows 11 from Sec-CH-UA-Platform-Version 13 and up (Microsoft: 1-10 are Windows 10, 13+ Windows 11)', async () => {
    const hints = (v: string) => ({
      'Sec-CH-UA': '"Chromium";v="120", "Google Chrome";v="120"',
      'Sec-CH-UA-Platform': '"Windows"',
      'Sec-CH-UA-Platform-Version': `"${v}"`,
      'Sec-CH-UA-Arch': '"x86"',
      'Sec-CH-UA-Bitness': '"64"',
    })
    const eleven = await parse({ ua: CHROME_WINDOWS, headers: hints('15.0.0') })
    expect(eleven.body.data.os.name).toBe('Windows')
    expect(eleven.body.data.os.version).toBe('11')
    expect(eleven.body.data.ua_only.os.version).toBe('10')
    const ten = await parse({ ua: CHROME_WINDOWS, headers: hints('10.0.0') })
    expect(ten.body.data.os.version).toBe('10')
  })

  test("a UA whose Chrome major differs from the hints' is tampered (rule 2)", async () => {
    const spoofed = await parse({
      ua: CHROME_WINDOWS,
      headers: { 'Sec-CH-UA': '"Chromium";v="110", "Google Chrome";v="110"', 'Sec-CH-UA-Platform': '"Windows"' },
    })
    expect(spoofed.body.data.client.version.split('.')[0]).toBe('110')
    expect(spoofed.body.data.ua_only.client.version.split('.')[0]).toBe('120')
    expect(spoofed.body.data.tampered).toBe(true)
    const honest = await parse({
      ua: CHROME_WINDOWS,
      headers: { 'Sec-CH-UA': '"Chromium";v="120", "Google Chrome";v="120"', 'Sec-CH-UA-Platform': '"Windows"' },
    })
    expect(honest.body.data.tampered).toBe(false)
    const bare = await parse({ ua: CHROME_WINDOWS, headers: { 'Sec-CH-UA': '"Chromium";v="110", "Google Chrome";v="110"' } }, 'bare')
    expect(bare.body.tampered).toBe(true)
  })

  test('Sec-CH-UA-Full-Version-List gives the full client version', async () => {
    const headers = {
      'Sec-CH-UA-Full-Version-List': '"Not_A Brand";v="8.0.0.0", "Chromium";v="120.0.6099.109", "Google Chrome";v="120.0.6099.109"',
      'Sec-CH-UA-Platform': '"Windows"',
    }
    const { body } = await parse({ ua: CHROME_WINDOWS, headers })
    expect(body.data.client.version).toBe('120.0.6099.109')
    expect(body.data.ua_only.client.version).toBe('120.0.0.0')
    expect(body.data.tampered).toBe(false)
  })

  test('X-Requested-With names the app (Matomo fixture)', async () => {
    const { body } = await parse({
      ua: 'Mozilla/5.0 (Linux; Android 11; Pixel 3) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/92.0.4515.131 Mobile Safari/537.36',
      headers: { 'X-Requested-With': 'org.telegram.messenger' },
    })
    expect(body.data.client).toMatchObject({ type: 'mobile app', name: 'Telegram' })
    expect(body.data.ua_only.client.name).toBe('Chrome Mobile')
  })

  test('empty hint values count as absent: ua_only stays null', async () => {
    const { body } = await parse({ ua: CHROME_WINDOWS, headers: { 'Sec-CH-UA-Model': '', 'X-Unrelated': 'x' } })
    expect(body.data.ua_only).toBeNull()
  })
})

describe('bad input is a problem naming the field', () => {
  test.each([
    ['missing ua', {}, 'ua'],
    ['ua a number', { ua: 5 }, 'ua'],
    ['ua null', { ua: null }, 'ua'],
    ['ua empty', { ua: '' }, 'ua'],
    ['ua blank', { ua: '   ' }, 'ua'],
    ['ua over 2,048 characters', { ua: 'a'.repeat(2049) }, 'ua'],
    ['headers not an object', { ua: 'curl/8', headers: 'x' }, 'headers'],
    ['hint not a string', { ua: 'curl/8', headers: { 'sec-ch-ua-model': 5 } }, 'headers.sec-ch-ua-model'],
    ['hint too long', { ua: 'curl/8', headers: { 'Sec-CH-UA': 'x'.repeat(1025) } }, 'headers.Sec-CH-UA'],
    ['Sec-CH-UA-Mobile not a boolean', { ua: 'curl/8', headers: { 'Sec-CH-UA-Mobile': 'yes' } }, 'headers.Sec-CH-UA-Mobile'],
    [
      'a hint twice in two cases',
      { ua: 'curl/8', headers: { 'Sec-CH-UA-Model': '"a"', 'sec-ch-ua-model': '"b"' } },
      'headers.sec-ch-ua-model',
    ],
  ])('%s -> 422', async (_, body, field) => {
    for (const form of ['enveloped', 'bare'] as const) {
      const res = await parse(body, form)
      expect(res.status).toBe(422)
      const problem = form === 'enveloped' ? res.body.error : res.body
      expect(problem.status).toBe(422)
      expect(problem.errors.map((e: any) => e.field)).toContain(field)
    }
  })

  test('malformed JSON -> 400', async () => {
    const res = await app.json('POST', '/api/v1/ua', { body: '{"ua": ', headers: { 'content-type': 'application/json' } })
    expect(res.status).toBe(400)
  })
})

describe('POST /ua/bulk', () => {
  test('each item answered on its own, in order, with its ua; each costs one credit', async () => {
    const before = Number((await parse({ ua: 'curl/8' })).headers.get('x-quota-remaining'))
    const ua_list = [
      { ua: 'curl/8.5.0' },
      { ua: '' },
      7,
      { ua: 'x'.repeat(3000) },
      { ua: 'curl/8', headers: { 'Sec-CH-UA-Mobile': 'maybe' } },
      { ua: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)' },
    ]
    const { status, body, headers } = await app.json('POST', '/api/v1/ua/bulk', { body: { ua_list } })
    expect(status).toBe(200)
    expect(Number(headers.get('x-quota-remaining'))).toBe(before - ua_list.length)
    const r = body.data
    expect(r).toHaveLength(6)
    expect(r[0]).toMatchObject({ ua: 'curl/8.5.0', is_bot: false, client: { name: 'curl' } })
    expect(r[1].error.field).toBe('ua_list.1.ua')
    expect(r[2].error.field).toBe('ua_list.2')
    expect(r[3].error.field).toBe('ua_list.3.ua')
    expect(r[4].error.field).toBe('ua_list.4.headers.Sec-CH-UA-Mobile')
    expect(r[5]).toMatchObject({ is_bot: true, bot: { name: 'Googlebot' }, client: null })
  })

  test('Form B: {results}, each with its ua; fields apply to the items', async () => {
    const { body } = await app.json('POST', '/api/v1/ua/bulk?fields=ua,bot', {
      body: { ua_list: [{ ua: 'curl/8' }, { ua: 'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)' }] },
      form: 'bare',
    })
    expect(Object.keys(body)).toEqual(['results'])
    expect(body.results[0]).toEqual({ ua: 'curl/8', bot: null })
    expect(body.results[1].bot.name).toMatch(/^bingbot$/i)
  })

  test(
    'an item with a member it does not take is its own error naming the member and the nearest one; the others are parsed (both ' +
      'forms)',
    async () => {
      const ua_list = [{ ua: 'curl/8.5.0' }, { ua: 'curl/8', header: { 'Sec-CH-UA-Mobile': '?1' } }, { ua: 'curl/8', zzzzzz: 1 }]
      for (const form of ['enveloped', 'bare'] as const) {
        const { status, body } = await app.json('POST', '/api/v1/ua/bulk', { body: { ua_list }, form })
        expect(status).toBe(200)
        const r = form === 'bare' ? body.results : body.data
        expect(r[0]).toMatchObject({ ua: 'curl/8.5.0', client: { name: 'curl' } })
        expect(r[1]).toEqual({ ua: 'curl/8', error: { field: 'ua_list.1.header', message: 'unknown member (did you mean headers?)' } })
        expect(r[2]).toEqual({ ua: 'curl/8', error: { field: 'ua_list.2.zzzzzz', message: 'unknown member; known: ua, headers' } })
      }
    },
  )

  test("an unknown member of the single route's body is a 422 naming it (both forms)", async () => {
    for (const form of ['enveloped', 'bare'] as const) {
      const { status, body } = await parse({ ua: 'curl/8', header: {} }, form)
      expect(status).toBe(422)
      const problem = form === 'bare' ? body : body.error
      expect(problem.errors).toEqual([{ in: 'body', field: 'header', message: 'unknown member (did you mean headers?)' }])
    }
  })

  test('a full bulk of 100 (answered ten at a time): every item in its place, a bad one named by its index in the whole list', async () => {
    const ua_list: unknown[] = Array.from({ length: 100 }, (_, i) => ({ ua: `curl/8.${i}.0` }))
    for (const i of [9, 10, 57, 99]) ua_list[i] = { ua: '' }
    const { status, body } = await app.json('POST', '/api/v1/ua/bulk', { body: { ua_list }, form: 'bare' })
    expect(status).toBe(200)
    expect(body.results).toHaveLength(100)
    for (const [i, r] of (body.results as any[]).entries()) {
      if ([9, 10, 57, 99].includes(i)) expect(r.error.field).toBe(`ua_list.${i}.ua`)
      else expect(r).toMatchObject({ ua: `curl/8.${i}.0`, client: { name: 'curl', version: `8.${i}.0` } })
    }
  })

  test('a bulk of 100 is parsed in ten slices, each in a turn of the event loop of its own', async () => {
    const turn = turnCounter()
    const service = app.opened('ua')
    const slices: [from: number, size: number, tick: number][] = []
    const bulk = service.bulk
    const spy = spyOn(service, 'bulk').mockImplementation((items: unknown[], field?: string, from?: number) => {
      slices.push([from ?? 0, items.length, turn.now()])
      return bulk(items, field, from)
    })
    try {
      const ua_list = Array.from({ length: 100 }, (_, i) => ({ ua: `curl/7.${i}.0` }))
      const { status } = await app.json('POST', '/api/v1/ua/bulk', { body: { ua_list }, form: 'bare' })
      expect(status).toBe(200)
    } finally {
      spy.mockRestore()
      turn.stop()
    }
    expect(slices.map(([from, size]) => [from, size])).toEqual(Array.from({ length: 10 }, (_, i) => [i * 10, 10]))
    expect(new Set(slices.map(([, , t]) => t)).size).toBe(10)
  })

  test('over 100 items, none, or not an array: a 422 problem', async () => {
    for (const ua_list of [Array.from({ length: 101 }, () => ({ ua: 'curl/8' })), [], 'curl/8']) {
      const { status, body } = await app.json('POST', '/api/v1/ua/bulk', { body: { ua_list }, form: 'bare' })
      expect(status).toBe(422)
      expect(body.errors[0].field).toBe('ua_list')
    }
  })
})

describe('POST /ua/compat/device-catalog', () => {
  test('a WURFL-style map keyed by each input', async () => {
    const ipad =
      'Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1'
    const galaxy = 'Mozilla/5.0 (Linux; Android 13; SM-S911B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36'
    const bot = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'
    const { status, body } = await app.json('POST', '/api/v1/ua/compat/device-catalog', {
      body: [ipad, galaxy, bot, galaxy, '__proto__', 'constructor'],
      form: 'bare',
    })
    expect(status).toBe(200)
    expect(Object.keys(body)).toEqual([ipad, galaxy, bot, '__proto__', 'constructor'])
    expect(body[ipad]).toMatchObject({
      is_mobile: true,
      is_tablet: true,
      is_smarttv: false,
      is_bot: false,
      is_touchscreen: true,
      brand_name: 'Apple',
      model_name: 'iPad',
      device_os: 'iPadOS',
      advertised_browser: 'Mobile Safari',
      form_factor: 'Tablet',
    })
    // SM-S911B is Samsung's Galaxy S23.
    expect(body[galaxy]).toMatchObject({
      is_mobile: true,
      is_tablet: false,
      brand_name: 'Samsung',
      model_name: 'Galaxy S23',
      device_os: 'Android',
      device_os_version: '13',
      form_factor: 'Smartphone',
    })
    expect(body[bot]).toMatchObject({ is_bot: true, form_factor: 'Robot', is_mobile: false })
    // JSON.parse makes `__proto__` an own member: the entry for that input string.
    expect(Object.getOwnPropertyDescriptor(body, '__proto__')?.value.is_bot).toBe(false)
  })

  test('Form A wraps it; over 100 strings or an empty one is a 422', async () => {
    const a = await app.json('POST', '/api/v1/ua/compat/device-catalog', { body: ['curl/8'] })
    expect(a.body.status).toBe('ok')
    expect(a.body.data['curl/8'].advertised_browser).toBe('curl')
    for (const body of [Array.from({ length: 101 }, (_, i) => `curl/${i}`), ['curl/8', ''], [5], { ua: 'x' }]) {
      const res = await app.json('POST', '/api/v1/ua/compat/device-catalog', { body, form: 'bare' })
      expect(res.status).toBe(422)
    }
  })
})

test('the datasets endpoint credits Matomo device-detector, at the commit the data comes from', async () => {
  const { body } = await app.json('GET', '/api/v1/meta/datasets', { form: 'bare' })
  const text = JSON.stringify(body)
  expect(text).toContain('Matomo device-detector')
  expect(text).toContain('LGPL-3.0')
  expect(text).toContain('commit 3856a286 of 2026-08-19')
})

test('the OpenAPI document has request and response schemas for the three routes', async () => {
  const { body } = await app.json('GET', '/openapi.json')
  for (const path of ['/api/v1/ua', '/api/v1/ua/bulk', '/api/v1/ua/compat/device-catalog']) {
    const op = body.paths[path].post
    expect(op.requestBody.content['application/json'].schema).toBeDefined()
    const ok = op.responses['200']
    expect(ok.content['application/json'].schema.oneOf).toHaveLength(2)
    expect(ok.headers['X-Definitions-Updated']).toBeDefined()
  }
  expect(body.paths['/api/v1/ua/bulk'].post['x-quota-cost']).toEqual({ field: 'ua_list', max: 100 })
})
