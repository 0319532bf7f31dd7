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
 * most) and read once per key per KEY_CACHE_MS per instance, so one master serves it easily. A single node
 * and a Sentinel group keep the untagged names, as before clusters were supported: nothing to migrate.
 * Every change is one Lua script that also appends its audit entry, so two CLIs racing on one name cannot
 * both win and no change goes unrecorded. A lookup is one script too (the key, its customer, the secret's
 * grace): one round trip.
 *
 * Lookups are kept at most KEY_CACHE_MS in a small bounded cache per instance: a revoke, an update, a
 * rotation's end of grace or a customer's new plan is honoured by every instance within that time plus one
 * Redis round trip (the documented bound: under a second). Unknown keys are never cached, so a key just
 * created, or a new secret, works at once everywhere.
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

/** How long one instance may answer from its own copy of a key's record. */
export const KEY_CACHE_MS = 500
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
  if not any then return end
  redis.call('LPUSH', p .. 'audit', cjson.encode({at = now, actor = actor, action = action, target = target, changes = changes}))
  redis.call('LTRIM', p .. 'audit', 0, ${AUDIT_CAP - 1})
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
audit('key.update', id, before, fields(redis.call('HGETALL', h)))
return {1, redis.call('HGETALL', h)}
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
return {1, redis.call('HGETALL', fresh)}
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
return {1, redis.call('HGETALL', h)}
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
audit('customer.update', id, before, fields(redis.call('HGETALL', c)))
return {1, redis.call('HGETALL', c)}
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

/** A write script's answer: its state and, for 1 and 2, the record's fields. */
const answer = (reply: unknown) => {
  const [state, fields] = reply as [number, unknown]
  return { state: Number(state), fields }
}

export interface RedisKeyOptions extends RedisOptions {
  keyPrefix?: string
  /** Lookups kept per instance (two generations); at most KEY_CACHE_MS each. */
  cacheEntries?: number
  /** The clock of the lookup cache, of creation, revocation and rotation times and of the audit log. */
  now?: () => number
}

export function redisKeyStore(url: string, options: RedisKeyOptions = {}): KeyStore {
  const { keyPrefix = 'almanac:keys:', cacheEntries = 10_000, now = Date.now } = options
  const redis = redisConnection(url, { role: 'key store', ...options })
  // On a cluster the whole store is one hash tag, so one slot: every script below may touch any of its keys.
  const p = redis.cluster ? `{${keyPrefix}}` : keyPrefix
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
  /** A write script run with the prefix, the time and the actor first. */
  const write = async (script: keyof typeof scripts, actor: string, ...args: string[]) =>
    answer(await scripts[script]([p, new Date(now()).toISOString(), checkActor(actor), ...args]))
  /** Known keys by hash hex, with when they were read. */
  const cache = new GenerationalCache<string, { at: number; match: KeyMatch }>(cacheEntries)
  /** Reads in flight: concurrent requests with one key share one lookup. */
  const reading = new Map<string, Promise<KeyMatch | null>>()

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
    findByHash(digest) {
      const h = hex(digest)
      const hit = cache.get(h)
      if (hit && now() - hit.at < KEY_CACHE_MS) return hit.match
      let pending = reading.get(h)
      if (pending) return pending
      const at = now()
      // Unknown keys are not kept: a new key works at once everywhere.
      pending = scripts
        .lookup([p, h])
        .then(toMatch)
        .then((match) => {
          if (match) cache.set(h, { at, match })
          return match
        })
        .finally(() => reading.delete(h))
      reading.set(h, pending)
      return pending
    },
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
    close: () => redis.close(),
  }
}
