/**
 * Credit leases (docs/auth-and-quotas.md, "Credit leases"): an instance takes a block of a subject's credits
 * from Redis at once (LEASE, counted as used in the window's counter, so the window never goes over the
 * plan) and spends it locally without a round trip, so a hot key is no longer one Redis core's worth of
 * requests.
 *
 * - A block is what this instance spent of the key over the last `horizonMs`, at most the plan's block size:
 *   a key seen now and then takes nothing beyond the request (one script a request, as without leases), a
 *   busy one takes up to the block. A lease half spent asks for the next block before it runs dry, so a
 *   request does not wait for it; one that ran dry all the same takes twice the block next time (up to 16×).
 * - Credits go back (RETURN) when another instance finds the window empty while this one holds some: it
 *   marks a want, published on a channel every instance hears (and kept in a sorted set for instances whose
 *   subscription is down, which poll it each tick); after `idleMs` without a request (`heardIdleMs` while
 *   wants are heard at once); and on close. A new window starts fresh: the old one's credits can no longer be
 *   spent anywhere. Refunds go back to the local lease first.
 * - A refusal stands here without a round trip, when Redis gave it while no instance held credits or after the
 *   holders were asked to give back and did not within `waitMs`: until credits go back to that window (a
 *   give-back or refund announces it on the channel), at most `heardRefusedMs`; `refusedMs` while the channel
 *   is not heard. So a key whose plan is spent costs Redis nothing per refused request.
 *
 * Plans without a block size, and subjects whose key cannot share a cluster slot with its lease hash, are
 * counted as before by the wrapped store.
 */
import type { Plan } from '../config.ts'
import { quotaState, quotaWindow, windowKey, type Answer, type QuotaState, type QuotaStore, type QuotaWindow } from './quota.ts'
import { LEASE, PEEK, RETURN, WANT } from './quota-leases-lua.ts'
import { QUOTA_KEY_PREFIX, quotaKey, quotaKeyTtl } from './quota-redis.ts'
import type { RedisConnection, Subscription } from './redis-connection.ts'

export interface LeaseOptions {
  /** Block size by plan name: the most one LEASE takes beyond the request's need. */
  blocks: ReadonlyMap<string, number>
  keyPrefix?: string
  /** This instance's name in the lease hashes; a random one by default. */
  instance?: string
  /** How often holders look for idle leases (and, while wants are not heard at once, for wants); 0: only when `tick` is called. */
  tickMs?: number
  /** How long an asker waits for holders to give credits back before it asks once more. */
  waitMs?: number
  /** A lease unused this long goes back while wants are not heard at once. */
  idleMs?: number
  /** A lease unused this long goes back while they are (holders give back the moment they are wanted). */
  heardIdleMs?: number
  /** How long a want counts: grants are then exactly what is needed, and holders give back. */
  wantMs?: number
  /** A block is what was spent here over this long; 0: every LEASE takes the whole block. */
  horizonMs?: number
  /** How long a refusal (nothing held anywhere, or holders that did not give back) is repeated here without asking Redis. */
  refusedMs?: number
  /** The same while give-backs are heard on the channel (each one lifts the refusals of its key at once). */
  heardRefusedMs?: number
  /** Hear wants on a channel (the default); false: only poll them each tick. */
  subscribe?: boolean
  clock?: () => number
  /** How an asker waits `waitMs` (tests pass one they release when holders have ticked). */
  wait?: (ms: number) => Promise<void>
}

export interface LeasingQuotaStore extends QuotaStore {
  /** Gives back wanted and idle leases and forgets ended windows' (the timer calls it every `tickMs`). */
  tick(now?: number): Promise<void>
  /** Credits held here unspent, for tests and the bench. */
  held(): number
  /** True while wants reach this instance the moment they are marked (its subscription to them is live). */
  hearsWants(): boolean
  /** Resolves once no LEASE of this instance is in flight (refills included), for tests and the bench. */
  settled(): Promise<void>
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
  /** The one in flight is a refill: a request that finds the lease dry meanwhile doubles `cap`. */
  refilling: boolean
  /** A tick or a message saw a want while a LEASE was in flight: give back what it granted as soon as it lands. */
  wanted: boolean
  /** Credits spent here since `since` (ms): the rate a block is sized by. */
  spent: number
  since: number
  /** The most a LEASE takes beyond the need: the plan's block, doubled each time the lease ran dry. */
  cap: number
  /** Below this many unspent credits a refill is asked for. */
  lowWater: number
  /** Until when (ms) a refusal stands here, and the credits Redis had left then. */
  refusedUntil: number
  refusedLeft: number
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
  l.spent += cost
  return stateOf(l, true)
}

/** A lease's name in an instance's map: one per subject, plan and window length (its window changes in place). */
const leaseName = (subject: string, plan: Plan) => `${plan.name}\0${windowKey(plan)}\0${subject}`

/** A lease of a new window, nothing held yet; the rate spent so far carries over from the last window's. */
const newLease = (plan: Plan, { start, end }: QuotaWindow, keys: Lease['keys'], block: number, now: number, last?: Lease): Lease => ({
  plan,
  start,
  end,
  keys,
  unspent: 0,
  unreported: 0,
  used: 0,
  usedAt: now,
  pending: null,
  refilling: false,
  wanted: false,
  spent: last?.spent ?? 0,
  since: last?.since ?? now,
  cap: block,
  lowWater: 0,
  refusedUntil: 0,
  refusedLeft: 0,
})

/** A block grows at most this many times the plan's block size by running dry. */
const CAP_GROWTH = 16

interface CallSettings {
  instance: string
  /** The wants' sorted set, and the channel of wants and give-backs. */
  wantsKey: string
  wantMs: number
  waitMs: number
  horizonMs: number
  /** How long a refusal stands here now: longer while give-backs are heard (they lift it). */
  refusedMs: () => number
  wait: (ms: number) => Promise<void>
}

/** The calls on Redis a lease makes: LEASE (`obtain`, `refill`, with a want when others hold credits) and RETURN. */
function leaseCalls(redis: RedisConnection, settings: CallSettings) {
  const { instance, wantsKey, wantMs, waitMs, horizonMs, refusedMs, wait } = settings
  const lease = redis.script(LEASE)
  const giveBack = redis.script(RETURN)
  const markWant = redis.script(WANT)

  /** What one LEASE takes beyond the need: the credits spent here over the last horizon, up to the cap. */
  const blockFor = (l: Lease, now: number): number => {
    if (!horizonMs) return l.cap
    // Older spending counts for less: the rate over the last one or two horizons.
    if (now - l.since > 2 * horizonMs) {
      l.spent = (l.spent * horizonMs) / (now - l.since)
      l.since = now - horizonMs
    }
    const block = Math.floor((l.spent * horizonMs) / Math.max(horizonMs, now - l.since))
    // A block of one saves nothing: the RETURN it may need costs what it spares.
    return block < 2 ? 0 : Math.min(l.cap, block)
  }

  /**
   * One LEASE: `cost` paid by what is held here (`useHeld`) plus what Redis grants, with a block beyond it;
   * a refill asks for a block alone and spending goes on meanwhile. Returns whether it was granted.
   */
  const ask = async (l: Lease, cost: number, block: number, now: number, useHeld: boolean): Promise<{ ok: boolean; others: number }> => {
    const have = useHeld ? l.unspent : 0
    const delta = l.unreported
    l.unspent -= have
    l.unreported = 0
    const need = cost - have
    let reply: [number, number, number, number]
    try {
      const args = [instance, String(need), String(block), String(l.plan.credits), quotaKeyTtl(l.end, now)]
      reply = await lease(l.keys, [...args, String(delta), String(have), String(wantMs), wantsKey])
    } catch (e) {
      // Had the script run after all, Redis counts credits nobody spends: fewer, never more than the plan.
      l.unspent += have
      l.unreported += delta
      throw e
    }
    const [ok, used, grant, others] = reply.map(Number) as [number, number, number, number]
    l.used = used
    l.unspent += ok ? grant - need : have
    if (ok && grant > need) l.lowWater = Math.floor((grant - need) / 2)
    return { ok: ok === 1, others }
  }

  const returnLease = async (l: Lease) => {
    const amount = l.unspent
    const delta = l.unreported - amount
    l.unspent = 0
    l.unreported = 0
    // On failure the credits stay dropped: had the script run, keeping them too would go over the plan.
    l.used = Number(await giveBack(l.keys, [instance, String(amount), String(delta), wantsKey]))
  }

  /** Once a LEASE lands: what a want asked for meanwhile goes back. */
  const landed = (l: Lease) => {
    l.pending = null
    l.refilling = false
    if (l.wanted && l.unspent > 0) void returnLease(l).catch(() => {})
    l.wanted = false
  }

  /** The next block, asked for in the background while the lease still has credits. */
  const refill = (l: Lease, now: number) => {
    const block = blockFor(l, now)
    if (!block) return
    l.refilling = true
    l.pending = ask(l, 0, block, now, false)
      .catch(() => {})
      .finally(() => landed(l))
  }

  /** The want for instances that poll (the LEASE that found the window empty told the channel already). */
  const want = (l: Lease, now: number) => markWant([wantsKey], [String(now), l.keys[1], String(now - 2 * wantMs)])

  /** A cost the lease does not cover: a LEASE, and when others hold credits, a want, a wait and one more. */
  const obtain = async (l: Lease, cost: number, planBlock: number, now: number): Promise<QuotaState> => {
    if (l.refilling) l.cap = Math.min(l.cap * 2, planBlock * CAP_GROWTH)
    while (l.pending) {
      await l.pending.catch(() => {})
      if (cost <= l.unspent) return spendHere(l, cost)
    }
    // The LEASE waited for may have been refused: its refusal stands for this request too.
    if (now < l.refusedUntil && cost - l.unspent > l.refusedLeft) return stateOf(l, false)
    const block = blockFor(l, now)
    const run = async () => {
      const first = await ask(l, cost, block, now, true)
      // Worth a want only if what others hold could make up the difference.
      if (first.ok || !first.others || first.others + l.plan.credits - l.used + l.unspent < cost) return { ...first, wanted: false }
      // What is held here does not pay for this request alone: back to Redis, where the retry (or another
      // instance waiting likewise) can add it to what the holders give back.
      if (l.unspent > 0) await returnLease(l)
      await want(l, now)
      await wait(waitMs)
      if (cost > l.unspent) return { ...(await ask(l, cost, block, now, true)), wanted: true }
      l.unspent -= cost
      l.unreported -= cost
      return { ok: true, others: 0, wanted: true }
    }
    const running = run()
    l.pending = running
    try {
      const { ok, others, wanted } = await running
      if (ok) l.spent += cost
      else if (!others || wanted) {
        l.refusedUntil = now + refusedMs()
        l.refusedLeft = Math.max(0, l.plan.credits - l.used)
      }
      return stateOf(l, ok)
    } finally {
      landed(l)
    }
  }

  return { obtain, refill, returnLease }
}

export function leasingQuotaStore(store: QuotaStore, redis: RedisConnection, options: LeaseOptions): LeasingQuotaStore {
  const { blocks, keyPrefix = QUOTA_KEY_PREFIX, instance = crypto.randomUUID(), clock = Date.now } = options
  const { tickMs = 100, waitMs = 300, idleMs = 2000, heardIdleMs = 30_000, wantMs = 2000 } = options
  const { horizonMs = 30_000, refusedMs = 1000, heardRefusedMs = 60_000, wait = (ms: number) => Bun.sleep(ms) } = options
  const peek = redis.script(PEEK)
  const wantsKey = `${keyPrefix}lease-wants`
  const leases = new Map<string, Lease>()

  /** The live lease of the window holding `now`; null when the wrapped store counts this one. */
  const leaseFor = (subject: string, plan: Plan, block: number, now: number): Lease | null => {
    const { start, end } = quotaWindow(plan, now)
    const name = leaseName(subject, plan)
    const known = leases.get(name)
    if (known && known.start === start) return known
    if (known && known.start > start) return null
    const counter = quotaKey(keyPrefix, subject, plan, start)
    const hash = leaseHashOf(counter, redis.cluster)
    if (!hash) return null
    // An earlier window's credits can no longer be spent anywhere: nothing to give back to.
    const fresh = newLease(plan, { start, end }, [counter, hash], block, now, known)
    leases.set(name, fresh)
    return fresh
  }

  // While give-backs are heard, one lifts a refusal at once: it may stand until one comes.
  const refusedFor = () => (wants?.live ? heardRefusedMs : refusedMs)
  const calls = { instance, wantsKey, wantMs, waitMs, horizonMs, refusedMs: refusedFor, wait }
  const { obtain, refill, returnLease } = leaseCalls(redis, calls)
  const giveBackIfHeld = (l: Lease) => (l.unspent > 0 || l.unreported !== 0 ? returnLease(l) : undefined)

  /**
   * A message on the channel: `want <hash> <instances>`, the lease goes back now (or as soon as its LEASE lands)
   * if this instance is named; `freed <hash>`, credits went back to that window, so a refusal standing here for it
   * is lifted.
   */
  const heard = (message: string) => {
    const [what, hash, named] = message.split(' ') as [string, string, string | undefined]
    // A want names the holders that are to give back; the others keep theirs.
    if (what === 'want' && named !== undefined && !named.split(',').includes(instance)) return
    for (const l of leases.values()) {
      if (l.keys[1] !== hash) continue
      if (what === 'freed') l.refusedUntil = 0
      else if (l.pending) l.wanted = true
      else void giveBackIfHeld(l)?.catch(() => {})
    }
  }
  const wants: Subscription | null = options.subscribe === false ? null : redis.subscribe(wantsKey, { message: heard })

  let ticking = false
  const tick = async (now = clock()) => {
    if (ticking || !leases.size) return
    ticking = true
    try {
      const heard = wants?.live === true
      const polled = heard ? [] : await redis.command('ZRANGEBYSCORE', [wantsKey, String(now - wantMs), '+inf'])
      const wanted = new Set<string>(polled ?? [])
      const idleAfter = heard ? heardIdleMs : idleMs
      const work: (Promise<void> | undefined)[] = []
      for (const [name, l] of leases) {
        if (l.pending) {
          l.wanted ||= wanted.has(l.keys[1])
          continue
        }
        const idle = now - l.usedAt >= idleAfter
        // An idle lease is forgotten, unless its rate still sizes the next block of a key seen now and then.
        if (now >= l.end * 1000 || (idle && now - l.usedAt >= Math.max(idleAfter, 4 * horizonMs))) leases.delete(name)
        if (now < l.end * 1000 && (idle || wanted.has(l.keys[1]))) work.push(giveBackIfHeld(l))
      }
      await Promise.allSettled(work)
    } finally {
      ticking = false
    }
  }
  /** A refund with no lease here to take it: to the counter, and announced, as a give-back is, to refusals standing elsewhere. */
  const refundToRedis = async (subject: string, plan: Plan, credits: number, now: number) => {
    const state = await store.refund(subject, plan, credits, now)
    const hash = blocks.has(plan.name) && leaseHashOf(quotaKey(keyPrefix, subject, plan, quotaWindow(plan, now).start), redis.cluster)
    if (hash) await redis.command('PUBLISH', [wantsKey, `freed ${hash}`]).catch(() => {})
    return state
  }
  const settled = async () => {
    while ([...leases.values()].some((l) => l.pending)) await Promise.allSettled([...leases.values()].map((l) => l.pending))
  }
  const timer = tickMs > 0 ? setInterval(() => void tick().catch(() => {}), tickMs) : null
  timer?.unref()

  return {
    consume(subject, plan, cost, now = clock()): Answer<QuotaState> {
      const block = blocks.get(plan.name)
      const l = block === undefined ? null : leaseFor(subject, plan, block, now)
      if (!l) return store.consume(subject, plan, cost, now)
      l.usedAt = now
      if (cost <= l.unspent) {
        const state = spendHere(l, cost)
        if (!l.pending && l.unspent < l.lowWater) refill(l, now)
        return state
      }
      if (now < l.refusedUntil && cost - l.unspent > l.refusedLeft) return stateOf(l, false)
      return obtain(l, cost, block!, now)
    },
    refund(subject, plan, credits, now = clock()) {
      const l = blocks.has(plan.name) ? leases.get(leaseName(subject, plan)) : undefined
      if (!l || l.start !== quotaWindow(plan, now).start) return refundToRedis(subject, plan, credits, now)
      // Redis's hash hears of it with this instance's next script (until then it says less is held here).
      l.unspent += credits
      l.unreported += credits
      l.spent = Math.max(0, l.spent - credits)
      l.refusedUntil = 0
      return stateOf(l, true)
    },
    async peek(subject, plan, now = clock()) {
      const block = blocks.get(plan.name)
      const l = block === undefined ? null : leaseFor(subject, plan, block, now)
      if (!l) return store.peek(subject, plan, now)
      // Other instances' leases count as not spent: admission must not refuse what a give-back would free.
      const [used, others] = ((await peek(l.keys, [instance])) as number[]).map(Number) as [number, number]
      l.used = used
      return quotaState(plan, l.start, Math.max(0, used - others - l.unspent), true)
    },
    tick,
    held: () => [...leases.values()].reduce((sum, l) => sum + l.unspent, 0),
    settled,
    hearsWants: () => wants?.live === true,
    check: () => redis.check(),
    async close() {
      if (timer) clearInterval(timer)
      wants?.close()
      await settled()
      await Promise.allSettled([...leases.values()].map(giveBackIfHeld))
      leases.clear()
      await store.close()
    },
  }
}
