/**
 * API keys issued by `almanac keys create`, the customers (accounts) they may belong to, and the audit log
 * of every operator change, kept in `<stateDir>/keys.sqlite` (this file) or in Redis (`keys-redis.ts`,
 * shared by every instance); `createKeyStore` (index.ts) picks one from ALMANAC_KEY_STORE. Only the
 * SHA-256 of each key is stored: a key is 32 random bytes (256 bits), so no dictionary or brute force can
 * invert its hash and a slow password hash (bcrypt, argon2) would add nothing but latency to every
 * request. Anyone who reads the database learns names and plans, never a usable key.
 *
 * A key belonging to a customer spends the customer's credits on the customer's plan (its own plan is
 * kept but ignored while it has one): fifty keys of one account are one quota, not fifty. A rotation gives
 * a key a new secret and keeps the old one working until the end of a grace period; a rotation also cuts
 * every older secret's grace to its own, so `rotate --grace 0` leaves only the new secret working.
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

/** A new secret and its stored form. */
export const newSecret = () => {
  const key = KEY_PREFIX + randomBase62(32)
  return { key, hash: keyHash(key) }
}

export interface StoredKey {
  id: string
  name: string
  /** null: the server's default plan at the time of each request. Ignored while the key has a customer. */
  plan: string | null
  /** ISO 8601 UTC. */
  created: string
  revoked: string | null
  /** Domain names the key may call; null: every domain. */
  scopes: string[] | null
  /** ISO 8601 UTC after which the key is refused; null: never. */
  expires: string | null
  /** The customer (`cus_…`) whose credits and plan the key uses; null: its own. */
  customer: string | null
  /** ISO 8601 UTC of the last rotation; null: never rotated. */
  rotated: string | null
}

/** What `create` is given; the id, the key and the creation time are made by the store. */
export interface NewKey {
  name: string
  plan: string | null
  scopes?: string[] | null
  expires?: string | null
  /** A customer's id or name. */
  customer?: string | null
}

/** What `update` may change; a field left out stays as it is, null clears it. `customer` by id or name. */
export type KeyChanges = Partial<Pick<StoredKey, 'name' | 'plan' | 'scopes' | 'expires' | 'customer'>>

/** A customer (account): keys that belong to it share its credits and its plan. */
export interface Customer {
  id: string
  name: string
  /** null: the server's default plan at the time of each request. */
  plan: string | null
  /** ISO 8601 UTC. */
  created: string
}

export type NewCustomer = Pick<Customer, 'name' | 'plan'>
export type CustomerChanges = Partial<NewCustomer>

/** What a lookup by hash finds: the key, its customer, and whether the secret presented was replaced. */
export interface KeyMatch {
  record: StoredKey
  /** The key's customer when it has one: its plan is the one that counts. */
  customer: Customer | null
  /** For a secret a rotation replaced: when its grace ends (ISO 8601 UTC), from then on it is refused; null: the current secret. */
  retires: string | null
}

export interface RotatedKey {
  /** The new secret, returned once and never stored. */
  key: string
  record: StoredKey
  /** Until when the previous secret is still accepted (ISO 8601 UTC). */
  previousUntil: string
}

export type AuditAction = 'key.create' | 'key.update' | 'key.rotate' | 'key.revoke' | 'customer.create' | 'customer.update'
export type AuditValue = string | string[] | null

/** One operator action: never a secret or a hash. */
export interface AuditEntry {
  /** ISO 8601 UTC. */
  at: string
  /** Who: `cli:<OS user>`, `admin:<credential name>`, … */
  actor: string
  action: AuditAction
  /** The key's or the customer's id. */
  target: string
  /** Each field that changed (a created record's set fields, from null); a rotation adds `grace_until`. */
  changes: Record<string, { from: AuditValue; to: AuditValue }>
}

/** The newest `limit` entries, of those at or after `since`. */
export interface AuditQuery {
  /** At most this many entries (default 100, at most 10,000). */
  limit?: number
  /** Only entries at or after this time (ISO 8601). */
  since?: string
}

export class KeyStoreError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'KeyStoreError'
  }
}

/**
 * SQLite answers at once, Redis with a promise; the request path takes either. Every change is atomic
 * (one transaction, one Lua script) and recorded in the audit log with its `actor`; `create` and `revoke`
 * take `actor` as optional only for callers written before the log (`unknown` is recorded).
 */
export interface KeyStore {
  /** Issues a new key; the plaintext is returned once and never stored. */
  create(key: NewKey, actor?: string): Answer<{ key: string; record: StoredKey }>
  list(): Answer<StoredKey[]>
  /** Changes an active key (by id, or by the name of an active key) without a new secret. */
  update(idOrName: string, changes: KeyChanges, actor: string): Answer<StoredKey>
  /** A new secret for an active key, returned once; the old one is accepted for `graceSeconds` more (0: refused at once). */
  rotate(idOrName: string, options: { graceSeconds: number }, actor: string): Answer<RotatedKey>
  /** Revokes by id, or by the name of an active key. */
  revoke(idOrName: string, actor?: string): Answer<StoredKey>
  /** One store read: the key of a current or replaced secret, with its customer. */
  findByHash(hash: Uint8Array): Answer<KeyMatch | null>
  createCustomer(customer: NewCustomer, actor: string): Answer<Customer>
  listCustomers(): Answer<Customer[]>
  /** Renames a customer or changes its plan (by id or name); every key of it follows. */
  updateCustomer(idOrName: string, changes: CustomerChanges, actor: string): Answer<Customer>
  /** Operator actions, newest first. */
  audit(query?: AuditQuery): Answer<AuditEntry[]>
  close(): void
}

/** Recorded as the actor by callers that name none. */
export const UNKNOWN_ACTOR = 'unknown'

/** A scope is a domain name: lower-case letters, digits and hyphens. */
const SCOPE_PATTERN = /^[a-z][a-z0-9-]{0,39}$/
const KEY_ID = /^key_[0-9A-Za-z]{11}$/
const CUSTOMER_ID = /^cus_[0-9A-Za-z]{11}$/
/** As ALMANAC_PLANS spells plan names. */
const PLAN_NAME = /^[A-Za-z0-9_.-]{1,100}$/
/** A grace longer than this is a key that was never really rotated. */
export const MAX_GRACE_SECONDS = 90 * 86_400
const MAX_AUDIT_LIMIT = 10_000

const iso = (ms: number) => new Date(ms).toISOString()

/** Why a scope list is unacceptable, or null; an empty list would make a key that can call nothing. */
export function validateScopes(scopes: string[]): string | null {
  if (!scopes.length) return 'no scopes given; leave --scopes out for a key that may call every domain'
  if (scopes.length > 64) return 'more than 64 scopes'
  const bad = scopes.find((s) => !SCOPE_PATTERN.test(s))
  return bad === undefined ? null : `${JSON.stringify(bad)} is not a domain name`
}

function validateName(name: string): string | null {
  if (!name.trim()) return 'the name is empty'
  if (name.length > 100) return 'the name is longer than 100 characters'
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'the name contains a control character'
  return null
}

/** Names are found beside ids (`revoke NAME`), so a name may not look like an id. */
export function validateKeyName(name: string): string | null {
  return validateName(name) ?? (KEY_ID.test(name) ? 'the name looks like a key id (key_…); choose another' : null)
}

export function validateCustomerName(name: string): string | null {
  return validateName(name) ?? (CUSTOMER_ID.test(name) ? 'the name looks like a customer id (cus_…); choose another' : null)
}

/** The actor as recorded; a change nobody can be named for is refused. */
export function checkActor(actor: string): string {
  if (!actor.trim() || actor.length > 200 || /[\u0000-\u001f\u007f]/.test(actor))
    throw new KeyStoreError(`the actor ${JSON.stringify(actor)} must be a name of 1 to 200 printable characters`)
  return actor
}

const checkKeyName = (name: string) => {
  const bad = validateKeyName(name)
  if (bad) throw new KeyStoreError(`--name ${JSON.stringify(name)}: ${bad}`)
  return name
}

const checkPlan = (plan: string | null) => {
  if (plan !== null && !PLAN_NAME.test(plan)) throw new KeyStoreError(`--plan ${JSON.stringify(plan)}: not a plan name`)
  return plan
}

const checkScopes = (scopes: string[] | null | undefined) => {
  const bad = scopes && validateScopes(scopes)
  if (bad) throw new KeyStoreError(`--scopes: ${bad}`)
  return scopes ? [...new Set(scopes)] : null
}

const checkExpires = (expires: string | null | undefined) => {
  const ms = expires == null ? null : Date.parse(expires)
  if (ms !== null && Number.isNaN(ms)) throw new KeyStoreError(`--expires ${JSON.stringify(expires)}: not a date`)
  return ms === null ? null : iso(ms)
}

/** Seconds of grace a rotation gives the old secret. */
export function checkGrace(seconds: number): number {
  if (!Number.isInteger(seconds) || seconds < 0 || seconds > MAX_GRACE_SECONDS)
    throw new KeyStoreError(`--grace: ${seconds} is not a whole number of seconds from 0 to ${MAX_GRACE_SECONDS} (90 days)`)
  return seconds
}

/** New key fields made once for every store: the key, its id, and the checked name, plan, scopes and expiry. */
export function prepareKey(input: NewKey, now = Date.now()) {
  const record: StoredKey = {
    id: 'key_' + randomBase62(8),
    name: checkKeyName(input.name),
    plan: checkPlan(input.plan),
    created: iso(now),
    revoked: null,
    scopes: checkScopes(input.scopes),
    expires: checkExpires(input.expires),
    // Set by the store, which finds the customer named in the same transaction.
    customer: null,
    rotated: null,
  }
  return { ...newSecret(), record, customerRef: checkCustomerRef(input.customer ?? null) }
}

/** A customer named by id or name; the store finds it in the same transaction as the change. */
const checkCustomerRef = (ref: string | null) => {
  if (ref !== null && !ref.trim()) throw unknownCustomer(ref)
  return ref
}

/** The changes checked, holding only the fields given (`customer` still an id or a name). */
export function prepareChanges(changes: KeyChanges): KeyChanges {
  const out: KeyChanges = {}
  if (changes.name !== undefined) out.name = checkKeyName(changes.name)
  if (changes.plan !== undefined) out.plan = checkPlan(changes.plan)
  if (changes.scopes !== undefined) out.scopes = checkScopes(changes.scopes)
  if (changes.expires !== undefined) out.expires = checkExpires(changes.expires)
  if (changes.customer !== undefined) out.customer = checkCustomerRef(changes.customer)
  if (!Object.keys(out).length) throw new KeyStoreError('nothing to change: name one of --name, --plan, --scopes, --expires, --customer')
  return out
}

const checkCustomerName = (name: string) => {
  const bad = validateCustomerName(name)
  if (bad) throw new KeyStoreError(`--name ${JSON.stringify(name)}: ${bad}`)
  return name
}

export function prepareCustomer(input: NewCustomer, now = Date.now()): Customer {
  return { id: 'cus_' + randomBase62(8), name: checkCustomerName(input.name), plan: checkPlan(input.plan), created: iso(now) }
}

export function prepareCustomerChanges(changes: CustomerChanges): CustomerChanges {
  const out: CustomerChanges = {}
  if (changes.name !== undefined) out.name = checkCustomerName(changes.name)
  if (changes.plan !== undefined) out.plan = checkPlan(changes.plan)
  if (!Object.keys(out).length) throw new KeyStoreError('nothing to change: name --name or --plan')
  return out
}

/** The limit and the lower bound of an audit read, checked. */
export function auditQuery(query: AuditQuery = {}): { limit: number; since: string | null } {
  const limit = query.limit ?? 100
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_AUDIT_LIMIT)
    throw new KeyStoreError(`--limit: ${limit} is not a whole number from 1 to ${MAX_AUDIT_LIMIT}`)
  const since = query.since === undefined ? null : Date.parse(query.since)
  if (since !== null && Number.isNaN(since)) throw new KeyStoreError(`--since ${JSON.stringify(query.since)}: not a time`)
  return { limit, since: since === null ? null : iso(since) }
}

/** The fields audit entries compare (the Redis scripts compare the same ones); ids and creation times are the entry's own. */
export const AUDITED_FIELDS = ['name', 'plan', 'scopes', 'expires', 'customer', 'revoked', 'rotated'] as const
type Audited = Partial<Record<(typeof AUDITED_FIELDS)[number], AuditValue>>

/** Each audited field that differs between two records; a field absent and a field null are the same. */
export function changedFields(before: Audited, after: Audited): AuditEntry['changes'] {
  const changes: AuditEntry['changes'] = {}
  for (const field of AUDITED_FIELDS) {
    const from = before[field] ?? null
    const to = after[field] ?? null
    if (JSON.stringify(from) !== JSON.stringify(to)) changes[field] = { from, to }
  }
  return changes
}

export const nameTaken = (name: string) =>
  new KeyStoreError(`an active key is already named ${JSON.stringify(name)}; revoke it first or choose another name`)
export const customerNameTaken = (name: string) =>
  new KeyStoreError(`a customer is already named ${JSON.stringify(name)}; choose another name`)
export const unknownKey = (idOrName: string) => new KeyStoreError(`no key has the id or active name ${JSON.stringify(idOrName)}`)
export const unknownCustomer = (idOrName: string) =>
  new KeyStoreError(`no customer has the id or name ${JSON.stringify(idOrName)} (almanac customers list shows them)`)
export const alreadyRevoked = (key: Pick<StoredKey, 'id' | 'name' | 'revoked'>) =>
  new KeyStoreError(`key ${key.id} (${key.name}) was already revoked at ${key.revoked}`)
export const revokedUnchangeable = (key: Pick<StoredKey, 'id' | 'name' | 'revoked'>) =>
  new KeyStoreError(`key ${key.id} (${key.name}) was revoked at ${key.revoked}; a revoked key cannot be changed or rotated`)
export const idClash = () => new KeyStoreError('a record with the same id or hash exists already; run the command again')

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
  // Customers (a key's customer names one; no foreign key: SQLite enforces none without a pragma every
  // connection would have to set, and the store checks it in the same transaction). Secrets a rotation
  // replaced, kept after their grace so a caller hears "rotated" rather than "not valid". The audit log,
  // its changes as JSON, in the order written.
  `CREATE TABLE customers (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL UNIQUE,
     plan TEXT,
     created_at TEXT NOT NULL
   ) STRICT;
   ALTER TABLE api_keys ADD COLUMN customer TEXT;
   ALTER TABLE api_keys ADD COLUMN rotated_at TEXT;
   CREATE TABLE retired_secrets (
     hash BLOB PRIMARY KEY,
     key_id TEXT NOT NULL,
     retires_at TEXT NOT NULL
   ) STRICT, WITHOUT ROWID;
   CREATE INDEX retired_secrets_key ON retired_secrets(key_id);
   CREATE TABLE audit_log (
     seq INTEGER PRIMARY KEY,
     at TEXT NOT NULL,
     actor TEXT NOT NULL,
     action TEXT NOT NULL,
     target TEXT NOT NULL,
     changes TEXT NOT NULL
   ) STRICT;`,
]

type KeyRow = {
  id: string
  name: string
  plan: string | null
  created_at: string
  revoked_at: string | null
  scopes: string | null
  expires_at: string | null
  customer: string | null
  rotated_at: string | null
}
type CustomerRow = { id: string; name: string; plan: string | null; created_at: string }
type MatchRow = KeyRow & { c_name: string | null; c_plan: string | null; c_created: string | null; retires_at: string | null }
type AuditRow = { at: string; actor: string; action: AuditAction; target: string; changes: string }

const keyRecord = (r: KeyRow): StoredKey => ({
  id: r.id,
  name: r.name,
  plan: r.plan,
  created: r.created_at,
  revoked: r.revoked_at,
  scopes: r.scopes === null ? null : r.scopes.split(' '),
  expires: r.expires_at,
  customer: r.customer,
  rotated: r.rotated_at,
})
const customerRecord = (r: CustomerRow): Customer => ({ id: r.id, name: r.name, plan: r.plan, created: r.created_at })
const match = (r: MatchRow): KeyMatch => ({
  record: keyRecord(r),
  customer: r.customer && r.c_created !== null ? { id: r.customer, name: r.c_name!, plan: r.c_plan, created: r.c_created } : null,
  retires: r.retires_at,
})

const KEY_COLUMNS = 'k.id, k.name, k.plan, k.created_at, k.revoked_at, k.scopes, k.expires_at, k.customer, k.rotated_at'
const CUSTOMER_COLUMNS = 'id, name, plan, created_at'
/** The key's customer, by scalar subqueries: in this SQLite a LEFT JOIN made the lookup 4× slower (2 µs → 8 µs). */
const CUSTOMER_OF_KEY = ['name', 'plan', 'created_at']
  .map((column) => `(SELECT ${column} FROM customers WHERE id = k.customer) AS c_${column === 'created_at' ? 'created' : column}`)
  .join(', ')
/**
 * A request's one read: the key of a current secret or of one a rotation replaced, with its customer. Each
 * half is an index lookup; the second finds nothing (the subquery is NULL) for a current or unknown secret.
 */
const MATCH = `
  SELECT ${KEY_COLUMNS}, ${CUSTOMER_OF_KEY}, NULL AS retires_at FROM api_keys k WHERE k.hash = ?1
  UNION ALL
  SELECT ${KEY_COLUMNS}, ${CUSTOMER_OF_KEY}, (SELECT retires_at FROM retired_secrets WHERE hash = ?1) FROM api_keys k
   WHERE k.id = (SELECT key_id FROM retired_secrets WHERE hash = ?1)`

function statements(db: Database) {
  const keys = `SELECT ${KEY_COLUMNS} FROM api_keys k`
  const customers = `SELECT ${CUSTOMER_COLUMNS} FROM customers`
  return {
    match: db.query<MatchRow, [Uint8Array]>(MATCH),
    keyById: db.query<KeyRow, [string]>(`${keys} WHERE k.id = ?`),
    activeKeyByName: db.query<KeyRow, [string]>(`${keys} WHERE k.name = ? AND k.revoked_at IS NULL`),
    allKeys: db.query<KeyRow, []>(`${keys} ORDER BY k.created_at, k.id`),
    insertKey: db.query(
      'INSERT INTO api_keys (id, hash, name, plan, created_at, scopes, expires_at, customer) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    updateKey: db.query('UPDATE api_keys SET name = ?, plan = ?, scopes = ?, expires_at = ?, customer = ? WHERE id = ?'),
    revokeKey: db.query('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
    // A rotation caps every older secret's grace at the new one's, then retires the current secret.
    capGrace: db.query('UPDATE retired_secrets SET retires_at = min(retires_at, ?1) WHERE key_id = ?2'),
    retireSecret: db.query('INSERT INTO retired_secrets (hash, key_id, retires_at) SELECT hash, id, ?1 FROM api_keys WHERE id = ?2'),
    replaceSecret: db.query('UPDATE api_keys SET hash = ?, rotated_at = ? WHERE id = ?'),
    customerById: db.query<CustomerRow, [string]>(`${customers} WHERE id = ?`),
    customerByName: db.query<CustomerRow, [string]>(`${customers} WHERE name = ?`),
    allCustomers: db.query<CustomerRow, []>(`${customers} ORDER BY created_at, id`),
    insertCustomer: db.query('INSERT INTO customers (id, name, plan, created_at) VALUES (?, ?, ?, ?)'),
    updateCustomer: db.query('UPDATE customers SET name = ?, plan = ? WHERE id = ?'),
    insertAudit: db.query('INSERT INTO audit_log (at, actor, action, target, changes) VALUES (?, ?, ?, ?, ?)'),
    readAudit: db.query<AuditRow, [string, number]>(
      'SELECT at, actor, action, target, changes FROM audit_log WHERE at >= ? ORDER BY seq DESC LIMIT ?',
    ),
  }
}

export interface KeyStoreOptions {
  /** The clock of creation, revocation and rotation times and of the audit log. */
  now?: () => number
}

/** The key database under the state dir. */
export function openKeyStore(stateDir: string, options: KeyStoreOptions = {}): KeyStore {
  const db: Database = openStateDatabase(stateDir, 'keys.sqlite', SCHEMA)
  const now = options.now ?? Date.now
  const q = statements(db)
  // Immediate: the write lock is taken before the first read, so checks and writes see one state.
  const write = <T>(f: () => T): T => db.transaction(f).immediate()
  const log = (actor: string, action: AuditAction, target: string, changes: AuditEntry['changes']) => {
    if (Object.keys(changes).length) q.insertAudit.run(iso(now()), actor, action, target, JSON.stringify(changes))
  }
  const findKey = (idOrName: string) => q.keyById.get(idOrName) ?? q.activeKeyByName.get(idOrName) ?? null
  const activeKey = (idOrName: string) => {
    const row = findKey(idOrName)
    if (!row) throw unknownKey(idOrName)
    if (row.revoked_at) throw revokedUnchangeable(keyRecord(row))
    return row
  }
  const customer = (idOrName: string) => {
    const row = q.customerById.get(idOrName) ?? q.customerByName.get(idOrName)
    if (!row) throw unknownCustomer(idOrName)
    return row
  }
  const saveKey = (k: StoredKey) => q.updateKey.run(k.name, k.plan, k.scopes?.join(' ') ?? null, k.expires, k.customer, k.id)

  return {
    create(input, actor = UNKNOWN_ACTOR) {
      checkActor(actor)
      const { key, hash, record: made, customerRef } = prepareKey(input, now())
      return write(() => {
        if (q.activeKeyByName.get(made.name)) throw nameTaken(made.name)
        const record = { ...made, customer: customerRef === null ? null : customer(customerRef).id }
        const { id, name, plan, created, scopes, expires } = record
        q.insertKey.run(id, hash, name, plan, created, scopes?.join(' ') ?? null, expires, record.customer)
        log(actor, 'key.create', id, changedFields({}, record))
        return { key, record }
      })
    },
    list: () => q.allKeys.all().map(keyRecord),
    update(idOrName, changes, actor) {
      checkActor(actor)
      const wanted = prepareChanges(changes)
      return write(() => {
        const before = keyRecord(activeKey(idOrName))
        const after: StoredKey = { ...before, ...wanted }
        if (wanted.customer) after.customer = customer(wanted.customer).id
        if (after.name !== before.name && q.activeKeyByName.get(after.name)) throw nameTaken(after.name)
        const changed = changedFields(before, after)
        if (Object.keys(changed).length) saveKey(after)
        log(actor, 'key.update', after.id, changed)
        return after
      })
    },
    rotate(idOrName, { graceSeconds }, actor) {
      checkActor(actor)
      const grace = checkGrace(graceSeconds)
      const { key, hash } = newSecret()
      return write(() => {
        const before = keyRecord(activeKey(idOrName))
        const at = now()
        const previousUntil = iso(at + grace * 1000)
        q.capGrace.run(previousUntil, before.id)
        q.retireSecret.run(previousUntil, before.id)
        q.replaceSecret.run(hash, iso(at), before.id)
        const record = { ...before, rotated: iso(at) }
        log(actor, 'key.rotate', record.id, { ...changedFields(before, record), grace_until: { from: null, to: previousUntil } })
        return { key, record, previousUntil }
      })
    },
    revoke(idOrName, actor = UNKNOWN_ACTOR) {
      checkActor(actor)
      return write(() => {
        const row = findKey(idOrName)
        if (!row) throw unknownKey(idOrName)
        if (row.revoked_at) throw alreadyRevoked(keyRecord(row))
        const at = iso(now())
        q.revokeKey.run(at, row.id)
        const record = keyRecord({ ...row, revoked_at: at })
        log(actor, 'key.revoke', row.id, changedFields(keyRecord(row), record))
        return record
      })
    },
    findByHash(hash) {
      const row = q.match.get(hash)
      return row ? match(row) : null
    },
    ...sqliteCustomers(q, write, log, customer, now),
    audit(query) {
      const { limit, since } = auditQuery(query)
      return q.readAudit.all(since ?? '', limit).map((r) => ({ ...r, changes: JSON.parse(r.changes) }))
    },
    close: () => db.close(),
  }
}

/** The customer half of the SQLite store. */
function sqliteCustomers(
  q: ReturnType<typeof statements>,
  write: <T>(f: () => T) => T,
  log: (actor: string, action: AuditAction, target: string, changes: AuditEntry['changes']) => void,
  customer: (idOrName: string) => CustomerRow,
  now: () => number,
): Pick<KeyStore, 'createCustomer' | 'listCustomers' | 'updateCustomer'> {
  return {
    createCustomer(input, actor) {
      checkActor(actor)
      const made = prepareCustomer(input, now())
      return write(() => {
        if (q.customerByName.get(made.name)) throw customerNameTaken(made.name)
        q.insertCustomer.run(made.id, made.name, made.plan, made.created)
        log(actor, 'customer.create', made.id, changedFields({}, made))
        return made
      })
    },
    listCustomers: () => q.allCustomers.all().map(customerRecord),
    updateCustomer(idOrName, changes, actor) {
      checkActor(actor)
      const wanted = prepareCustomerChanges(changes)
      return write(() => {
        const before = customerRecord(customer(idOrName))
        const after = { ...before, ...wanted }
        if (after.name !== before.name && q.customerByName.get(after.name)) throw customerNameTaken(after.name)
        q.updateCustomer.run(after.name, after.plan, after.id)
        log(actor, 'customer.update', after.id, changedFields(before, after))
        return after
      })
    },
  }
}
