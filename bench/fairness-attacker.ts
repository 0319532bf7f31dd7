/**
 * The hostile clients of bench/fairness.ts, in their own process so their work is not the server's nor
 * the victim's: one client per key, each keeping `concurrency` requests of one hostile class in flight
 * until SIGTERM, then printing how the server answered them (one JSON line). Prints `ready` once every
 * client has sent its first request.
 * Run by bench/fairness.ts: `bun bench/fairness-attacker.ts '{"url":…,"hostile":…,"keys":[…],"concurrency":n}'`.
 */

import { requestOf, worstCases } from '../test/domains/postal/worst.ts'

export const HOSTILE = ['content-type', 'invalid-bulk', 'ua-bulk', 'bible', 'postal', 'scrypt', 'email', 'qr-store', 'over-quota'] as const
export type Hostile = (typeof HOSTILE)[number]

interface Plan {
  url: string
  hostile: Hostile
  keys: string[]
  concurrency: number
}

interface Shot {
  path: string
  method?: string
  contentType?: string
  body?: string
}

/** 1 MB that is not JSON, sent as text/plain to JSON routes (finding 1). */
const MEGABYTE_TEXT = 'a'.repeat(1_000_000)
const TEXT_ROUTES = ['/api/v1/postal/DE/within', '/api/v1/qr/text', '/api/v1/hash/scrypt']

/**
 * ~1 MB of valid JSON that its route's schema refuses, for one credit each: a bulk of 12,000 user agents
 * (the limit is 100) under the route's 1 MiB body limit (http/admission/large-bodies.ts).
 */
const INVALID_BULK = JSON.stringify({
  ua_list: Array.from({ length: 12_000 }, (_, i) => ({ ua: `Mozilla/5.0 (X11; Linux x86_64) probe/${i}` })),
})

/** Sixteen prefix terms over every translation (finding 2), and the most common word. */
const SIXTEEN_PREFIXES = Array(16).fill('the*').join(' ')

/**
 * The costliest postal queries the work budget admits (test/domains/postal/worst.ts; 10–20 ms each of
 * database work): the widest search pages and the 500 km radius over the densest countries, and over a
 * small country beside dense ones (50 ms of reads the budget did not count, before the R*Tree's country dimension).
 * `nearby PT 500 km` is now refused at the budget, after the same reads, since a radius count's edge points count.
 */
const POSTAL_ADMITTED = [
  'search SG q=s',
  'search PT q=c prefix=4',
  'search PT admin_code=14 offset 34,000',
  'nearby PT 500 km',
  'nearby IN 500 km',
  'nearby GI 500 km',
]
const POSTAL_WORST = worstCases()
  .filter((c) => POSTAL_ADMITTED.includes(c.name))
  .map(requestOf)

/**
 * The largest scrypt the default ceilings allow (finding 4): memory 128·r·(n+2+p) <= 1 GiB and work
 * n·r·p <= 2^23, so n = 2^19, r = 15 (960 MiB, 7.9·10^6). Override with FAIRNESS_SCRYPT='{"n":…,"r":…}'.
 */
const SCRYPT = process.env.FAIRNESS_SCRYPT ?? JSON.stringify({ n: 2 ** 19, r: 15, p: 1 })

/** A maximal QR payload: 2,900 random bytes-mode characters at level L fill version 40, ~115 KB of SVG. */
const QR_ALPHABET = 'abcdefghijklmnopqrstuvwxyz!#$%&()*+,-./:;<=>?@[]^_{|}~'
const randomText = (n: number) => {
  let s = ''
  for (let i = 0; i < n; i++) s += QR_ALPHABET[(Math.random() * QR_ALPHABET.length) | 0]
  return s
}

/**
 * ~0.9 MB of JSON the over-quota keys send (finding 5) to postal `within`, whose body limit (1 MiB) admits
 * it, so what refuses it is the quota, before the body is read: a polygon ring of 31,000 positions.
 */
const OVER_QUOTA_RING = Array.from({ length: 31_000 }, (_, i) => [
  +(6 + (i % 500) / 100 + 0.0000012345).toFixed(10),
  +(48 + Math.floor(i / 500) / 100 + 0.0000012345).toFixed(10),
])
const OVER_QUOTA_BODY = JSON.stringify({ geometry: { type: 'Polygon', coordinates: [[...OVER_QUOTA_RING, OVER_QUOTA_RING[0]]] } })
const OVER_QUOTA_PATH = '/api/v1/postal/DE/within'

/** The n-th request of client `c` for a class. */
function shot(hostile: Hostile, c: number, n: number): Shot {
  switch (hostile) {
    case 'content-type':
      return { path: TEXT_ROUTES[(c + n) % TEXT_ROUTES.length]!, method: 'POST', contentType: 'text/plain', body: MEGABYTE_TEXT }
    case 'invalid-bulk':
      return { path: '/api/v1/ua/bulk', method: 'POST', body: INVALID_BULK }
    case 'ua-bulk': {
      // A hundred user agents never asked before (the result cache keeps none of them), each one credit.
      const ua_list = Array.from({ length: 100 }, (_, i) => ({
        ua: `Mozilla/5.0 (Linux; Android 14; Pixel ${c}) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${n}.${i}.0 Mobile Safari/537.36`,
      }))
      return { path: '/api/v1/ua/bulk', method: 'POST', body: JSON.stringify({ ua_list }) }
    }
    case 'bible': {
      // Two common words are ranked live over all their verses (one common word reads a stored ranking),
      // and a new offset each time is a question the answer cache has not seen.
      const q = n % 2 === 0 ? SIXTEEN_PREFIXES : 'the lord'
      return { path: `/api/v1/bible/search?q=${encodeURIComponent(q)}&offset=${(c * 1000 + n) % 5000}` }
    }
    case 'postal': {
      const r = POSTAL_WORST[(c + n) % POSTAL_WORST.length]!
      return { path: `/api/v1/postal${r.path}`, method: r.method, body: r.body === undefined ? undefined : JSON.stringify(r.body) }
    }
    case 'scrypt':
      return { path: '/api/v1/hash/scrypt', method: 'POST', body: JSON.stringify({ input: `x${n}`, ...JSON.parse(SCRYPT) }) }
    case 'email': {
      // Ten domains never asked before: each holds one of the MX checker's in-flight slots for the resolver's delay.
      const emails = Array.from({ length: 10 }, (_, i) => `u@h${c}-${n}-${i}.fair.example`)
      return { path: '/api/v1/email/risk/bulk', method: 'POST', body: JSON.stringify({ emails }) }
    }
    case 'qr-store':
      return {
        path: '/api/v1/qr/text',
        method: 'POST',
        body: JSON.stringify({ text: randomText(2900), format: 'svg', error_correction: 'L', ttl: 2_592_000 }),
      }
    case 'over-quota':
      return { path: OVER_QUOTA_PATH, method: 'POST', body: OVER_QUOTA_BODY }
  }
}

if (import.meta.main) {
  const plan = JSON.parse(process.argv[2]!) as Plan
  const statuses = new Map<string, number>()
  const tally = (k: string) => statuses.set(k, (statuses.get(k) ?? 0) + 1)
  const stop = new AbortController()
  let started = 0
  const lanes = plan.keys.length * plan.concurrency

  const client = async (key: string, c: number, lane: number) => {
    for (let n = lane; !stop.signal.aborted; n += plan.concurrency) {
      const s = shot(plan.hostile, c, n)
      const headers: Record<string, string> = { 'x-api-key': key }
      if (s.body !== undefined) headers['content-type'] = s.contentType ?? 'application/json'
      const answer = fetch(plan.url + s.path, { method: s.method ?? 'GET', headers, body: s.body, signal: stop.signal })
      if (++started === lanes) console.log('ready')
      try {
        const res = await answer
        await res.arrayBuffer()
        tally(String(res.status))
      } catch {
        if (!stop.signal.aborted) tally('network error')
      }
    }
  }

  const running = plan.keys.flatMap((key, c) => Array.from({ length: plan.concurrency }, (_, lane) => client(key, c, lane)))
  process.on('SIGTERM', async () => {
    stop.abort()
    await Promise.allSettled(running)
    console.log(JSON.stringify(Object.fromEntries([...statuses].sort())))
    process.exit(0)
  })
}
