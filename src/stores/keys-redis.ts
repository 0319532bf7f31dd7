/**
 * API keys, customers and the audit log in Redis (ALMANAC_KEY_STORE=redis://…), shared by every instance
 * pointing at the same server. Layout under the prefix:
 * - `hash:<sha256 hex>`: a key's record (id, name, plan, created, revoked, scopes, expires, customer,
 *   rotated) under its current secret's hash; under a secret a rotation replaced, only `id` and `retires`;
 * - `id:<id>` → the current secret's hash, `name:<name>` → the active key of that name, `ids` (sorted by
 *   creation) every key, `retired:<id>` the replaced secrets' hashes of one key;
 * - `customer:<id>`: a customer (id, name, plan, created), `customer-name:<name>` → its id, `customers`
 *   (sorted by creation) every customer;
 * - `audit`: the audit log, a list of JSON entries, newest first, capped at AUDIT_CAP.
 * On a Redis Cluster the prefix is a hash tag (`{almanac:keys:}hash:…`), so the whole store is one slot and
 * every script may touch any of its keys: the store is written by operators (a few changes a minute at
 * most) and read about once per active key per KEY_CACHE_LIVE_MS per instance, so one master serves it
 * easily. A single node and a Sentinel group keep the untagged names, as before clusters were supported:
 * nothing to migrate.
 * Every change is one Lua script that also appends its audit entry, so two CLIs racing on one name cannot
 * both win and no change goes unrecorded. A lookup is one script too (the key, its customer, the secret's
 * grace): one round trip.
 *
 * Each instance keeps lookups in a small bounded cache. Every script that changes what a lookup answers
 * also PUBLISHes, in the same script, on `<prefix>changed`: the hex hashes of the key's secrets (current and
 * replaced), or `*` after a customer's change (it counts for all its keys). PUBLISH names no key, so a
 * cluster carries it to every node. Each store subscribes at its first lookup and drops what a message
 * names. While that subscription is live a match is kept KEY_CACHE_LIVE_MS; whenever it goes down or comes
 * back the whole cache goes (messages may have been missed), and lookups begun while it is down are kept
 * KEY_CACHE_MS. So a revoke, an update, a rotation or a customer's new plan is honoured by every instance as
 * soon as the message arrives, and within KEY_CACHE_MS plus one Redis round trip when the channel is down
 * (the documented bound: under a second). A lookup whose key is announced while it is in flight is not kept.
 * No match is kept past its secret's end of grace or its key's expiry. Unknown keys are never cached, so a
 * key just created, or a new secret, works at once everywhere. Under fail-open (`staleIfErrorMs`), while Redis
 * cannot be read (a failover), a key looked up in the last minute is answered as last seen, unless a message
 * named it since: a change made during the outage is honoured once Redis can be read again.
 */
import { GenerationalCache } from '../lib/cache.ts'
import {
  alreadyRevoked,
  AUDITED_FIELDS,
  auditQuery,
  checkActor,
  checkGrace,
  customerNameTaken,
  hex,
  idClash,
  KeyStoreError,
  nameTaken,
  newSecret,
  prepareChanges,
  prepareCustomer,
  prepareCustomerChanges,
  prepareKey,
  revokedUnchangeable,
  UNKNOWN_ACTOR,
  unknownCustomer,
  unknownKey,
  type AuditEntry,
  type Customer,
  type KeyMatch,
  type KeyStore,
  type StoredKey,
} from './keys.ts'
import { redisConnection, type RedisOptions } from './redis.ts'
import type { RedisConnection, Subscription } from './redis-connection.ts'

/** The key store's default prefix. */
export const KEY_STORE_PREFIX = 'almanac:keys:'
/** The prefix every key of the store starts with on a topology: on a cluster one hash tag, so one slot. */
export const keyStorePrefix = (cluster: boolean, prefix = KEY_STORE_PREFIX) => (cluster ? `{${prefix}}` : prefix)

/** How long one instance may answer from its own copy of a key's record while it may have missed a change. */
export const KEY_CACHE_MS = 500
/**
 * How long it may while its subscription to the change channel is live: every change that makes a copy wrong
 * is announced there and drops it at once, so this only bounds what a lost message could cost (none is lost
 * while the subscription stays live) and lets a key in steady use cost no Redis command at all.
 */
export const KEY_CACHE_LIVE_MS = 60_000
/** The channel, after the prefix, the write scripts announce changes on: hash hexes separated by spaces, or `*` for every key. */
const CHANGES_CHANNEL = 'changed'
/** Audit entries kept; the oldest go first. */
export const AUDIT_CAP = 100_000

/**
 * What every write script starts with. ARGV[1] the prefix, ARGV[2] the time (ISO 8601), ARGV[3] the actor.
 * `audit` compares the fields `changedFields` (keys.ts) compares, scopes as lists, and writes nothing when
 * none changed.
 */
const PRELUDE = `
local p, now, actor = ARGV[1], ARGV[2], ARGV[3]
local function fields(flat)
  local m = {}
  for i = 1, #flat, 2 do m[flat[i]] = flat[i + 1] end
  return m
end
local function find_key(idOrName)
  local id = idOrName
  local hex = redis.call('GET', p .. 'id:' .. id)
  if not hex then
    id = redis.call('GET', p .. 'name:' .. idOrName)
    if not id then return nil end
    hex = redis.call('GET', p .. 'id:' .. id)
    if not hex then return nil end
  end
  return id, hex
end
local function find_customer(idOrName)
  if redis.call('EXISTS', p .. 'customer:' .. idOrName) == 1 then return idOrName end
  return redis.call('GET', p .. 'customer-name:' .. idOrName)
end
local function audit_value(f, v)
  if v == nil then return cjson.null end
  if f ~= 'scopes' then return v end
  local list = {}
  for s in string.gmatch(v, '%S+') do table.insert(list, s) end
  return list
end
local function audit(action, target, before, after, extra)
  local changes, any = extra or {}, extra ~= nil
  for _, f in ipairs({${AUDITED_FIELDS.map((f) => `'${f}'`).join(', ')}}) do
    if before[f] ~= after[f] then
      changes[f] = {from = audit_value(f, before[f]), to = audit_value(f, after[f])}
      any = true
    end
  end
  if not any then return false end
  redis.call('LPUSH', p .. 'audit', cjson.encode({at = now, actor = actor, action = action, target = target, changes = changes}))
  redis.call('LTRIM', p .. 'audit', 0, ${AUDIT_CAP - 1})
  return true
end
-- Tells every instance which cached lookups a change made wrong (CHANGES_CHANNEL), and the caller too: its answer's third element.
local function announce(what)
  redis.call('PUBLISH', p .. '${CHANGES_CHANNEL}', what)
  return what
end
-- A key's secrets: its current one and every one a rotation replaced (they lead to the same record).
local function secrets_of(id, hex)
  local all = redis.call('SMEMBERS', p .. 'retired:' .. id)
  table.insert(all, hex)
  return table.concat(all, ' ')
end
`

/** ARGV 4 hash hex, 5 id, 6 creation ms, 7 customer id or name ('' none), then the record's fields and values. */
const CREATE = `${PRELUDE}
local h = p .. 'hash:' .. ARGV[4]
local id = ARGV[5]
local rec = fields({unpack(ARGV, 8)})
if redis.call('EXISTS', p .. 'name:' .. rec.name) == 1 then return {0} end
if redis.call('EXISTS', h) == 1 or redis.call('EXISTS', p .. 'id:' .. id) == 1 then return {-1} end
if ARGV[7] ~= '' then
  rec.customer = find_customer(ARGV[7])
  if not rec.customer then return {3} end
end
redis.call('HSET', h, unpack(ARGV, 8))
if rec.customer then redis.call('HSET', h, 'customer', rec.customer) end
redis.call('SET', p .. 'id:' .. id, ARGV[4])
redis.call('SET', p .. 'name:' .. rec.name, id)
redis.call('ZADD', p .. 'ids', ARGV[6], id)
audit('key.create', id, {}, rec)
return {1, redis.call('HGETALL', h)}
`

/**
 * ARGV 4 id or name, 5 the changes as JSON (null clears a field). {0} unknown, {2, fields} revoked, {3} no
 * such customer, {4} name taken.
 */
const UPDATE = `${PRELUDE}
local id, hex = find_key(ARGV[4])
if not id then return {0} end
local h = p .. 'hash:' .. hex
local before = fields(redis.call('HGETALL', h))
if before.revoked then return {2, redis.call('HGETALL', h)} end
local want = cjson.decode(ARGV[5])
if want.customer ~= nil and want.customer ~= cjson.null then
  want.customer = find_customer(want.customer)
  if not want.customer then return {3} end
end
if want.name ~= nil and want.name ~= before.name then
  if redis.call('EXISTS', p .. 'name:' .. want.name) == 1 then return {4} end
  if redis.call('GET', p .. 'name:' .. before.name) == id then redis.call('DEL', p .. 'name:' .. before.name) end
  redis.call('SET', p .. 'name:' .. want.name, id)
end
for _, f in ipairs({'name', 'plan', 'scopes', 'expires', 'customer'}) do
  if want[f] == cjson.null then redis.call('HDEL', h, f) elseif want[f] ~= nil then redis.call('HSET', h, f, want[f]) end
end
local changed = audit('key.update', id, before, fields(redis.call('HGETALL', h)))
return {1, redis.call('HGETALL', h), changed and announce(secrets_of(id, hex)) or ''}
`

/**
 * ARGV 4 id or name, 5 the new secret's hash hex, 6 the old secret's end of grace. The record moves to the
 * new hash; the old hash keeps only id and retires; older replaced secrets' grace is cut to the same end.
 */
const ROTATE = `${PRELUDE}
local id, hex = find_key(ARGV[4])
if not id then return {0} end
local h = p .. 'hash:' .. hex
local before = fields(redis.call('HGETALL', h))
if before.revoked then return {2, redis.call('HGETALL', h)} end
local fresh = p .. 'hash:' .. ARGV[5]
if redis.call('EXISTS', fresh) == 1 then return {-1} end
local retired = p .. 'retired:' .. id
local secrets = secrets_of(id, hex)
for _, old in ipairs(redis.call('SMEMBERS', retired)) do
  local ends = redis.call('HGET', p .. 'hash:' .. old, 'retires')
  if ends and ends > ARGV[6] then redis.call('HSET', p .. 'hash:' .. old, 'retires', ARGV[6]) end
end
redis.call('RENAME', h, fresh)
redis.call('HSET', fresh, 'rotated', now)
redis.call('HSET', h, 'id', id, 'retires', ARGV[6])
redis.call('SADD', retired, hex)
redis.call('SET', p .. 'id:' .. id, ARGV[5])
audit('key.rotate', id, before, fields(redis.call('HGETALL', fresh)), {grace_until = {from = cjson.null, to = ARGV[6]}})
return {1, redis.call('HGETALL', fresh), announce(secrets)}
`

/** ARGV 4 id or name. {0} unknown, {2, fields} already revoked, {1, fields} revoked now. */
const REVOKE = `${PRELUDE}
local id, hex = find_key(ARGV[4])
if not id then return {0} end
local h = p .. 'hash:' .. hex
local before = fields(redis.call('HGETALL', h))
if before.revoked then return {2, redis.call('HGETALL', h)} end
redis.call('HSET', h, 'revoked', now)
if redis.call('GET', p .. 'name:' .. before.name) == id then redis.call('DEL', p .. 'name:' .. before.name) end
audit('key.revoke', id, before, fields(redis.call('HGETALL', h)))
return {1, redis.call('HGETALL', h), announce(secrets_of(id, hex))}
`

/** ARGV 4 id, 5 name, 6 plan ('' none), 7 creation ms. {0} name taken. */
const CREATE_CUSTOMER = `${PRELUDE}
if redis.call('EXISTS', p .. 'customer-name:' .. ARGV[5]) == 1 then return {0} end
local c = p .. 'customer:' .. ARGV[4]
if redis.call('EXISTS', c) == 1 then return {-1} end
redis.call('HSET', c, 'id', ARGV[4], 'name', ARGV[5], 'created', now)
if ARGV[6] ~= '' then redis.call('HSET', c, 'plan', ARGV[6]) end
redis.call('SET', p .. 'customer-name:' .. ARGV[5], ARGV[4])
redis.call('ZADD', p .. 'customers', ARGV[7], ARGV[4])
audit('customer.create', ARGV[4], {}, fields(redis.call('HGETALL', c)))
return {1, redis.call('HGETALL', c)}
`

/** ARGV 4 id or name, 5 the changes as JSON. {0} unknown, {4} name taken. */
const UPDATE_CUSTOMER = `${PRELUDE}
local id = find_customer(ARGV[4])
if not id then return {0} end
local c = p .. 'customer:' .. id
local before = fields(redis.call('HGETALL', c))
local want = cjson.decode(ARGV[5])
if want.name ~= nil and want.name ~= before.name then
  if redis.call('EXISTS', p .. 'customer-name:' .. want.name) == 1 then return {4} end
  redis.call('DEL', p .. 'customer-name:' .. before.name)
  redis.call('SET', p .. 'customer-name:' .. want.name, id)
  redis.call('HSET', c, 'name', want.name)
end
if want.plan == cjson.null then redis.call('HDEL', c, 'plan') elseif want.plan ~= nil then redis.call('HSET', c, 'plan', want.plan) end
-- Every key of the customer answers with its name and plan: all of them, so every cached lookup goes.
local changed = audit('customer.update', id, before, fields(redis.call('HGETALL', c)))
return {1, redis.call('HGETALL', c), changed and announce('*') or ''}
`

/**
 * ARGV prefix, hash hex. {} unknown, else {the key's fields, its customer's fields (or none), the end of
 * the secret's grace ('' for the current secret)}: a request's one round trip.
 */
const LOOKUP = `
local p = ARGV[1]
local h = p .. 'hash:' .. ARGV[2]
local retires = redis.call('HGET', h, 'retires')
if retires then
  local hex = redis.call('GET', p .. 'id:' .. redis.call('HGET', h, 'id'))
  if not hex then return {} end
  h = p .. 'hash:' .. hex
end
local rec = redis.call('HGETALL', h)
if #rec == 0 then return {} end
local customer = redis.call('HGET', h, 'customer')
return {rec, customer and redis.call('HGETALL', p .. 'customer:' .. customer) or {}, retires or ''}
`

/** ARGV prefix, then `ids` or `customers`. Every record of the set, oldest first. */
const LIST = `
local out = {}
for _, id in ipairs(redis.call('ZRANGE', ARGV[1] .. ARGV[2], 0, -1)) do
  if ARGV[2] == 'customers' then
    table.insert(out, redis.call('HGETALL', ARGV[1] .. 'customer:' .. id))
  else
    local hex = redis.call('GET', ARGV[1] .. 'id:' .. id)
    if hex then table.insert(out, redis.call('HGETALL', ARGV[1] .. 'hash:' .. hex)) end
  end
end
return out
`

/** HGETALL answers a flat [field, value, …] inside Lua and an object (RESP3 map) outside; both become a Map. */
function fieldsOf(reply: unknown): Map<string, string> {
  const fields = new Map<string, string>()
  if (Array.isArray(reply)) for (let i = 0; i + 1 < reply.length; i += 2) fields.set(String(reply[i]), String(reply[i + 1]))
  else if (reply && typeof reply === 'object') for (const [k, v] of Object.entries(reply)) fields.set(k, String(v))
  return fields
}

function toRecord(reply: unknown): StoredKey | null {
  const fields = fieldsOf(reply)
  const id = fields.get('id')
  if (!id) return null
  const scopes = fields.get('scopes')
  return {
    id,
    name: fields.get('name') ?? '',
    plan: fields.get('plan') ?? null,
    created: fields.get('created') ?? '',
    revoked: fields.get('revoked') ?? null,
    scopes: scopes === undefined ? null : scopes.split(' '),
    expires: fields.get('expires') ?? null,
    customer: fields.get('customer') ?? null,
    rotated: fields.get('rotated') ?? null,
  }
}

function toCustomer(reply: unknown): Customer | null {
  const fields = fieldsOf(reply)
  const id = fields.get('id')
  if (!id) return null
  return { id, name: fields.get('name') ?? '', plan: fields.get('plan') ?? null, created: fields.get('created') ?? '' }
}

function toMatch(reply: unknown): KeyMatch | null {
  if (!Array.isArray(reply) || reply.length < 3) return null
  const record = toRecord(reply[0])
  return record && { record, customer: toCustomer(reply[1]), retires: String(reply[2]) || null }
}

/** A write script's answer: its state, for 1 and 2 the record's fields, and what it announced on the change channel ('' nothing). */
const answer = (reply: unknown) => {
  const [state, fields, announced] = reply as [number, unknown, string | undefined]
  return { state: Number(state), fields, announced: announced ? String(announced) : '' }
}

/** When a cached match must be asked again at the latest: `keepMs` after it was asked, never past its grace or its key's expiry. */
function keptUntil(askedAt: number, keepMs: number, match: KeyMatch): number {
  let until = askedAt + keepMs
  for (const instant of [match.retires, match.record.expires]) if (instant !== null) until = Math.min(until, Date.parse(instant))
  return until
}

/** A lookup in flight, and how long its answer may be kept: cut to KEY_CACHE_MS, or to 0, by what is heard meanwhile. */
interface Reading {
  answer: Promise<KeyMatch | null>
  keepMs: number
}

/**
 * The lookups of one store by hash hex (`ask` reads Redis): kept in a bounded cache, and dropped by what the
 * change channel announces. The channel is subscribed at the first lookup: a store opened only to write (a
 * CLI, the console) needs none.
 */
function cachedLookups(
  redis: RedisConnection,
  channel: string,
  ask: (h: string) => Promise<KeyMatch | null>,
  { cacheEntries, now, staleIfErrorMs }: { cacheEntries: number; now: () => number; staleIfErrorMs: number },
) {
  /** Known keys by hash hex, with when they were asked and when they must be asked again. */
  const cache = new GenerationalCache<string, { askedAt: number; era: number; until: number; match: KeyMatch }>(cacheEntries)
  /**
   * Counts the channel's ups and downs: a copy asked in an earlier era may have missed a change, so it is never
   * answered as fresh, only while Redis cannot be read.
   */
  let era = 0
  /** Reads in flight: concurrent requests with one key share one lookup. */
  const reading = new Map<string, Reading>()
  let subscription: Subscription | null = null
  /** Drops what a change announced (hash hexes, or `*`) made wrong: the cached copies, and the answers of lookups in flight. */
  const forget = (announced: string) => {
    if (announced === '*') {
      cache.clear()
      for (const r of reading.values()) r.keepMs = 0
      reading.clear()
      return
    }
    for (const h of announced.split(' ')) {
      cache.delete(h)
      const r = reading.get(h)
      if (r) r.keepMs = 0
      // Requests from now on ask again rather than share an answer that may predate the change.
      reading.delete(h)
    }
  }
  const listen = () =>
    redis.subscribe(channel, {
      message: forget,
      // Either way messages may have been missed: nothing kept so far can be trusted, nothing in flight kept long.
      live() {
        era++
        for (const r of reading.values()) r.keepMs = Math.min(r.keepMs, KEY_CACHE_MS)
      },
    })
  const find = (h: string): KeyMatch | null | Promise<KeyMatch | null> => {
    const hit = cache.get(h)
    if (hit && now() < hit.until && hit.era === era) return hit.match
    const shared = reading.get(h)
    if (shared) return shared.answer
    subscription ??= listen()
    const askedAt = now()
    const askedIn = era
    const lookup: Reading = { answer: ask(h), keepMs: subscription?.live ? KEY_CACHE_LIVE_MS : KEY_CACHE_MS }
    // Unknown keys are not kept: a new key works at once everywhere.
    lookup.answer = lookup.answer
      .then(
        (match) => {
          const until = match && keptUntil(askedAt, lookup.keepMs, match)
          if (match && until! > now()) cache.set(h, { askedAt, era: askedIn, until: until!, match })
          return match
        },
        (e) => {
          // Redis cannot be read: the last copy, if recent enough and still within its grace and expiry.
          const last = cache.get(h)
          if (last && now() - last.askedAt < staleIfErrorMs && now() < keptUntil(last.askedAt, Infinity, last.match)) return last.match
          throw e
        },
      )
      .finally(() => reading.get(h) === lookup && reading.delete(h))
    reading.set(h, lookup)
    return lookup.answer
  }
  return {
    find,
    forget,
    get live() {
      return subscription?.live === true
    },
    close: () => subscription?.close(),
  }
}

export interface RedisKeyOptions extends RedisOptions {
  keyPrefix?: string
  /** Lookups kept per instance (two generations); at most KEY_CACHE_LIVE_MS each, or KEY_CACHE_MS. */
  cacheEntries?: number
  /** The clock of the lookup cache, of creation, revocation and rotation times and of the audit log. */
  now?: () => number
  /**
   * While Redis cannot be read, a key looked up this recently is answered as it was last seen (0: never; the
   * server passes KEY_CACHE_LIVE_MS under ALMANAC_QUOTA_FAIL_OPEN, which chooses serving over exactness).
   */
  staleIfErrorMs?: number
}

export interface RedisKeyStore extends KeyStore {
  /** True while the change channel is subscribed and live: lookups begun now may be kept KEY_CACHE_LIVE_MS. */
  readonly cacheLive: boolean
}

export function redisKeyStore(url: string, options: RedisKeyOptions = {}): RedisKeyStore {
  const { keyPrefix = KEY_STORE_PREFIX, cacheEntries = 10_000, now = Date.now, staleIfErrorMs = 0 } = options
  const redis = redisConnection(url, { role: 'key store', ...options })
  // On a cluster the whole store is one hash tag, so one slot: every script below may touch any of its keys.
  const p = keyStorePrefix(redis.cluster, keyPrefix)
  /** The key every script names, for a cluster to route it to the store's slot (the scripts build the rest from the prefix). */
  const slotKey = [`${p}ids`]
  const scriptOf = (source: string) => {
    const run = redis.script(source)
    return (args: string[]) => run(slotKey, args)
  }
  const scripts = {
    create: scriptOf(CREATE),
    update: scriptOf(UPDATE),
    rotate: scriptOf(ROTATE),
    revoke: scriptOf(REVOKE),
    createCustomer: scriptOf(CREATE_CUSTOMER),
    updateCustomer: scriptOf(UPDATE_CUSTOMER),
    lookup: scriptOf(LOOKUP),
    list: scriptOf(LIST),
  }
  const lookups = cachedLookups(redis, `${p}${CHANGES_CHANNEL}`, (h) => scripts.lookup([p, h]).then(toMatch), {
    cacheEntries,
    now,
    staleIfErrorMs,
  })
  /** A write script run with the prefix, the time and the actor first; what it announced is forgotten here at once. */
  const write = async (script: keyof typeof scripts, actor: string, ...args: string[]) => {
    const result = answer(await scripts[script]([p, new Date(now()).toISOString(), checkActor(actor), ...args]))
    if (result.announced) lookups.forget(result.announced)
    return result
  }

  const keyed = (state: number, fields: unknown, idOrName: string) => {
    const record = toRecord(fields)
    if (state === 0 || (state === 2 && !record)) throw unknownKey(idOrName)
    if (state === 2) throw revokedUnchangeable(record!)
    if (state === -1 || !record) throw idClash()
    return record
  }

  return {
    async create(input, actor = UNKNOWN_ACTOR) {
      const { key, hash, record, customerRef } = prepareKey(input, now())
      const fields = ['id', record.id, 'name', record.name, 'created', record.created]
      if (record.plan !== null) fields.push('plan', record.plan)
      if (record.scopes) fields.push('scopes', record.scopes.join(' '))
      if (record.expires) fields.push('expires', record.expires)
      const { state, fields: made } = await write(
        'create',
        actor,
        hex(hash),
        record.id,
        String(Date.parse(record.created)),
        customerRef ?? '',
        ...fields,
      )
      if (state === 0) throw nameTaken(record.name)
      if (state === 3) throw unknownCustomer(customerRef!)
      return { key, record: keyed(state, made, record.id) }
    },
    async list() {
      const rows = (await scripts.list([p, 'ids'])) as unknown[]
      return rows.map(toRecord).filter((r): r is StoredKey => r !== null)
    },
    async update(idOrName, changes, actor) {
      const wanted = prepareChanges(changes)
      const json = JSON.stringify({ ...wanted, ...(wanted.scopes !== undefined ? { scopes: wanted.scopes?.join(' ') ?? null } : {}) })
      const { state, fields } = await write('update', actor, idOrName, json)
      if (state === 3) throw unknownCustomer(wanted.customer!)
      if (state === 4) throw nameTaken(wanted.name!)
      return keyed(state, fields, idOrName)
    },
    async rotate(idOrName, { graceSeconds }, actor) {
      const grace = checkGrace(graceSeconds)
      const { key, hash } = newSecret()
      const previousUntil = new Date(now() + grace * 1000).toISOString()
      const { state, fields } = await write('rotate', actor, idOrName, hex(hash), previousUntil)
      return { key, record: keyed(state, fields, idOrName), previousUntil }
    },
    async revoke(idOrName, actor = UNKNOWN_ACTOR) {
      const { state, fields } = await write('revoke', actor, idOrName)
      const record = toRecord(fields)
      if (state === 2 && record) throw alreadyRevoked(record)
      return keyed(state, fields, idOrName)
    },
    findByHash: (digest) => lookups.find(hex(digest)),
    async createCustomer(input, actor) {
      const made = prepareCustomer(input, now())
      const { state, fields } = await write('createCustomer', actor, made.id, made.name, made.plan ?? '', String(Date.parse(made.created)))
      if (state === 0) throw customerNameTaken(made.name)
      const customer = toCustomer(fields)
      if (state !== 1 || !customer) throw idClash()
      return customer
    },
    async listCustomers() {
      const rows = (await scripts.list([p, 'customers'])) as unknown[]
      return rows.map(toCustomer).filter((c): c is Customer => c !== null)
    },
    async updateCustomer(idOrName, changes, actor) {
      const wanted = prepareCustomerChanges(changes)
      const { state, fields } = await write('updateCustomer', actor, idOrName, JSON.stringify(wanted))
      if (state === 0) throw unknownCustomer(idOrName)
      if (state === 4) throw customerNameTaken(wanted.name!)
      const customer = toCustomer(fields)
      if (!customer) throw new KeyStoreError(`customer ${JSON.stringify(idOrName)} could not be read back`)
      return customer
    },
    async audit(query) {
      const { limit, since } = auditQuery(query)
      const rows = (await redis.command('LRANGE', [`${p}audit`, '0', String(limit - 1)])) as string[]
      const entries = rows.map((row) => JSON.parse(row) as AuditEntry)
      return since === null ? entries : entries.filter((e) => e.at >= since)
    },
    get cacheLive() {
      return lookups.live
    },
    close() {
      lookups.close()
      redis.close()
    },
  }
}
