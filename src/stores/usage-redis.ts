/**
 * The usage ledger in Redis, shared by every instance that points at the same server. Per grain, period
 * and caller a hash `<prefix><grain>:<period>:<caller>` whose fields name the rest of a row's key
 * (customer, domain, route, outcome, tab-separated) and hold its counts as comma-separated integers; a set
 * `<prefix><grain>:<period>` names the callers of that period. Both expire with their grain's retention.
 *
 * A batch is one Lua script (Redis runs it alone: each row's read-add-write is atomic across instances),
 * and it first claims the batch's id (SET NX, kept a day): a batch whose reply was lost to a timeout and is
 * sent again is applied once, so an outage never makes the ledger count twice.
 *
 * On a Redis Cluster a script must keep to one slot, so the keys carry their UTC day as a hash tag
 * (`{almanac:usage:<day>}:hour:<period>:<caller>`, the hour rows under their day's tag): a batch is split by
 * day (one script; two around midnight), each part claiming `<batch id>` under its own tag, so each part is
 * applied once whatever becomes of the other; a read runs one script per day it spans, all at once. The
 * ledger is written once per flush per instance, so a day's slot takes little. A single node and a
 * Sentinel group keep the untagged names (one part, one script), as before: nothing to migrate.
 */
import { redisConnection, type RedisOptions } from './redis.ts'
import { type Grain, HOURLY_DAYS, LATENCY_BUCKETS, periodOf, sortRows, type UsageRow, type UsageStore } from './usage.ts'

/**
 * KEYS[1] the batch's claim; ARGV prefix, batch id, hour ttl, day ttl, then per row: hour, day, caller,
 * field, counts. 0: already applied.
 */
const WRITE = `
local p = ARGV[1]
if not redis.call('SET', KEYS[1], '1', 'NX', 'EX', 86400) then return 0 end
local ttls = { ARGV[3], ARGV[4] }
local grains = { 'hour:', 'day:' }
for i = 5, #ARGV, 5 do
  local caller, field, add = ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]
  local more = {}
  for n in string.gmatch(add, '[^,]+') do more[#more + 1] = tonumber(n) end
  for g = 1, 2 do
    local index = p .. grains[g] .. ARGV[i + g - 1]
    local h = index .. ':' .. caller
    local old = redis.call('HGET', h, field)
    local out = add
    if old then
      local parts, j = {}, 0
      for n in string.gmatch(old, '[^,]+') do
        j = j + 1
        parts[j] = string.format('%.0f', tonumber(n) + (more[j] or 0))
      end
      out = table.concat(parts, ',')
    end
    redis.call('HSET', h, field, out)
    redis.call('EXPIRE', h, ttls[g])
    redis.call('SADD', index, caller)
    redis.call('EXPIRE', index, ttls[g])
  end
end
return 1
`

/**
 * KEYS[1] one index read (a cluster routes by it); ARGV prefix, grain, caller ('' for every caller), then
 * periods. Returns flat [period, caller, field, counts, …].
 */
const READ = `
local p, grain, only = ARGV[1], ARGV[2], ARGV[3]
local out = {}
for i = 4, #ARGV do
  local index = p .. grain .. ':' .. ARGV[i]
  local callers = only ~= '' and { only } or redis.call('SMEMBERS', index)
  for _, caller in ipairs(callers) do
    local fields = redis.call('HGETALL', index .. ':' .. caller)
    for j = 1, #fields, 2 do
      out[#out + 1] = ARGV[i]
      out[#out + 1] = caller
      out[#out + 1] = fields[j]
      out[#out + 1] = fields[j + 1]
    end
  end
end
return out
`

const SECONDS: Record<Grain, number> = { hour: 3600, day: 86_400 }

export const USAGE_KEY_PREFIX = 'almanac:usage:'

/** The hash tag of a row of `period` (Unix seconds): on a cluster its UTC day, so one day's keys share a slot; elsewhere none. */
export const usageDayTag = (cluster: boolean, period: number) => (cluster ? String(periodOf('day', period)) : '')

/** The prefix of the keys of `day` (`usageDayTag`): the day as their hash tag, or the plain prefix when there is no tag. */
export const usageDayPrefix = (keyPrefix: string, day: string) => (day ? `{${keyPrefix}${day}}:` : keyPrefix)

export interface RedisUsageOptions extends RedisOptions {
  keyPrefix?: string
  /** Days daily rows are kept (the key's TTL). */
  retentionDays?: number
  now?: () => number
}

export function redisUsageStore(url: string, options: RedisUsageOptions = {}): UsageStore {
  const { keyPrefix: p = USAGE_KEY_PREFIX, retentionDays = 400, now = Date.now, ...connection } = options
  const redis = redisConnection(url, { role: 'usage ledger', ...connection })
  const write = redis.script(WRITE)
  const read = redis.script(READ)
  const prefixOf = (day: string) => usageDayPrefix(p, day)
  const dayOf = (seconds: number) => usageDayTag(redis.cluster, seconds)
  return {
    async write(batch) {
      const parts = Map.groupBy(batch.rows, (r) => dayOf(r.period))
      const applied = [...parts].map(([day, rows]) => {
        const prefix = prefixOf(day)
        const args = [prefix, batch.id, String(HOURLY_DAYS * 86_400), String(retentionDays * 86_400)]
        for (const r of rows)
          args.push(
            String(periodOf('hour', r.period)),
            String(periodOf('day', r.period)),
            r.caller,
            `${r.customer}\t${r.domain}\t${r.route}\t${r.outcome}`,
            [r.requests, r.credits, r.refunded, r.bytes, ...r.latency].join(','),
          )
        // The batch's claim names the script's slot for a cluster.
        return write([`${prefix}batch:${batch.id}`], args)
      })
      await Promise.all(applied)
    },
    async read(q) {
      const until = q.until ?? Math.floor(now() / 1000) + 1
      const periods: string[] = []
      for (let t = periodOf(q.grain, q.since); t < until; t += SECONDS[q.grain]) if (t >= q.since) periods.push(String(t))
      const parts = Map.groupBy(periods, (t) => dayOf(Number(t)))
      const replies = await Promise.all(
        [...parts].map(([day, ps]) => {
          const prefix = prefixOf(day)
          return read([`${prefix}${q.grain}:${ps[0]}`], [prefix, q.grain, q.caller ?? '', ...ps]) as Promise<string[]>
        }),
      )
      const flat = replies.flat()
      const rows: UsageRow[] = []
      for (let i = 0; i + 3 < flat.length; i += 4) {
        const [customer = '', domain = '', route = '', outcome = ''] = String(flat[i + 2]).split('\t')
        if (q.customer !== undefined && customer !== q.customer) continue
        const n = String(flat[i + 3])
          .split(',')
          .map(Number)
        rows.push({
          period: Number(flat[i]),
          caller: String(flat[i + 1]),
          customer,
          domain,
          route,
          outcome,
          requests: n[0] ?? 0,
          credits: n[1] ?? 0,
          refunded: n[2] ?? 0,
          bytes: n[3] ?? 0,
          latency: Array.from({ length: LATENCY_BUCKETS }, (_, j) => n[4 + j] ?? 0),
        })
      }
      return sortRows(rows)
    },
    // Keys expire with their grain's retention: nothing to prune.
    prune: () => {},
    check: () => redis.check(),
    close: () => redis.close(),
  }
}
