/**
 * What Bun.serve itself charges for the parts every Almanac answer has, with no framework and no Almanac code:
 * a bare server per variant (this file, started with MODE), under wrk like every other row, server CPU per
 * request from /proc, two rounds.
 * - response headers: one, ten from a plain object (as Almanac's replies built them until the seventh session),
 *   the same ten as one prebuilt Headers shared by every response (what a fully static reply could do), and
 *   the ten from a kept Headers of the seven that repeat, copied, with the three that change set on the copy
 *   (as http/reply/response-headers.ts builds them now);
 * - a small POST body: ignored, read with text(), or read with text() after the `request.body` getter.
 * Prints figures; asserts nothing. Run: `bun bench/bun-floor.ts` (`SECONDS` per run, default 4).
 */
import { load, start, type BenchServer } from './lib.ts'

const TEN = {
  'content-type': 'application/json',
  vary: 'X-Response-Form, Accept-Encoding',
  'x-quota-limit': '1000000',
  'x-quota-remaining': '999999',
  'x-quota-reset': '1795824000',
  'ratelimit-policy': '"p";q=1000000;w=86400',
  ratelimit: '"p";r=999999;t=62765',
  'x-definitions-updated': '2026-10-29',
  'cache-control': 'public, max-age=86400',
  'x-request-id': '0123456789abcdef-1',
}
const BODY = '{"status":"ok"}'

if (process.env.MODE) {
  const mode = process.env.MODE
  const one = { 'content-type': 'application/json' }
  const shared = new Headers(TEN)
  const { 'x-quota-remaining': _, ratelimit: __, 'x-request-id': ___, ...repeating } = TEN
  const kept = new Headers(repeating)
  let n = 0
  const server = Bun.serve({
    port: Number(process.env.PORT),
    hostname: '127.0.0.1',
    development: false,
    fetch(request) {
      n++
      if (mode === 'ten') return new Response(BODY, { headers: { ...TEN, 'x-request-id': `0123456789abcdef-${n}` } })
      if (mode === 'shared') return new Response(BODY, { headers: shared })
      if (mode === 'template') {
        const headers = new Headers(kept)
        headers.set('x-quota-remaining', String(999999 - n))
        headers.set('ratelimit', `"p";r=${999999 - n};t=62765`)
        headers.set('x-request-id', `0123456789abcdef-${n}`)
        return new Response(BODY, { headers })
      }
      if (mode === 'read') return request.text().then((text) => new Response(`{"length":${text.length}}`, { headers: one }))
      // Reading the getter makes Bun build the body's ReadableStream, and the text then comes through it (the
      // check Elysia's composed handler made before patches/elysia@1.4.30.patch).
      if (mode === 'getter-read') {
        if (!request.body) return new Response(BODY, { headers: one })
        return request.text().then((text) => new Response(`{"length":${text.length}}`, { headers: one }))
      }
      return new Response(BODY, { headers: one })
    },
  })
  console.log(`listening ${server.port}`)
} else {
  const seconds = Number(process.env.SECONDS ?? 4)
  const post = { method: 'POST', body: { ip: '81.2.69.142' } }
  const variants: [name: string, mode: string, options: Parameters<typeof load>[1]][] = [
    ['GET, one header', 'one', {}],
    ['GET, ten headers from a plain object', 'ten', {}],
    ['GET, the same ten as one shared Headers', 'shared', {}],
    ['GET, seven copied from a kept Headers, three set', 'template', {}],
    ['POST of 20 bytes, body ignored', 'one', post],
    ['POST of 20 bytes, body read with text()', 'read', post],
    ['POST of 20 bytes, request.body read, then text()', 'getter-read', post],
  ]
  const servers = new Map<string, BenchServer>()
  for (const mode of new Set(variants.map((v) => v[1])))
    servers.set(mode, await start(`bare Bun.serve (${mode})`, ['bun', import.meta.path], { MODE: mode }, '/', {}))
  try {
    console.log(`\nBare Bun.serve, wrk -t2 -c32, ${seconds} s a run: server CPU µs a request`)
    console.log('| variant | round 1 | round 2 |')
    console.log('|---|---:|---:|')
    const figures = variants.map(() => [] as number[])
    for (let round = 0; round < 2; round++)
      for (const [i, [, mode, options]] of variants.entries())
        figures[i]!.push((await load(servers.get(mode)!, { seconds, ...options })).cpuUsPerRequest)
    for (const [i, [name]] of variants.entries()) console.log(`| ${name} | ${figures[i]!.map((x) => x.toFixed(1)).join(' | ')} |`)
  } finally {
    for (const server of servers.values()) await server.stop()
  }
}
