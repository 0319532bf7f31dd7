/**
 * API keys in Redis (ALMANAC_KEY_STORE=redis://…), shared by every instance pointing at the same server.
 * Per key a hash `<prefix>hash:<sha256 hex>` (id, name, plan, created, revoked, scopes, expires), found by
 * one HGETALL per lookup; `id:<id>` names the hash, `name:<name>` the active key of a name, `ids` orders
 * them all by creation. Create and revoke are Lua scripts, so two CLIs racing on one name cannot both win.
 *
 * Lookups are kept at most KEY_CACHE_MS in a small bounded cache per instance: a revoke is honoured by
 * every instance within that time plus one Redis round trip (the documented bound: under a second).
 * Unknown keys are never cached, so a key just created works at once everywhere.
 */
import { GenerationalCache } from '../lib/cache.ts'
import { hex, KeyStoreError, nameTaken, prepareKey, type KeyStore, type StoredKey } from './keys.ts'
import { redisConnection, type RedisOptions } from './redis.ts'

/** How long one instance may answer from its own copy of a key's record. */
export const KEY_CACHE_MS = 500

/** KEYS hash, id, name, ids; ARGV hash hex, id, creation ms, then the hash's fields and values. 0: name taken. */
const CREATE = `
if redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('EXISTS', KEYS[2]) == 1 then return -1 end
redis.call('HSET', KEYS[1], unpack(ARGV, 4))
redis.call('SET', KEYS[2], ARGV[1])
redis.call('SET', KEYS[3], ARGV[2])
redis.call('ZADD', KEYS[4], ARGV[3], ARGV[2])
return 1
`

/** ARGV prefix, id or name, time. Returns {0} unknown, {2, fields} already revoked, {1, fields} revoked now. */
const REVOKE = `
local p = ARGV[1]
local id = ARGV[2]
local hex = redis.call('GET', p .. 'id:' .. id)
if not hex then
  id = redis.call('GET', p .. 'name:' .. ARGV[2])
  if not id then return {0} end
  hex = redis.call('GET', p .. 'id:' .. id)
  if not hex then return {0} end
end
local h = p .. 'hash:' .. hex
if redis.call('HEXISTS', h, 'revoked') == 1 then return {2, redis.call('HGETALL', h)} end
redis.call('HSET', h, 'revoked', ARGV[3])
local name = redis.call('HGET', h, 'name')
if redis.call('GET', p .. 'name:' .. name) == id then redis.call('DEL', p .. 'name:' .. name) end
return {1, redis.call('HGETALL', h)}
`

/** ARGV prefix. Every key's fields, oldest first. */
const LIST = `
local out = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local hex = redis.call('GET', ARGV[1] .. 'id:' .. id)
  if hex then table.insert(out, redis.call('HGETALL', ARGV[1] .. 'hash:' .. hex)) end
end
return out
`

/** HGETALL answers a flat [field, value, …] inside Lua and an object (RESP3 map) outside; both become a record. */
function toRecord(reply: unknown): StoredKey | null {
  const fields = new Map<string, string>()
  if (Array.isArray(reply)) for (let i = 0; i + 1 < reply.length; i += 2) fields.set(String(reply[i]), String(reply[i + 1]))
  else if (reply && typeof reply === 'object') for (const [k, v] of Object.entries(reply)) fields.set(k, String(v))
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
  }
}

export interface RedisKeyOptions extends RedisOptions {
  keyPrefix?: string
  /** Lookups kept per instance (two generations); at most KEY_CACHE_MS each. */
  cacheEntries?: number
  now?: () => number
}

export function redisKeyStore(url: string, options: RedisKeyOptions = {}): KeyStore {
  const { keyPrefix: p = 'almanac:keys:', cacheEntries = 10_000, now = Date.now } = options
  const redis = redisConnection(url, { role: 'key store', ...options })
  const create = redis.script(CREATE)
  const revoke = redis.script(REVOKE)
  const list = redis.script(LIST)
  /** Known keys by hash hex, with when they were read. */
  const cache = new GenerationalCache<string, { at: number; record: StoredKey }>(cacheEntries)
  /** Reads in flight: concurrent requests with one key share one HGETALL. */
  const reading = new Map<string, Promise<StoredKey | null>>()

  return {
    async create(input) {
      const { key, hash, record } = prepareKey(input)
      const fields = ['id', record.id, 'name', record.name, 'created', record.created]
      if (record.plan !== null) fields.push('plan', record.plan)
      if (record.scopes) fields.push('scopes', record.scopes.join(' '))
      if (record.expires) fields.push('expires', record.expires)
      const done = await create(
        [`${p}hash:${hex(hash)}`, `${p}id:${record.id}`, `${p}name:${record.name}`, `${p}ids`],
        [hex(hash), record.id, String(Date.parse(record.created)), ...fields],
      )
      if (Number(done) === 0) throw nameTaken(record.name)
      if (Number(done) !== 1) throw new KeyStoreError('a key with the same id or hash exists already; run the command again')
      return { key, record }
    },
    async list() {
      const rows = (await list([`${p}ids`], [p])) as unknown[]
      return rows.map(toRecord).filter((r): r is StoredKey => r !== null)
    },
    async revoke(idOrName) {
      const [state, fields] = (await revoke([], [p, idOrName, new Date().toISOString()])) as [number, unknown]
      const record = toRecord(fields)
      if (Number(state) === 0 || !record) throw new KeyStoreError(`no key has the id or active name ${JSON.stringify(idOrName)}`)
      if (Number(state) === 2) throw new KeyStoreError(`key ${record.id} (${record.name}) was already revoked at ${record.revoked}`)
      return record
    },
    findByHash(digest) {
      const h = hex(digest)
      const hit = cache.get(h)
      if (hit && now() - hit.at < KEY_CACHE_MS) return hit.record
      let answer = reading.get(h)
      if (answer) return answer
      const at = now()
      // Unknown keys are not kept: a new key works at once everywhere.
      answer = redis
        .command('HGETALL', [`${p}hash:${h}`])
        .then(toRecord)
        .then((record) => {
          if (record) cache.set(h, { at, record })
          return record
        })
        .finally(() => reading.delete(h))
      reading.set(h, answer)
      return answer
    },
    close: () => redis.close(),
  }
}
