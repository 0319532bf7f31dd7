/**
 * The Lua scripts of credit leases (quota-leases.ts). Each touches a subject's window counter (KEYS[1], the
 * key quota-redis.ts counts in) and its lease hash (KEYS[2], in the same cluster slot: instance -> credits
 * granted to it and not yet spent as far as it has told, and `~want`, Redis's time in ms when an instance
 * last found the window empty while others held credits). A script runs alone, so grant, spend and return
 * are atomic across instances; the counter counts granted credits as used, so it never goes over the plan.
 */

/** The hash field of the last want (not an instance: instance names never start with `~`). */
export const WANT_FIELD = '~want'

/**
 * KEYS counter, lease hash. ARGV instance, need, block, credits, ttl, delta, have, want ms, the lease channel.
 * `need`: the credits the request lacks after spending `have`, what the instance held; `delta`: the change
 * in what it holds since it last told Redis (spends lower it, refunds raise it). Grants `need` plus a block
 * (while a want is recent, at most half of what is left beyond the need, so holders do not hoard what others
 * wait for, nor does the last of a plan go one script a request) if `need` fits; else grants nothing, and if
 * other instances hold credits that would make up the need marks the want, in the hash and on the channel
 * (`want <hash> <instances>`): the largest holders, until they hold twice the need, give back. `need` 0 is a
 * refill before the lease runs dry: it always fits, so it never marks a want. Returns {granted?, used after,
 * grant, credits the others hold}.
 */
export const LEASE = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local need = tonumber(ARGV[2])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local wanted = now - tonumber(redis.call('HGET', KEYS[2], '${WANT_FIELD}') or '0') < tonumber(ARGV[8])
local left = math.max(0, tonumber(ARGV[4]) - used)
local ok, grant, others = 0, 0, 0
local delta = tonumber(ARGV[6])
if need <= left then
  ok = 1
  local block = tonumber(ARGV[3])
  -- Under a want, at most half of what is left beyond the need rather than a whole block: the last credits
  -- are spread in ever smaller shares, and not asked for one request at a time.
  if wanted then block = math.min(block, math.floor((left - need) / 2)) end
  grant = math.min(left, need + block)
  used = redis.call('INCRBY', KEYS[1], grant)
  redis.call('EXPIRE', KEYS[1], ARGV[5])
  delta = delta + grant - need - tonumber(ARGV[7])
end
if delta ~= 0 and redis.call('HINCRBY', KEYS[2], ARGV[1], delta) <= 0 then redis.call('HDEL', KEYS[2], ARGV[1]) end
if ok == 0 then
  local all = redis.call('HGETALL', KEYS[2])
  local holders = {}
  for i = 1, #all, 2 do
    if all[i] ~= ARGV[1] and all[i] ~= '${WANT_FIELD}' then
      local held = tonumber(all[i + 1])
      others = others + held
      if held > 0 then table.insert(holders, {all[i], held}) end
    end
  end
  if others > 0 and others + left >= need then
    redis.call('HSET', KEYS[2], '${WANT_FIELD}', now)
    -- The largest holders, until what they hold is twice the need (the hash may count credits a holder has
    -- since spent): only they give back, one RETURN each, rather than every holder of the key.
    table.sort(holders, function(a, b) return a[2] > b[2] end)
    local named, sum = {}, left
    for _, h in ipairs(holders) do
      if sum >= 2 * need then break end
      table.insert(named, h[1])
      sum = sum + h[2]
    end
    redis.call('PUBLISH', ARGV[9], 'want ' .. KEYS[2] .. ' ' .. table.concat(named, ','))
  end
end
redis.call('EXPIRE', KEYS[2], ARGV[5])
return {ok, used, grant, others}
`

/**
 * KEYS counter, lease hash. ARGV instance, credits given back, delta (what the instance now holds minus what
 * it last told, the given-back credits included), the lease channel. Returns the counter after (never below
 * zero: a window whose key has expired has nothing to give back to). Credits given back are announced on the
 * channel (`freed <hash>`): instances repeating a refusal of this key ask again.
 */
export const RETURN = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local give = math.min(used, tonumber(ARGV[2]))
if give > 0 then
  used = redis.call('DECRBY', KEYS[1], give)
  redis.call('PUBLISH', ARGV[4], 'freed ' .. KEYS[2])
end
if tonumber(ARGV[3]) ~= 0 and redis.call('HINCRBY', KEYS[2], ARGV[1], ARGV[3]) <= 0 then redis.call('HDEL', KEYS[2], ARGV[1]) end
return used
`

/** KEYS counter, lease hash. ARGV instance. Returns {used, credits the other instances hold}. */
export const PEEK = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local others = 0
local all = redis.call('HGETALL', KEYS[2])
for i = 1, #all, 2 do
  if all[i] ~= ARGV[1] and all[i] ~= '${WANT_FIELD}' then others = others + tonumber(all[i + 1]) end
end
return {used, others}
`

/** KEYS the wants' sorted set. ARGV now (ms), the lease hash, the oldest want still kept (ms). For instances that poll. */
export const WANT = `
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
`
