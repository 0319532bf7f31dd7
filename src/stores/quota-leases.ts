/**
 * Credit leases (docs/auth-and-quotas.md, "Credit leases"): an instance takes a block of a subject's credits
 * from Redis at once (LEASE, counted as used in the window's counter, so the window never goes over the
 * plan) and spends it locally without a round trip, so a hot key is no longer one Redis core's worth of
 * requests. Credits go back (RETURN) when another instance finds the window empty while this one holds some
 * (it marks a want; holders see it within a tick), after `idleMs` without a request, and on close; a new
 * window starts fresh (the old one's credits can no longer be spent anywhere). Refunds go back to the local
 * lease first. Plans without a block size, and subjects whose key cannot share a cluster slot with its lease
 * hash, are counted as before by the wrapped store.
 */
import type { Plan } from '../config.ts'
import { quotaState, quotaWindow, windowKey, type Answer, type QuotaState, type QuotaStore } from './quota.ts'
import { LEASE, PEEK, RETURN } from './quota-leases-lua.ts'
import { QUOTA_KEY_PREFIX, quotaKey, quotaKeyTtl } from './quota-redis.ts'
import type { RedisConnection } from './redis-connection.ts'

export interface LeaseOptions {
  /** Block size by plan name: what one LEASE takes beyond the request's need. */
  blocks: ReadonlyMap<string, number>
  keyPrefix?: string
  /** This instance's name in the lease hashes; a random one by default. */
  instance?: string
  /** How often holders look for wants and idle leases; 0: only when `tick` is called (tests). */
  tickMs?: number
  /** How long an asker waits for holders to give credits back before it asks once more. */
  waitMs?: number
  /** A lease unused this long goes back. */
  idleMs?: number
  /** How long a want counts: grants are then exactly what is needed, and holders give back. */
  wantMs?: number
  clock?: () => number
  /** How an asker waits `waitMs` (tests pass one they release when holders have ticked). */
  wait?: (ms: number) => Promise<void>
}

export interface LeasingQuotaStore extends QuotaStore {
  /** Gives back wanted and idle leases and forgets ended windows' (the timer calls it every `tickMs`). */
  tick(now?: number): Promise<void>
  /** Credits held here unspent, for tests and the bench. */
  held(): number
}

interface Lease {
  plan: Plan
  start: number
  end: number
  keys: [counter: string, hash: string]
  /** Granted to this instance and not spent. */
  unspent: number
  /** The change in `unspent` that Redis's hash has not heard of yet (local spends and refunds). */
  unreported: number
  /** The window's counter as of the last script. */
  used: number
  usedAt: number
  /** The LEASE (or the wait for holders) in flight: one per lease, so concurrent misses do not each take a block. */
  pending: Promise<unknown> | null
  /** A tick saw a want while a LEASE was in flight: give back what it granted as soon as it lands. */
  wanted: boolean
}

/**
 * The lease hash's name, in the counter's cluster slot (a script's keys must share one), or null when no name
 * can be sure to: a key with braces but no hash tag of its own.
 */
export function leaseHashOf(counter: string, cluster: boolean): string | null {
  if (!cluster) return `${counter}:lease`
  const open = counter.indexOf('{')
  const close = open < 0 ? -1 : counter.indexOf('}', open + 1)
  if (close > open + 1) return `${counter}:lease`
  if (counter.includes('}')) return null
  return `{${counter}}:lease`
}

/** What this instance can tell: the counter as of its last script, with its own unspent credits not spent. */
const stateOf = (l: Lease, allowed: boolean): QuotaState => quotaState(l.plan, l.start, Math.max(0, l.used - l.unspent), allowed)

/** `cost` spent from what is held here: no round trip. */
const spendHere = (l: Lease, cost: number) => {
  l.unspent -= cost
  l.unreported -= cost
  return stateOf(l, true)
}

interface CallSettings {
  instance: string
  wantsKey: string
  wantMs: number
  waitMs: number
  wait: (ms: number) => Promise<void>
}

/** The calls on Redis a lease makes: LEASE (`ask`, and `obtain` around it, with the want) and RETURN. */
function leaseCalls(redis: RedisConnection, { instance, wantsKey, wantMs, waitMs, wait }: CallSettings) {
  const lease = redis.script(LEASE)
  const giveBack = redis.script(RETURN)

  /** One LEASE: what is held here plus what Redis grants pays for `cost`; true if it did. */
  const ask = async (l: Lease, cost: number, block: number, now: number): Promise<{ ok: boolean; others: number }> => {
    const have = l.unspent
    const delta = l.unreported
    l.unspent = 0
    l.unreported = 0
    const ttl = quotaKeyTtl(l.end, now)
    let reply: [number, number, number, number]
    try {
      reply = await lease(l.keys, [
        instance,
        String(cost - have),
        String(block),
        String(l.plan.credits),
        ttl,
        String(delta),
        String(have),
        String(wantMs),
      ])
    } catch (e) {
      // Had the script run after all, Redis counts credits nobody spends: fewer, never more than the plan.
      l.unspent += have
      l.unreported += delta
      throw e
    }
    const [ok, used, grant, others] = reply.map(Number) as [number, number, number, number]
    l.used = used
    l.unspent += ok ? grant - (cost - have) : have
    return { ok: ok === 1, others }
  }

  /** A cost the lease does not cover: a LEASE, and when others hold credits, a want, a wait and one more. */
  const obtain = async (l: Lease, cost: number, block: number, now: number): Promise<QuotaState> => {
    while (l.pending) {
      await l.pending.catch(() => {})
      if (cost <= l.unspent) return spendHere(l, cost)
    }
    const run = async () => {
      const first = await ask(l, cost, block, now)
      // Worth a want only if what others hold could make up the difference.
      if (first.ok || !first.others || first.others + l.plan.credits - l.used + l.unspent < cost) return first.ok
      // What is held here does not pay for this request alone: back to Redis, where the retry (or another
      // instance waiting likewise) can add it to what the holders give back.
      if (l.unspent > 0) await returnLease(l)
      await Promise.all([
        redis.command('ZADD', [wantsKey, String(now), l.keys[1]]),
        redis.command('ZREMRANGEBYSCORE', [wantsKey, '-inf', String(now - 2 * wantMs)]),
      ])
      await wait(waitMs)
      if (cost > l.unspent) return (await ask(l, cost, block, now)).ok
      spendHere(l, cost)
      return true
    }
    const running = run()
    l.pending = running
    try {
      return stateOf(l, await running)
    } finally {
      l.pending = null
      if (l.wanted && l.unspent > 0) void returnLease(l).catch(() => {})
      l.wanted = false
    }
  }

  const returnLease = async (l: Lease) => {
    const amount = l.unspent
    const delta = l.unreported - amount
    l.unspent = 0
    l.unreported = 0
    // On failure the credits stay dropped: had the script run, keeping them too would go over the plan.
    l.used = Number(await giveBack(l.keys, [instance, String(amount), String(delta)]))
  }

  return { obtain, returnLease }
}

export function leasingQuotaStore(store: QuotaStore, redis: RedisConnection, options: LeaseOptions): LeasingQuotaStore {
  const { blocks, keyPrefix = QUOTA_KEY_PREFIX, instance = crypto.randomUUID(), clock = Date.now } = options
  const { tickMs = 100, waitMs = 300, idleMs = 2000, wantMs = 2000, wait = (ms: number) => Bun.sleep(ms) } = options
  const peek = redis.script(PEEK)
  const wantsKey = `${keyPrefix}lease-wants`
  const leases = new Map<string, Lease>()

  /** The live lease of the window holding `now`; null when the wrapped store counts this one. */
  const leaseFor = (subject: string, plan: Plan, now: number): Lease | null => {
    const { start, end } = quotaWindow(plan, now)
    const name = `${plan.name}\0${windowKey(plan)}\0${subject}`
    const known = leases.get(name)
    if (known && known.start === start) return known
    if (known && known.start > start) return null
    const counter = quotaKey(keyPrefix, subject, plan, start)
    const hash = leaseHashOf(counter, redis.cluster)
    if (!hash) return null
    // An earlier window's credits can no longer be spent anywhere: nothing to give back to.
    const fresh: Lease = {
      plan,
      start,
      end,
      keys: [counter, hash],
      unspent: 0,
      unreported: 0,
      used: 0,
      usedAt: now,
      pending: null,
      wanted: false,
    }
    leases.set(name, fresh)
    return fresh
  }

  const { obtain, returnLease } = leaseCalls(redis, { instance, wantsKey, wantMs, waitMs, wait })

  let ticking = false
  const tick = async (now = clock()) => {
    if (ticking || !leases.size) return
    ticking = true
    try {
      const wanted = new Set<string>((await redis.command('ZRANGEBYSCORE', [wantsKey, String(now - wantMs), '+inf'])) ?? [])
      const work: Promise<void>[] = []
      for (const [name, l] of leases) {
        if (l.pending) {
          l.wanted ||= wanted.has(l.keys[1])
          continue
        }
        if (now >= l.end * 1000) {
          leases.delete(name)
          continue
        }
        const idle = now - l.usedAt >= idleMs
        if (idle) leases.delete(name)
        if ((idle || wanted.has(l.keys[1])) && (l.unspent > 0 || l.unreported !== 0)) work.push(returnLease(l))
      }
      await Promise.allSettled(work)
    } finally {
      ticking = false
    }
  }
  const timer = tickMs > 0 ? setInterval(() => void tick().catch(() => {}), tickMs) : null
  timer?.unref()

  return {
    consume(subject, plan, cost, now = clock()): Answer<QuotaState> {
      const block = blocks.get(plan.name)
      const l = block === undefined ? null : leaseFor(subject, plan, now)
      if (!l) return store.consume(subject, plan, cost, now)
      l.usedAt = now
      if (cost <= l.unspent) return spendHere(l, cost)
      return obtain(l, cost, block!, now)
    },
    refund(subject, plan, credits, now = clock()) {
      const l = blocks.has(plan.name) ? leases.get(`${plan.name}\0${windowKey(plan)}\0${subject}`) : undefined
      if (!l || l.start !== quotaWindow(plan, now).start) return store.refund(subject, plan, credits, now)
      // Redis's hash hears of it with this instance's next script (until then it says less is held here).
      l.unspent += credits
      l.unreported += credits
      return stateOf(l, true)
    },
    async peek(subject, plan, now = clock()) {
      const l = blocks.has(plan.name) ? leaseFor(subject, plan, now) : null
      if (!l) return store.peek(subject, plan, now)
      // Other instances' leases count as not spent: admission must not refuse what a give-back would free.
      const [used, others] = ((await peek(l.keys, [instance])) as number[]).map(Number) as [number, number]
      l.used = used
      return quotaState(plan, l.start, Math.max(0, used - others - l.unspent), true)
    },
    tick,
    held: () => [...leases.values()].reduce((sum, l) => sum + l.unspent, 0),
    check: () => redis.check(),
    async close() {
      if (timer) clearInterval(timer)
      await Promise.allSettled([...leases.values()].filter((l) => l.unspent > 0 || l.unreported !== 0).map(returnLease))
      leases.clear()
      await store.close()
    },
  }
}
