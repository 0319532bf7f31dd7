/**
 * Where RDAP answers are kept between requests and restarts (SPEC: "cached 7 days"): the state SQLite
 * (`<stateDir>/email-rdap.sqlite`), Redis (so every instance shares one cache) or this process's memory,
 * as ALMANAC_EMAIL_RDAP_CACHE says (unset: the quota store's Redis when that is Redis, else SQLite). The
 * store is a cache, not a dependency: when it cannot be opened or reached, lookups go to RDAP as if it were
 * empty, and the failure is logged once.
 */
import type { Database } from 'bun:sqlite'
import { redisConnection } from '../../stores/redis.ts'
import { openStateDatabase } from '../../stores/sqlite.ts'

/** A definitive RDAP answer: the domain's registration date, or "not registered" (HTTP 404). */
export interface StoredRdap {
  status: 'found' | 'not_found'
  /** ISO 8601 registration date, or null when the record has no registration event. */
  registered: string | null
}

export interface RdapStore {
  get(domain: string, now: number): Promise<StoredRdap | null>
  set(domain: string, value: StoredRdap, expiresAt: number, now: number): Promise<void>
  close(): void
}

/** Most rows kept; beyond it the soonest to expire go first. */
export const SQLITE_MAX_ROWS = 200_000

const SCHEMA = [
  `CREATE TABLE rdap_cache (
     domain TEXT PRIMARY KEY,
     status TEXT NOT NULL,
     registered TEXT,
     expires_at INTEGER NOT NULL
   ) STRICT;
   CREATE INDEX rdap_cache_expires ON rdap_cache(expires_at);`,
]

/** This process only, up to SQLITE_MAX_ROWS; the oldest written go first beyond it. */
export function memoryRdapStore(): RdapStore {
  const rows = new Map<string, { value: StoredRdap; expiresAt: number }>()
  return {
    async get(domain, now) {
      const row = rows.get(domain)
      return row && row.expiresAt > now ? row.value : null
    },
    async set(domain, value, expiresAt) {
      rows.delete(domain)
      rows.set(domain, { value, expiresAt })
      if (rows.size > SQLITE_MAX_ROWS) rows.delete(rows.keys().next().value!)
    },
    close() {
      rows.clear()
    },
  }
}

export function sqliteRdapStore(stateDir: string, log: (line: string) => void): RdapStore {
  let db: Database | null = null
  let failed = false
  let writes = 0
  const open = () => {
    if (db || failed) return db
    try {
      db = openStateDatabase(stateDir, 'email-rdap.sqlite', SCHEMA)
    } catch (e) {
      failed = true
      log(`RDAP cache disabled: ${(e as Error).message}`)
    }
    return db
  }
  return {
    async get(domain, now) {
      try {
        const row = open()
          ?.query<{ status: string; registered: string | null }, [string, number]>(
            'SELECT status, registered FROM rdap_cache WHERE domain = ? AND expires_at > ?',
          )
          .get(domain, now)
        return row ? { status: row.status === 'found' ? 'found' : 'not_found', registered: row.registered } : null
      } catch (e) {
        log(`RDAP cache read failed: ${(e as Error).message}`)
        return null
      }
    },
    async set(domain, value, expiresAt, now) {
      const d = open()
      if (!d) return
      try {
        d.query('INSERT OR REPLACE INTO rdap_cache (domain, status, registered, expires_at) VALUES (?, ?, ?, ?)').run(
          domain,
          value.status,
          value.registered,
          expiresAt,
        )
        // Bounded: now and then drop what expired, then the soonest to expire beyond the cap.
        if (++writes % 1000 === 1) {
          d.query('DELETE FROM rdap_cache WHERE expires_at <= ?').run(now)
          d.query('DELETE FROM rdap_cache WHERE domain IN (SELECT domain FROM rdap_cache ORDER BY expires_at DESC LIMIT -1 OFFSET ?)').run(
            SQLITE_MAX_ROWS,
          )
        }
      } catch (e) {
        log(`RDAP cache write failed: ${(e as Error).message}`)
      }
    },
    close() {
      db?.close()
      db = null
    },
  }
}

/** The RDAP cache's keys on Redis: the same on every topology. */
export const RDAP_KEY_PREFIX = 'almanac:email:rdap:'

/**
 * Redis keys `almanac:email:rdap:<domain>` holding JSON, expiring with the entry, on the stores' shared
 * connection handling (fail fast, back off, log once per outage). Any failure answers null.
 */
export function redisRdapStore(url: string, log: (line: string) => void, timeoutMs = 500): RdapStore {
  const redis = redisConnection(url, {
    timeoutMs,
    // A down cache must not add its timeout to every lookup.
    maxBackoffMs: 5000,
    role: 'RDAP cache in Redis',
    log: (line) => {
      const { msg, error } = JSON.parse(line) as { msg: string; error?: string }
      log(error ? `${msg}, lookups go to RDAP directly: ${error}` : msg)
    },
  })
  const run = async (name: string, args: string[]): Promise<any> => {
    try {
      return await redis.command(name, args)
    } catch {
      return null
    }
  }
  const key = (domain: string) => `${RDAP_KEY_PREFIX}${domain}`
  return {
    async get(domain) {
      const raw = await run('GET', [key(domain)])
      if (typeof raw !== 'string') return null
      try {
        const v = JSON.parse(raw) as StoredRdap
        return v.status === 'found' || v.status === 'not_found'
          ? { status: v.status, registered: typeof v.registered === 'string' ? v.registered : null }
          : null
      } catch {
        return null
      }
    },
    async set(domain, value, expiresAt, now) {
      const ms = Math.max(1, Math.round(expiresAt - now))
      await run('SET', [key(domain), JSON.stringify(value), 'PX', String(ms)])
    },
    close() {
      redis.close()
    },
  }
}
