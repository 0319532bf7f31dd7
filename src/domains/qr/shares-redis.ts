/**
 * The per-caller share ledger (`shares.ts`) in the quota store's Redis, for instances on several hosts:
 * one key's share is then one share however many instances it calls, where a ledger in each state dir
 * would let it spend the share once per instance.
 *
 * Each caller is three keys under one hash tag, `almanac:qr:share:{<caller>}:…` (so every script touches
 * one Redis Cluster slot): `expiry`, a sorted set of image names by the Unix second their charge ends;
 * `bytes`, a hash of each image's size; `held`, the running total. Every operation is one Lua script, so
 * concurrent charges from any instance are serialised by Redis and the share is never overshot. Charges
 * past their expiry are dropped by the next script that reads the caller (the clock alone frees bytes, as
 * in SQLite); a caller who never returns is forgotten by Redis itself, whose keys expire an hour after
 * their last charge does, so there is nothing to prune.
 */
import { storeUnavailable } from '../../lib/errors.ts'
import { redactUrl, redisConnection } from '../../stores/redis.ts'
import type { LogSink } from '../../lib/logger.ts'
import type { ChargeResult, CheckResult, StoreLedger } from './shares.ts'

/** Charges read to say when a refused caller will have room, as in SQLite. */
const ROOM_WALK = 1024
/** Expired charges dropped per command inside a script (Lua's `unpack` has a stack limit). */
const SETTLE_BATCH = 1000
/** How long a caller's keys outlive its last charge: slack for clocks that disagree a little. */
const LINGER_SECONDS = 3600

/** KEYS[1] expiry (zset), KEYS[2] bytes (hash), KEYS[3] held (integer). */
const COMMON = `
local function settle(now)
  while true do
    local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, ${SETTLE_BATCH})
    if #gone == 0 then break end
    local sum = 0
    for _, b in ipairs(redis.call('HMGET', KEYS[2], unpack(gone))) do sum = sum + (tonumber(b) or 0) end
    redis.call('HDEL', KEYS[2], unpack(gone))
    redis.call('ZREM', KEYS[1], unpack(gone))
    redis.call('DECRBY', KEYS[3], sum)
  end
  return tonumber(redis.call('GET', KEYS[3]) or '0')
end
local function live(now)
  local held = tonumber(redis.call('GET', KEYS[3]) or '0')
  for _, name in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)) do
    held = held - (tonumber(redis.call('HGET', KEYS[2], name)) or 0)
  end
  return held
end
local function roomAt(held, bytes, share, now)
  if bytes > share then return -1 end
  local left, last = held, -1
  local rows = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0, ${ROOM_WALK})
  for i = 1, #rows, 2 do
    left = left - (tonumber(redis.call('HGET', KEYS[2], rows[i])) or 0)
    last = tonumber(rows[i + 1])
    if left + bytes <= share then break end
  end
  return last
end
local function keep(now)
  local top = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  if #top == 0 then return end
  local ttl = math.max(1, tonumber(top[2]) - now + ${LINGER_SECONDS})
  for i = 1, 3 do redis.call('EXPIRE', KEYS[i], ttl) end
end
`

/** ARGV name, bytes, expires, now, share -> {1, held, undo} | {0, held, freesAt}; undo -2 nothing, -1 remove, else the old expiry. */
const CHARGE = `${COMMON}
local name, bytes, expires, now, share = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local held = settle(now)
local before = redis.call('ZSCORE', KEYS[1], name)
if before then
  before = tonumber(before)
  if before >= expires then return {1, held, -2} end
  redis.call('ZADD', KEYS[1], expires, name)
  keep(now)
  return {1, held, before}
end
if held + bytes > share then return {0, held, roomAt(held, bytes, share, now)} end
redis.call('ZADD', KEYS[1], expires, name)
redis.call('HSET', KEYS[2], name, bytes)
redis.call('INCRBY', KEYS[3], bytes)
keep(now)
return {1, held + bytes, -1}
`

/** ARGV bytes, now, share -> {ok, held, freesAt}; writes nothing (only a charge drops expired charges, as in SQLite). */
const CHECK = `${COMMON}
local bytes, now, share = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local held = live(now)
if held + bytes <= share then return {1, held, -1} end
return {0, held, roomAt(held, bytes, share, now)}
`

/** ARGV name, expires, old expiry (-1: remove), bytes: undone only if no later request has moved the charge since. */
const UNDO = `
local cur = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not cur or tonumber(cur) ~= tonumber(ARGV[2]) then return 0 end
if tonumber(ARGV[3]) >= 0 then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
else
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[2], ARGV[1])
  redis.call('DECRBY', KEYS[3], ARGV[4])
end
return 1
`

/** What every key of the ledger starts with, on every topology (each caller is its own hash tag already). */
export const SHARE_KEY_PREFIX = 'almanac:qr:share:'

/** The caller inside a hash tag: encoded, so no `{` or `}` of its own can move the tag. */
export const shareKeys = (caller: string) => {
  const tag = `${SHARE_KEY_PREFIX}{${encodeURIComponent(caller)}}`
  return [`${tag}:expiry`, `${tag}:bytes`, `${tag}:held`]
}

export function redisLedger(url: string, log?: LogSink): StoreLedger {
  const redis = redisConnection(url, { role: 'QR share ledger', log })
  const down = (e: unknown) =>
    storeUnavailable(
      `The QR store's per-key ledger in Redis (${redactUrl(url)}, ALMANAC_QUOTA_STORE) cannot be reached (${(e as Error).message}); ` +
        'png and svg images cannot be stored until it is back, format base64 still works.',
      5,
    )
  const run = (source: string) => {
    const script = redis.script(source)
    return async (caller: string, args: (string | number)[]): Promise<number[]> => {
      try {
        return (await script(shareKeys(caller), args.map(String))) as number[]
      } catch (e) {
        throw down(e)
      }
    }
  }
  const charge = run(CHARGE)
  const check = run(CHECK)
  const undo = run(UNDO)
  const freesAt = (at: number) => (at < 0 ? undefined : at)
  return {
    async charge(caller, name, bytes, expires, now, share): Promise<ChargeResult> {
      const [ok, held, third] = (await charge(caller, [name, bytes, expires, now, share])) as [number, number, number]
      if (!ok) return { ok: false, held, freesAt: freesAt(third) }
      const give = async () => void (await undo(caller, [name, expires, third, bytes]))
      return { ok: true, held, undo: third === -2 ? async () => {} : give }
    },
    async check(caller, bytes, now, share): Promise<CheckResult> {
      const [ok, held, at] = (await check(caller, [bytes, now, share])) as [number, number, number]
      return ok ? { ok: true, held } : { ok: false, held, freesAt: freesAt(at) }
    },
    async held(caller, now) {
      return ((await check(caller, [0, now, Number.MAX_SAFE_INTEGER])) as number[])[1]!
    },
    // Redis forgets each caller's keys by itself once their last charge is an hour past (`keep`).
    prune: async () => {},
    close: () => redis.close(),
  }
}
