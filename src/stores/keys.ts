/**
 * API keys issued by `almanac keys create`, kept in `<stateDir>/keys.sqlite` (this file) or in Redis
 * (`keys-redis.ts`, shared by every instance); `createKeyStore` (index.ts) picks one from
 * ALMANAC_KEY_STORE. Only the SHA-256 of each key is stored: a key is 32 random bytes (256 bits), so no
 * dictionary or brute force can invert its hash and a slow password hash (bcrypt, argon2) would add
 * nothing but latency to every request. Anyone who reads the database learns names and plans, never a
 * usable key.
 */
import type { Database } from 'bun:sqlite'
import type { Answer } from './quota.ts'
import { openStateDatabase } from './sqlite.ts'

export const KEY_PREFIX = 'alm_'
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** Fixed-width base62 of random bytes: no `-`/`_`, so a double click selects the whole key. */
export function randomBase62(bytes: number): string {
  const width = Math.ceil((bytes * 8) / Math.log2(62))
  let n = 0n
  for (const b of crypto.getRandomValues(new Uint8Array(bytes))) n = (n << 8n) | BigInt(b)
  let out = ''
  for (let i = 0; i < width; i++, n /= 62n) out = BASE62[Number(n % 62n)] + out
  return out
}

/** The stored form of a key. */
export const keyHash = (key: string): Uint8Array => Bun.SHA256.hash(key) as Uint8Array

/** A key hash as hex (the Redis key store finds keys by it, SQLite by the bytes; configured keys' subjects are named by it). */
export const hex = (digest: Uint8Array) => Buffer.from(digest.buffer, digest.byteOffset, digest.byteLength).toString('hex')

export interface StoredKey {
  id: string
  name: string
  /** null: the server's default plan at the time of each request. */
  plan: string | null
  /** ISO 8601 UTC. */
  created: string
  revoked: string | null
  /** Domain names the key may call; null: every domain. */
  scopes: string[] | null
  /** ISO 8601 UTC after which the key is refused; null: never. */
  expires: string | null
}

/** What `create` is given; the id, the key and the creation time are made by the store. */
export interface NewKey {
  name: string
  plan: string | null
  scopes?: string[] | null
  expires?: string | null
}

export class KeyStoreError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'KeyStoreError'
  }
}

/** SQLite answers at once, Redis with a promise; the request path takes either. */
export interface KeyStore {
  /** Issues a new key; the plaintext is returned once and never stored. */
  create(key: NewKey): Answer<{ key: string; record: StoredKey }>
  list(): Answer<StoredKey[]>
  /** Revokes by id, or by the name of an active key. */
  revoke(idOrName: string): Answer<StoredKey>
  findByHash(hash: Uint8Array): Answer<StoredKey | null>
  close(): void
}

/** A scope is a domain name: lower-case letters, digits and hyphens. */
const SCOPE_PATTERN = /^[a-z][a-z0-9-]{0,39}$/

/** Why a scope list is unacceptable, or null; an empty list would make a key that can call nothing. */
export function validateScopes(scopes: string[]): string | null {
  if (!scopes.length) return 'no scopes given; leave --scopes out for a key that may call every domain'
  if (scopes.length > 64) return 'more than 64 scopes'
  const bad = scopes.find((s) => !SCOPE_PATTERN.test(s))
  return bad === undefined ? null : `${JSON.stringify(bad)} is not a domain name`
}

/** New key fields made once for every store: the key, its id, and the checked name, scopes and expiry. */
export function prepareKey(input: NewKey) {
  const bad = validateKeyName(input.name)
  if (bad) throw new KeyStoreError(`--name ${JSON.stringify(input.name)}: ${bad}`)
  const scopes = input.scopes ?? null
  const badScopes = scopes && validateScopes(scopes)
  if (badScopes) throw new KeyStoreError(`--scopes: ${badScopes}`)
  const expiresMs = input.expires == null ? null : Date.parse(input.expires)
  if (expiresMs !== null && Number.isNaN(expiresMs)) throw new KeyStoreError(`--expires ${JSON.stringify(input.expires)}: not a date`)
  const expires = expiresMs === null ? null : new Date(expiresMs).toISOString()
  const key = KEY_PREFIX + randomBase62(32)
  return {
    key,
    hash: keyHash(key),
    record: {
      id: 'key_' + randomBase62(8),
      name: input.name,
      plan: input.plan,
      created: new Date().toISOString(),
      revoked: null,
      scopes: scopes ? [...new Set(scopes)] : null,
      expires,
    } satisfies StoredKey,
  }
}

const SCHEMA = [
  `CREATE TABLE api_keys (
     id TEXT PRIMARY KEY,
     hash BLOB NOT NULL UNIQUE,
     name TEXT NOT NULL,
     plan TEXT,
     created_at TEXT NOT NULL,
     revoked_at TEXT
   ) STRICT;
   CREATE UNIQUE INDEX api_keys_active_name ON api_keys(name) WHERE revoked_at IS NULL;`,
  // Scopes as space-separated domain names (NULL: every domain); expiry as ISO 8601 UTC.
  `ALTER TABLE api_keys ADD COLUMN scopes TEXT;
   ALTER TABLE api_keys ADD COLUMN expires_at TEXT;`,
]

const ID_PATTERN = /^key_[0-9A-Za-z]{11}$/

export function validateKeyName(name: string): string | null {
  if (!name.trim()) return 'the name is empty'
  if (name.length > 100) return 'the name is longer than 100 characters'
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'the name contains a control character'
  if (ID_PATTERN.test(name)) return 'the name looks like a key id (key_…); choose another'
  return null
}

type Row = {
  id: string
  name: string
  plan: string | null
  created_at: string
  revoked_at: string | null
  scopes: string | null
  expires_at: string | null
}
const record = (r: Row): StoredKey => ({
  id: r.id,
  name: r.name,
  plan: r.plan,
  created: r.created_at,
  revoked: r.revoked_at,
  scopes: r.scopes === null ? null : r.scopes.split(' '),
  expires: r.expires_at,
})
const COLUMNS = 'id, name, plan, created_at, revoked_at, scopes, expires_at'

export const nameTaken = (name: string) =>
  new KeyStoreError(`an active key is already named ${JSON.stringify(name)}; revoke it first or choose another name`)

/** The key database under the state dir. */
export function openKeyStore(stateDir: string): KeyStore {
  const db: Database = openStateDatabase(stateDir, 'keys.sqlite', SCHEMA)
  const byHash = db.query<Row, [Uint8Array]>(`SELECT ${COLUMNS} FROM api_keys WHERE hash = ?`)
  const byId = db.query<Row, [string]>(`SELECT ${COLUMNS} FROM api_keys WHERE id = ?`)
  const activeByName = db.query<Row, [string]>(`SELECT ${COLUMNS} FROM api_keys WHERE name = ? AND revoked_at IS NULL`)
  const all = db.query<Row, []>(`SELECT ${COLUMNS} FROM api_keys ORDER BY created_at, id`)
  const insert = db.query('INSERT INTO api_keys (id, hash, name, plan, created_at, scopes, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
  const revokeRow = db.query('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL')

  return {
    create(input) {
      const { key, hash, record } = prepareKey(input)
      return db
        .transaction(() => {
          if (activeByName.get(record.name)) throw nameTaken(record.name)
          insert.run(record.id, hash, record.name, record.plan, record.created, record.scopes?.join(' ') ?? null, record.expires)
          return { key, record }
        })
        .immediate()
    },
    list: () => all.all().map(record),
    revoke(idOrName) {
      return db
        .transaction(() => {
          const row = byId.get(idOrName) ?? activeByName.get(idOrName)
          if (!row) throw new KeyStoreError(`no key has the id or active name ${JSON.stringify(idOrName)}`)
          if (row.revoked_at) throw new KeyStoreError(`key ${row.id} (${row.name}) was already revoked at ${row.revoked_at}`)
          const at = new Date().toISOString()
          revokeRow.run(at, row.id)
          return record({ ...row, revoked_at: at })
        })
        .immediate()
    },
    findByHash(hash) {
      const row = byHash.get(hash)
      return row ? record(row) : null
    },
    close: () => db.close(),
  }
}
