/**
 * Failover of the shared stores under HTTP load: a real `almanac serve` (from source) whose key store, quota
 * store and usage ledger are one Redis Cluster or Sentinel group, a steady stream of lookups with a stored API
 * key, and the master holding the key store's slot (`{almanac:keys:}`), or the day's ledger slot
 * (`{almanac:usage:<day>}`), or the Sentinel master killed (SIGKILL) mid-stream. The stream goes on until a
 * replica has taken over and requests have succeeded again for a while; then the server is stopped (SIGTERM
 * writes what its usage meter holds) and `almanac usage` and the quota counter are compared with the answers.
 *
 * Per row: the gap (first failing answer to the first success after the last failing one), the failed answers
 * by status, problem type and the store named, 200s served uncounted (fail-open), requests/s before the kill
 * and after the gap, whether the ledger's totals equal the answers exactly, and credits over-spent (the counter
 * less the credited answers). A cluster's key store and ledger rows keep the key's quota counter off the killed
 * master; the quota counter rows kill its master. test/scale-out/failover-http.test.ts asserts the same scenario.
 *
 * Run: `bun bench/failover.ts` (ONLY=sentinel, ONLY=ledger …: the rows naming it; IN_FLIGHT, default 4). A fresh
 * cluster (3 masters, 1 replica each) or Sentinel group per row.
 */
import { spawn, type Subprocess } from 'bun'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Plan } from '../src/config.ts'
import { quotaWindow } from '../src/stores/quota.ts'
import { QUOTA_KEY_PREFIX, quotaKey, redisQuotaStore } from '../src/stores/quota-redis.ts'
import { periodOf } from '../src/stores/usage.ts'
import { freePort } from '../test/support/ports.ts'
import {
  ask,
  clusterUrl,
  sentinelUrl,
  startSomeTopologies,
  waitFor,
  type StartedTopologies,
  type TestCluster,
} from '../test/support/redis-topologies.ts'

const ROOT = resolve(import.meta.dir, '..')

export type TopologyKind = 'cluster' | 'sentinel'
export type Policy = 'fail-closed' | 'fail-open'
/**
 * Which master dies: on a cluster the one serving the key store's slot, the day's ledger slot, or the key's quota
 * counter (the other victims are chosen on a master the counter is not on); the Sentinel master.
 */
export type Victim = 'key store' | 'ledger' | 'quota counter' | 'Sentinel'

/** The plan of the stream's key: far more credits than a run spends, a day's window. */
const PLAN: Plan = { name: 'big', credits: 1_000_000_000, windowSeconds: 86_400 }
/** Requests in flight at once, closed loop. */
export const IN_FLIGHT = Number(process.env.IN_FLIGHT ?? 4)
/** 2xx answers before the kill, and in a row after the takeover before the stream stops. */
const BEFORE = 1000
const AFTER = 1000
/** The most a takeover may take before a run gives up (a bound on a hang, not a measured figure). */
const GIVE_UP_MS = 30_000

/** One answer of the stream: when it came, its status, and for a failure the problem type and the store it names. */
export interface Answer {
  /** When it was sent and when it came (performance.now ms). */
  sentAt: number
  at: number
  status: number
  /** `unavailable (key store)`, `unavailable (quota store)` …; '' for a 2xx. */
  problem: string
  /** A 2xx whose credit was taken (fail-open answers uncounted with the whole plan in its quota headers). */
  counted: boolean
}

/** The ledger's totals for the key against those counted from the answers. */
export interface UsageCheck {
  reported: { requests: number; answered: number; server_errors: number; credits: number }
  expected: { requests: number; answered: number; server_errors: number; credits: number }
  droppedBatches: number
}

export interface FailoverResult {
  topology: TopologyKind
  policy: Policy
  victim: Victim
  answers: Answer[]
  killedAt: number
  /** Ms from the kill to the topology naming a new master for the slot. */
  takeoverMs: number
  usage: UsageCheck
  /** Credits the quota counter holds as spent, and the counted 2xx answers. */
  spent: number
  credited: number
  serverExit: number
  /** Times the server logged that its usage meter could not write a batch (once per failing streak). */
  ledgerWriteFailures: number
}

/** The master serving `key`'s slot now: the one live master that answers for it (the others redirect). */
async function slotOwner(cluster: TestCluster, key: string): Promise<number | undefined> {
  const masters = await cluster.masters()
  const answers = await Promise.all(masters.map(async (port) => [port, await ask(port, 'EXISTS', [key])] as const))
  return answers.find(([, reply]) => reply !== null)?.[0]
}

const hasLiveReplica = async (port: number) => String(await ask(port, 'INFO', ['replication'])).includes('state=online')

/** The counter of a key's credits in this window (quota-redis.ts names it). */
const quotaCounterOf = (keyId: string) => quotaKey(QUOTA_KEY_PREFIX, `key:${keyId}`, PLAN, quotaWindow(PLAN, Date.now()).start)

/** The key a cluster routes the victim's slot by: the key store's tag, today's ledger tag (usage-redis.ts), or the counter. */
function slotKeyOf(victim: Victim, keyId: string) {
  if (victim === 'key store') return '{almanac:keys:}ids'
  if (victim === 'ledger') return `{almanac:usage:${periodOf('day', Math.floor(Date.now() / 1000))}}:x`
  return quotaCounterOf(keyId)
}

/** The port to kill (a master with a live replica: killing one without is an outage, not a failover) and its takeover check. */
async function targetOf(topologies: StartedTopologies, kind: TopologyKind, victim: Victim, keyId: string) {
  let port = 0
  if (kind === 'sentinel') {
    const sentinel = topologies.sentinel!
    await waitFor('the Sentinel master has a live replica', async () => {
      port = (await sentinel.master()) ?? 0
      return port > 0 && (await hasLiveReplica(port))
    })
    const takenOver = async () => ![null, port].includes(await sentinel.master())
    return { port, kill: () => sentinel.kill(port), takenOver }
  }
  const cluster = topologies.cluster!
  const key = slotKeyOf(victim, keyId)
  await waitFor(`the master of ${key} has a live replica`, async () => {
    port = (await slotOwner(cluster, key)) ?? 0
    return port > 0 && (await hasLiveReplica(port))
  })
  const takenOver = async () => ((await slotOwner(cluster, key)) ?? port) !== port
  return { port, kill: () => cluster.kill(port), takenOver }
}

/** `almanac serve` from source on a free loopback port with `env` over this process's environment (no configured keys). */
async function startAlmanac(env: Record<string, string>): Promise<{ url: string; child: Subprocess; log: Promise<string> }> {
  const port = freePort()
  const { ALMANAC_API_KEYS: _, ...inherited } = process.env
  const child = spawn({
    cmd: [process.execPath, 'src/main.ts', 'serve'],
    cwd: ROOT,
    env: { ...inherited, PORT: String(port), ALMANAC_HOST: '127.0.0.1', ALMANAC_ACCESS_LOG: 'false', ALMANAC_SHUTDOWN_DELAY: '0', ...env },
    stdout: 'ignore',
    stderr: 'pipe',
  })
  // Read as it comes, so the pipe never fills; whole once the server has exited.
  const log = new Response(child.stderr as ReadableStream<Uint8Array>).text()
  const url = `http://127.0.0.1:${port}`
  try {
    await waitFor('almanac serve answering', async () => {
      if (child.exitCode !== null) throw new Error(`almanac serve exited with ${child.exitCode}`)
      return (await fetch(`${url}/readyz`).catch(() => null)) !== null
    })
  } catch (e) {
    child.kill('SIGKILL')
    throw e
  }
  return { url, child, log }
}

/** Runs the CLI (`bun src/main.ts …`) to its end: exit code and stdout; stderr is thrown with a non-zero exit. */
async function cli(args: string[], env: Record<string, string>): Promise<string> {
  const child = spawn({
    cmd: [process.execPath, 'src/main.ts', ...args],
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  if (code !== 0) throw new Error(`almanac ${args.join(' ')} exited with ${code}: ${err}`)
  return out
}

/** What a failing answer says: its problem type's last word and which store its detail names. */
async function problemOf(response: Response): Promise<string> {
  const text = await response.text()
  let problem: { type?: string; detail?: string; error?: { type?: string; detail?: string } } = {}
  try {
    problem = JSON.parse(text)
  } catch {}
  // Enveloped forms nest the problem under `error`.
  if (problem.error) problem = problem.error
  const type = String(problem.type ?? 'none').replace(/^.*[:/]/, '')
  const detail = String(problem.detail ?? text)
  const store = /API key database/.test(detail) ? ' (key store)' : /quota store/.test(detail) ? ' (quota store)' : ''
  return `${type}${store}`
}

/** IN_FLIGHT requests at a time with `key` until `stop` is called; every answer recorded as it comes. */
function stream(url: string, key: string) {
  const answers: Answer[] = []
  let stopped = false
  const loop = async () => {
    while (!stopped) {
      let answer: Answer
      const sentAt = performance.now()
      try {
        const response = await fetch(`${url}/api/v1/countries/FR`, { headers: { 'x-api-key': key } })
        const ok = response.status >= 200 && response.status < 300
        const counted = ok && response.headers.get('x-quota-remaining') !== response.headers.get('x-quota-limit')
        answer = { sentAt, at: performance.now(), status: response.status, problem: ok ? '' : await problemOf(response), counted }
        if (ok) await response.arrayBuffer()
      } catch (e) {
        answer = { sentAt, at: performance.now(), status: 0, problem: `no answer: ${(e as Error).message}`, counted: false }
      }
      answers.push(answer)
    }
  }
  const loops = Array.from({ length: IN_FLIGHT }, loop)
  return {
    answers,
    async stop() {
      stopped = true
      await Promise.all(loops)
    },
  }
}

const isOk = (a: Answer) => a.status >= 200 && a.status < 300
/** Answers the usage meter counts: every one with a caller, so all but those refused because the key could not be looked up. */
const recorded = (a: Answer) => a.problem !== 'unavailable (key store)'

/** The last `n` answers all 2xx, every one after `since`. */
const healthyTail = (answers: Answer[], n: number, since: number) =>
  answers.length >= n && answers.slice(-n).every((a) => isOk(a) && a.at > since)

/** A gauge or counter of the server's /metrics. */
async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text()
  return Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? Number.NaN)
}

/** `almanac usage --format json` for the key, summed over its routes. */
async function reportedUsage(env: Record<string, string>, keyId: string) {
  const lines: any[] = JSON.parse(await cli(['usage', '--key', keyId, '--since', '1d', '--format', 'json'], env))
  const sum = (field: string) => lines.reduce((total, line) => total + Number(line[field]), 0)
  return { requests: sum('requests'), answered: sum('answered'), server_errors: sum('server_errors'), credits: sum('credits') }
}

/** The same totals from the answers the stream got. */
function expectedUsage(answers: Answer[]) {
  const counted = answers.filter(recorded)
  return {
    requests: counted.length,
    answered: counted.filter(isOk).length,
    server_errors: counted.filter((a) => a.status >= 500).length,
    credits: counted.filter((a) => a.counted).length,
  }
}

/**
 * A stored key made with the CLI, and the master to kill. A cluster's key store or ledger master is chosen not
 * to hold the key's quota counter too (a fresh key until it does not): that kill is a row of its own.
 */
async function keyAndTarget(topologies: StartedTopologies, topology: TopologyKind, victim: Victim, env: Record<string, string>) {
  for (let attempt = 0; ; attempt++) {
    const name = `failover-${topology}-${victim.replace(' ', '-')}-${crypto.randomUUID().slice(0, 8)}`
    const made = JSON.parse(await cli(['keys', 'create', '--name', name, '--json'], env)) as { id: string; key: string }
    const target = await targetOf(topologies, topology, victim, made.id)
    if (topology === 'sentinel' || victim === 'quota counter' || attempt === 20) return { made, target }
    if ((await slotOwner(topologies.cluster!, quotaCounterOf(made.id))) !== target.port) return { made, target }
  }
}

/**
 * One run: a key made with the CLI, a server on the topology with the policy, the stream, the kill, the
 * takeover awaited, AFTER 2xx in a row, the meter drained (its own gauge at 0), SIGTERM, then the ledger and
 * the counter read back. `tempDir` makes the server's state dir.
 */
export async function runFailover(
  topologies: StartedTopologies,
  topology: TopologyKind,
  policy: Policy,
  victim: Victim,
  tempDir: () => string,
): Promise<FailoverResult> {
  const url = topology === 'cluster' ? clusterUrl(topologies.cluster!) : sentinelUrl(topologies.sentinel!)
  const env = {
    ALMANAC_STATE_DIR: tempDir(),
    ALMANAC_KEY_STORE: url,
    ALMANAC_QUOTA_STORE: url,
    ALMANAC_PLANS: `${PLAN.name}:${PLAN.credits}/1d`,
    ALMANAC_DEFAULT_PLAN: PLAN.name,
    ALMANAC_QUOTA_FAIL_OPEN: String(policy === 'fail-open'),
  }
  const { made, target } = await keyAndTarget(topologies, topology, victim, env)
  const server = await startAlmanac(env)
  try {
    const load = stream(server.url, made.key)
    let killedAt = 0
    let takeoverMs = 0
    try {
      await waitFor('answers before the kill', async () => load.answers.filter(isOk).length >= BEFORE)
      await target.kill()
      killedAt = performance.now()
      await waitFor('a replica taking over', target.takenOver, GIVE_UP_MS / 1000)
      takeoverMs = performance.now() - killedAt
      const takenOverAt = performance.now()
      await waitFor('requests succeeding again', async () => healthyTail(load.answers, AFTER, takenOverAt), GIVE_UP_MS / 1000)
    } finally {
      await load.stop()
    }
    // The meter writes every second and retries what failed: nothing pending once it has caught up.
    await waitFor('the usage meter caught up', async () => (await metric(server.url, 'almanac_usage_pending_rows')) === 0)
    const droppedBatches = await metric(server.url, 'almanac_usage_dropped_batches_total')
    server.child.kill('SIGTERM')
    const serverExit = await server.child.exited
    const ledgerWriteFailures = (await server.log).match(/usage ledger: cannot write/g)?.length ?? 0
    const reported = await reportedUsage(env, made.id)
    const quota = redisQuotaStore(url)
    const state = await quota.peek(`key:${made.id}`, PLAN)
    quota.close()
    const answers = load.answers
    return {
      ...{ topology, policy, victim, answers, killedAt, takeoverMs, serverExit, ledgerWriteFailures },
      usage: { reported, expected: expectedUsage(answers), droppedBatches },
      spent: state.limit - state.remaining,
      credited: answers.filter((a) => a.counted).length,
    }
  } finally {
    if (server.child.exitCode === null) server.child.kill('SIGKILL')
  }
}

export interface Gap {
  /** Ms from the first failing request sent to the first 2xx answered after the last failing one (0: none failed). */
  ms: number
  failed: number
  /** Failed answers by `status problem`. */
  byProblem: Record<string, number>
  /** 2xx answered uncounted (fail-open) after the kill. */
  uncounted: number
  /** Over the second before the kill, and from the end of the gap and the takeover to the end of the stream. */
  rpsBefore: number
  rpsAfter: number
  /** The longest any request sent after the kill waited for its answer. */
  slowestMs: number
}

/** The gap and the rates around it, from the answers. */
export function gapOf(result: FailoverResult): Gap {
  const { answers, killedAt } = result
  const failed = answers.filter((a) => !isOk(a))
  const last = answers.findLastIndex((a) => !isOk(a))
  const resumed = last < 0 ? undefined : answers.slice(last + 1).find(isOk)
  const byProblem: Record<string, number> = {}
  for (const a of failed) byProblem[`${a.status} ${a.problem}`] = (byProblem[`${a.status} ${a.problem}`] ?? 0) + 1
  const before = answers.filter((a) => a.at <= killedAt && a.at > killedAt - 1000)
  const after = answers.filter((a) => a.at > Math.max(resumed?.at ?? 0, killedAt + result.takeoverMs))
  const rate = (list: Answer[]) => (list.length > 1 ? ((list.length - 1) * 1000) / (list.at(-1)!.at - list[0]!.at) : 0)
  return {
    ms: resumed ? resumed.at - Math.min(...failed.map((a) => a.sentAt)) : 0,
    failed: failed.length,
    byProblem,
    uncounted: answers.filter((a) => a.at > killedAt && isOk(a) && !a.counted).length,
    rpsBefore: rate(before),
    rpsAfter: rate(after),
    slowestMs: Math.max(0, ...answers.filter((a) => a.sentAt > killedAt).map((a) => a.at - a.sentAt)),
  }
}

/** One printed line per run. */
export function describeRun(result: FailoverResult): string {
  const gap = gapOf(result)
  const { reported, expected, droppedBatches } = result.usage
  const exact = JSON.stringify(reported) === JSON.stringify(expected) && droppedBatches === 0
  const usage = exact ? 'yes' : `NO (reported ${JSON.stringify(reported)}, answered ${JSON.stringify(expected)}, ${droppedBatches} dropped)`
  const failures = Object.entries(gap.byProblem)
    .map(([what, n]) => `${n}× ${what}`)
    .join(', ')
  return [
    `${result.topology} ${result.policy}, ${result.victim === 'Sentinel' ? 'the Sentinel' : `the ${result.victim}'s`} master killed:`,
    `gap ${(gap.ms / 1000).toFixed(2)} s (takeover seen ${(result.takeoverMs / 1000).toFixed(2)} s after the kill);`,
    `${gap.failed} failed${failures ? ` (${failures})` : ''}; ${gap.uncounted} served uncounted;`,
    `slowest answer ${(gap.slowestMs / 1000).toFixed(2)} s;`,
    `ledger writes failed and retried: ${result.ledgerWriteFailures ? 'yes' : 'no'};`,
    `${gap.rpsBefore.toFixed(0)} req/s before, ${gap.rpsAfter.toFixed(0)} after;`,
    `usage exact: ${usage};`,
    `credits over-spent: ${result.spent - result.credited}`,
  ].join(' ')
}

const ROWS: [TopologyKind, Policy, Victim][] = [
  ['cluster', 'fail-closed', 'key store'],
  ['cluster', 'fail-open', 'key store'],
  ['cluster', 'fail-closed', 'ledger'],
  ['cluster', 'fail-open', 'ledger'],
  ['cluster', 'fail-closed', 'quota counter'],
  ['cluster', 'fail-open', 'quota counter'],
  ['sentinel', 'fail-closed', 'Sentinel'],
  ['sentinel', 'fail-open', 'Sentinel'],
]

if (import.meta.main) {
  console.log(`failover under HTTP load, ${new Date().toISOString()}: ${IN_FLIGHT} requests in flight, one stored key`)
  const dirs: string[] = []
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'almanac-bench-failover-'))
    dirs.push(dir)
    return dir
  }
  try {
    // ONLY=text runs the rows whose description contains it.
    const only = process.env.ONLY ?? ''
    for (const [topology, policy, victim] of ROWS.filter((row) => row.join(' ').includes(only))) {
      const topologies = await startSomeTopologies(topology === 'cluster' ? 1 : 0, topology === 'sentinel' ? 1 : 0)
      try {
        console.log(describeRun(await runFailover(topologies, topology, policy, victim, tempDir)))
      } finally {
        await topologies.close()
      }
    }
  } finally {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  }
}
