/**
 * Fair share (issue 21): can one caller take the server from the others? One Almanac server (a child
 * process, loopback), one victim key making cheap authenticated lookups (`GET /api/v1/countries/FR`, open
 * loop, every 10 ms, latency from the scheduled time so a stalled server is not hidden), and for each
 * hostile class four hostile keys in another process (bench/fairness-attacker.ts):
 *
 * - content-type: 1 MB text/plain bodies to JSON routes (postal within, qr/text, hash/scrypt)
 * - invalid-bulk: ~1 MB JSON bulks of 12,000 user agents (over the 100 allowed), refused by the schema for one credit each
 * - ua-bulk: valid bulks of 100 user agents never asked before, 100 credits each (4-8 ms of parsing a request)
 * - bible: sixteen `the*` prefixes, and `the lord` (ranked live) at a new offset each time, over every translation
 * - postal: the costliest searches and 500 km radius queries the postal work budget admits
 * - scrypt: the largest scrypt the default ceilings allow (~960 MiB each)
 * - email: bulks of ten never-seen domains against a loopback resolver that holds every answer 1.5 s
 * - qr-store: maximal SVGs with 30-day links into a store capped at 32 MiB (fills in seconds)
 * - over-quota: keys with no credits left sending ~0.9 MB JSON polygons to postal within (under its body limit)
 *
 * The hostile process runs at nice 10: sharing this 2-core machine, it would otherwise take CPU from the
 * server's own thread, which a remote attacker cannot; what is measured is the server, not the machine.
 *
 * Per class, the victim runs alone first (the idle figure, same run, right before) and then under attack.
 * Printed: the victim's p50/p99 both ways and the p99 ratio (target <= 3x), its errors, the longest
 * event-loop block in the server during the attack (`almanac_event_loop_max_block_seconds`, reset by each
 * scrape; target <= 50 ms), the server's peak RSS (VmRSS sampled every 100 ms, and VmHWM reset through
 * /proc/PID/clear_refs at each phase), how the hostile requests were answered, and for email and QR what
 * the victim's own checks and images got. Prints figures; asserts nothing.
 * Run: `bun bench/fairness.ts [--only content-type,bible] [--seconds N]` (N: attack seconds, default 10;
 * the idle phase is half that). Datasets built.
 */
import { spawn } from 'bun'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { startDnsServer } from '../test/domains/email/dns-server.ts'
import { startRdapServer } from '../test/domains/email/rdap-server.ts'
import { HOSTILE, type Hostile } from './fairness-attacker.ts'
import { percentile, ROOT, start } from './lib.ts'

const { values: args } = parseArgs({ options: { only: { type: 'string' }, seconds: { type: 'string' } } })
const attackSeconds = Number(args.seconds ?? 10)
const idleSeconds = Math.max(2, attackSeconds / 2)
const classes = (args.only?.split(',') ?? [...HOSTILE]) as Hostile[]
for (const c of classes) if (!HOSTILE.includes(c)) throw new Error(`--only: unknown class ${c} (known: ${HOSTILE.join(', ')})`)

/** Hostile requests each hostile key keeps in flight. */
const CONCURRENCY: Record<Hostile, number> = {
  'content-type': 1,
  'invalid-bulk': 1,
  'ua-bulk': 1,
  bible: 1,
  postal: 1,
  scrypt: 1,
  email: 16,
  'qr-store': 2,
  'over-quota': 2,
}
const VICTIM_KEY = 'fair-victim-key-0000'
const HOSTILE_KEYS = [1, 2, 3, 4].map((i) => `fair-hostile-key-000${i}`)
const BROKE_KEYS = [1, 2, 3, 4].map((i) => `fair-broke-key-000${i}`)
const VICTIM_PATH = '/api/v1/countries/FR'
const DNS_DELAY_MS = 1500
const QR_STORE_BYTES = 32 * 2 ** 20
/** A victim lookup waits this long at most; it is then an error, counted in p99 with that time. */
const VICTIM_TIMEOUT_MS = 10_000

const dns = await startDnsServer({}, { delayMs: DNS_DELAY_MS })
const rdap = startRdapServer({}, Date.now())
const stateDir = mkdtempSync(join(tmpdir(), 'almanac-fairness-'))
const server = await start(
  'almanac',
  ['bun', 'src/main.ts', 'serve'],
  {
    ALMANAC_HOST: '127.0.0.1',
    ALMANAC_API_KEYS: [`${VICTIM_KEY}:big`, ...HOSTILE_KEYS.map((k) => `${k}:big`), ...BROKE_KEYS.map((k) => `${k}:tiny`)].join(','),
    ALMANAC_PLANS: 'big:1000000000/1d,tiny:1/1d',
    ALMANAC_DEFAULT_PLAN: 'big',
    ALMANAC_ACCESS_LOG: 'false',
    ALMANAC_SHUTDOWN_DELAY: '0',
    ALMANAC_STATE_DIR: stateDir,
    ALMANAC_EMAIL_DNS_SERVERS: dns.address,
    ALMANAC_EMAIL_RDAP_URL: rdap.base,
    ALMANAC_QR_STORE_MAX_BYTES: String(QR_STORE_BYTES),
  },
  '/healthz',
  { 'x-api-key': VICTIM_KEY },
)

// --- what the server shows ---

const scrape = async () => (await fetch(server.url + '/metrics')).text()
const gauge = (text: string, name: string) => {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text)
  return m ? Number(m[1]) : NaN
}

/** Peak RSS of a phase: VmRSS every 100 ms, and VmHWM (reset at the start through clear_refs, where allowed). */
function rssWatch(pid: number) {
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1])
  let hwmReset = true
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5')
  } catch {
    hwmReset = false
  }
  let peak = kib('VmRSS')
  const timer = setInterval(() => (peak = Math.max(peak, kib('VmRSS'))), 100)
  return () => {
    clearInterval(timer)
    return Math.max(peak, hwmReset ? kib('VmHWM') : 0) / 1024
  }
}

/** Waits (up to 30 s) until the server handles nothing but the scrape: the previous class's work is done. */
async function settle() {
  const until = performance.now() + 30_000
  while (performance.now() < until) {
    if (gauge(await scrape(), 'almanac_http_requests_in_flight') <= 1) return true
    await Bun.sleep(200)
  }
  return false
}

// --- the victim ---

interface VictimResult {
  latencies: number[]
  /** Lookups sent, and those that were not a 200 (timeouts and network errors included). */
  sent: number
  errors: Map<string, number>
  maxBlockMs: number
  peakRssMiB: number
  probes: Map<string, number>
  /** Probes whose outcome was not the expected one. */
  probesHurt: number
}

/**
 * The victim for `seconds`: a lookup every 10 ms whatever the server does (open loop), timed from when it
 * was due; plus, for email and QR, one of its own checks or images every 250 ms, tallied by outcome.
 */
async function victim(seconds: number, probe?: Probe): Promise<VictimResult> {
  await scrape() // resets the longest-block gauge
  const rss = rssWatch(server.pid)
  const latencies: number[] = []
  const probes = new Map<string, number>()
  let probesHurt = 0
  const errors = new Map<string, number>()
  const failed = (why: string) => errors.set(why, (errors.get(why) ?? 0) + 1)
  const pending: Promise<unknown>[] = []
  const t0 = performance.now()
  let i = 0
  for (; performance.now() < t0 + seconds * 1000; i++) {
    const due = t0 + i * 10
    const wait = due - performance.now()
    if (wait > 0) await Bun.sleep(wait)
    // From when it was due, or from when it left if the timer woke early.
    const from = Math.max(due, performance.now())
    pending.push(
      fetch(server.url + VICTIM_PATH, { headers: server.headers, signal: AbortSignal.timeout(VICTIM_TIMEOUT_MS) })
        .then(async (res) => {
          await res.arrayBuffer()
          if (res.status !== 200) failed(`HTTP ${res.status}`)
        })
        .catch((e) => failed((e as Error).name))
        // A lookup that timed out counts with the time it waited: a stalled server must show in p99.
        .finally(() => latencies.push(performance.now() - from)),
    )
    if (probe && i % 25 === 0)
      pending.push(
        probe
          .run(i)
          .catch((e) => `error ${(e as Error).name}`)
          .then((outcome) => {
            probes.set(outcome, (probes.get(outcome) ?? 0) + 1)
            if (!probe.expected(outcome)) probesHurt++
          }),
      )
  }
  await Promise.all(pending)
  const maxBlockMs = gauge(await scrape(), 'almanac_event_loop_max_block_seconds') * 1000
  return { latencies, sent: i, errors, maxBlockMs, peakRssMiB: rss(), probes, probesHurt }
}

const post = (path: string, body: unknown) =>
  fetch(server.url + path, {
    method: 'POST',
    headers: { ...server.headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(VICTIM_TIMEOUT_MS),
  })

/**
 * The victim's own checks and images where a class takes a shared thing from it, and the outcome each
 * should have: the loopback resolver answers NXDOMAIN for the victim's domains (after its delay), and the
 * victim's small images fit in the store.
 */
interface Probe {
  run(n: number): Promise<string>
  expected: (outcome: string) => boolean
}
const PROBES: Partial<Record<Hostile, Probe>> = {
  email: {
    expected: (outcome) => outcome === 'MX nxdomain',
    run: async (n) => {
      const res = await post('/api/v1/email/risk', { email: `victim@v${n}-${Date.now()}.victim.example` })
      if (res.status !== 200) return `HTTP ${res.status}`
      const body = (await res.json()) as { data: { checks: { mx_record: { reason: string | null } } } }
      return `MX ${body.data.checks.mx_record.reason ?? 'found'}`
    },
  },
  'qr-store': {
    expected: (outcome) => outcome.endsWith(' 200'),
    run: async (n) => {
      const format = n % 50 === 0 ? 'png' : 'svg'
      const res = await post('/api/v1/qr/url', { url: `https://victim.example/${n}/${Date.now()}`, format, ttl: 60 })
      await res.arrayBuffer()
      return `${format} ${res.status}`
    },
  },
}

// --- the attackers ---

/** Starts the hostile process and resolves once every client has a request in flight. */
async function attack(hostile: Hostile) {
  const keys = hostile === 'over-quota' ? BROKE_KEYS : HOSTILE_KEYS
  const plan = { url: server.url, hostile, keys, concurrency: CONCURRENCY[hostile] }
  const proc = spawn({ cmd: ['nice', '-n', '10', 'bun', 'bench/fairness-attacker.ts', JSON.stringify(plan)], cwd: ROOT, stdout: 'pipe' })
  const reader = proc.stdout.getReader()
  let out = ''
  while (!out.includes('ready\n')) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`the ${hostile} attacker exited before it was ready`)
    out += new TextDecoder().decode(value)
  }
  return async (): Promise<string> => {
    proc.kill('SIGTERM')
    for (;;) {
      const { value, done } = await reader.read()
      if (done) break
      out += new TextDecoder().decode(value)
    }
    await proc.exited
    const summary = JSON.parse(out.slice(out.indexOf('ready\n') + 6).trim() || '{}') as Record<string, number>
    return (
      Object.entries(summary)
        .map(([status, n]) => `${status}×${n}`)
        .join(' ') || 'none answered yet'
    )
  }
}

/** Spends the over-quota keys' only credit. */
async function exhaust(keys: string[]) {
  for (const key of keys)
    for (let i = 0; i < 3; i++) await (await fetch(server.url + VICTIM_PATH, { headers: { 'x-api-key': key } })).arrayBuffer()
}

// --- the run ---

const ms = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : 'n/a')
const tallyText = (t: Map<string, number>) =>
  [...t]
    .sort()
    .map(([k, n]) => `${k}×${n}`)
    .join(', ')

interface Row {
  name: string
  idle: VictimResult
  attacked: VictimResult
  hostileAnswers: string
  settled: boolean
}
const rows: Row[] = []
let baseline: VictimResult | undefined
try {
  // Warm-up, untimed: the first lookups also pay for compiling the server's code.
  for (let i = 0; i < 300; i++) {
    const res = await fetch(server.url + VICTIM_PATH, { headers: server.headers })
    await res.arrayBuffer()
    // A port taken between freePort() and the child's listen would put another server here.
    if (res.status !== 200) throw new Error(`the victim's lookup got ${res.status} from ${server.url}: not our server?`)
  }
  baseline = await victim(idleSeconds)
  for (const hostile of classes) {
    const settled = await settle()
    if (hostile === 'over-quota') await exhaust(BROKE_KEYS)
    const probe = PROBES[hostile]
    const idle = await victim(idleSeconds, probe)
    const stop = await attack(hostile)
    const attacked = await victim(attackSeconds, probe)
    rows.push({ name: hostile, idle, attacked, hostileAnswers: await stop(), settled })
    console.error(`fairness: ${hostile} done`)
  }
} finally {
  await server.stop()
  await rdap.stop()
  await dns.close()
  rmSync(stateDir, { recursive: true, force: true })
}

const errorText = (r: VictimResult) => {
  const n = [...r.errors.values()].reduce((a, b) => a + b, 0)
  return `${n}/${r.sent}${n ? ` (${tallyText(r.errors)})` : ''}`
}
const p = (r: VictimResult, q: number) => (r.latencies.length ? percentile(r.latencies, q) : NaN)
console.log(
  `\nFair share: victim GET ${VICTIM_PATH} every 10 ms (own key) vs 4 hostile keys per class; idle ${idleSeconds} s right before, ` +
    `attack ${attackSeconds} s`,
)
console.log(
  '| class | victim p50 idle → attack (ms) | victim p99 idle → attack (ms) | p99 / p99 idle (≤ 3) | victim errors | longest loop block ' +
    '(ms, ≤ 50) | targets met | peak RSS (MiB) | hostile answers | victim checks/images (idle → attack) |',
)
console.log('|---|---:|---:|---:|---:|---:|---|---:|---|---|')
if (baseline)
  console.log(
    `| idle baseline (no attack) | ${ms(p(baseline, 50))} | ${ms(p(baseline, 99))} | — | ${errorText(baseline)} ` +
      `| ${ms(baseline.maxBlockMs)} | — | ${baseline.peakRssMiB.toFixed(0)} | — | — |`,
  )
for (const { name, idle, attacked, hostileAnswers, settled } of rows) {
  const ratio = p(attacked, 99) / p(idle, 99)
  const met = ratio <= 3 && attacked.maxBlockMs <= 50 && attacked.errors.size === 0 && attacked.probesHurt === 0 ? 'yes' : 'no'
  const checks = idle.probes.size || attacked.probes.size ? `${tallyText(idle.probes)} → ${tallyText(attacked.probes)}` : '—'
  console.log(
    `| ${name}${settled ? '' : ' (previous class still running at start)'} | ${ms(p(idle, 50))} → ${ms(p(attacked, 50))} ` +
      `| ${ms(p(idle, 99))} → ${ms(p(attacked, 99))} | ${ratio.toFixed(1)}× | ${errorText(attacked)} | ${ms(attacked.maxBlockMs)} ` +
      `| ${met} | ${attacked.peakRssMiB.toFixed(0)} | ${hostileAnswers} | ${checks} |`,
  )
}
