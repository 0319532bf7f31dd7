/**
 * Per-caller shares of the QR image store, so one key cannot fill the store that every key shares.
 *
 * A caller is charged the bytes of each png/svg image it asks to store, from the request until the link
 * it got expires: the image's link is what keeps the bytes in the store on its account. The charge is per
 * (caller, image): asking again for an image it already holds only moves that charge's expiry forward
 * (no new bytes), and an image another key already stored is charged all the same, since this caller's
 * link keeps it alive as long as the other's would (and a share that depended on others' images would
 * tell a caller which images they made). base64 answers store nothing and are not charged.
 *
 * Bytes are released when the link expires, by the clock alone: the ledger never waits for the sweeper.
 * The ledger is one small interface (`StoreLedger`); the one here is SQLite in the state dir, so it
 * survives a restart and is exact for every process sharing that file (`--workers`, servers on one host).
 * Instances on several hosts share the quota store's Redis instead (`shares-redis.ts`), so one key's share
 * is one share however many instances it calls.
 */
import type { Database } from 'bun:sqlite'
import { AlmanacError, unavailable } from '../../lib/errors.ts'
import { openStateDatabase } from '../../stores/sqlite.ts'

export const LEDGER_FILE = 'qr-shares.sqlite'
/** Charges read to say when a refused caller will have room (see `roomAt`). */
const ROOM_WALK = 1024
/** Expired charges dropped per transaction by `prune`, which yields to the event loop between batches. */
const PRUNE_BATCH = 256

export type ChargeResult =
  /** Charged; `undo` gives the charge back (the store then refused the image). */
  | { ok: true; held: number; undo(): Promise<void> }
  /** Over the share; `freesAt` is when enough of the caller's charges expire to make room (none if the image alone is over it). */
  | { ok: false; held: number; freesAt?: number }

export type CheckResult = { ok: boolean; held: number; freesAt?: number }

/** Asynchronous because the shared ledger is a Redis round trip; a failing ledger rejects with a 503. */
export interface StoreLedger {
  /** Charges `caller` for `bytes` of image `name` until `expires` unless that takes its live bytes over `share`. Times in Unix seconds. */
  charge(caller: string, name: string, bytes: number, expires: number, now: number, share: number): Promise<ChargeResult>
  /**
   * Whether `bytes` more would fit in the caller's share now, without charging: what a request is checked
   * against before its image is made. `charge` still decides.
   */
  check(caller: string, bytes: number, now: number, share: number): Promise<CheckResult>
  /** The caller's live bytes at `now`. */
  held(caller: string, now: number): Promise<number>
  /** Forgets every charge expired at `now` (the sweeper's timer), so callers who never return leave no rows. */
  prune(now: number): Promise<void>
  close(): void
}

const SCHEMA = [
  `CREATE TABLE qr_charges (
     caller TEXT NOT NULL,
     name TEXT NOT NULL,
     bytes INTEGER NOT NULL,
     expires INTEGER NOT NULL,
     PRIMARY KEY (caller, name)
   ) STRICT, WITHOUT ROWID;
   CREATE INDEX qr_charges_caller_expiry ON qr_charges(caller, expires, bytes);
   CREATE INDEX qr_charges_expiry ON qr_charges(expires);
   CREATE TABLE qr_holders (caller TEXT PRIMARY KEY, bytes INTEGER NOT NULL) STRICT, WITHOUT ROWID;`,
]

/**
 * Each charge is one IMMEDIATE transaction (drop the caller's expired charges, read, decide, write), so
 * concurrent requests from any process sharing the file are serialised and the share is never overshot.
 * `qr_holders` keeps each caller's running total, so a charge costs the rows that expired since, not a
 * sum over everything the caller holds.
 */
export function sqliteLedger(db: Database): StoreLedger {
  const expiredOf = db.query<{ bytes: number; n: number }, [string, number]>(
    'SELECT COALESCE(SUM(bytes), 0) AS bytes, COUNT(*) AS n FROM qr_charges WHERE caller = ? AND expires <= ?',
  )
  const dropExpired = db.query('DELETE FROM qr_charges WHERE caller = ? AND expires <= ?')
  const total = db.query<{ bytes: number }, [string]>('SELECT bytes FROM qr_holders WHERE caller = ?')
  const add = db.query(
    'INSERT INTO qr_holders (caller, bytes) VALUES (?1, ?2) ON CONFLICT (caller) DO UPDATE SET bytes = bytes + excluded.bytes',
  )
  const existing = db.query<{ bytes: number; expires: number }, [string, string]>(
    'SELECT bytes, expires FROM qr_charges WHERE caller = ? AND name = ?',
  )
  const insert = db.query('INSERT INTO qr_charges (caller, name, bytes, expires) VALUES (?, ?, ?, ?)')
  const remove = db.query('DELETE FROM qr_charges WHERE caller = ? AND name = ?')
  const extend = db.query('UPDATE qr_charges SET expires = ? WHERE caller = ? AND name = ?')
  const oldestFirst = db.query<{ bytes: number; expires: number }, [string, number]>(
    `SELECT bytes, expires FROM qr_charges WHERE caller = ? AND expires > ? ORDER BY expires LIMIT ${ROOM_WALK}`,
  )

  /** The caller's running total after its expired charges are dropped. */
  const settle = (caller: string, now: number): number => {
    const expired = expiredOf.get(caller, now)!
    if (expired.n) {
      dropExpired.run(caller, now)
      add.run(caller, -expired.bytes)
    }
    return total.get(caller)?.bytes ?? 0
  }

  /**
   * When enough charges have expired for `bytes` more to fit, oldest first. Only the ROOM_WALK oldest are
   * read, so a refusal costs the same however many images the caller holds; past them, the last one's
   * expiry is the answer (nothing frees enough sooner, and the caller asks again then).
   */
  const roomAt = (caller: string, held: number, bytes: number, share: number, now: number): number | undefined => {
    if (bytes > share) return undefined
    let left = held
    let last: number | undefined
    for (const row of oldestFirst.iterate(caller, now)) {
      left -= row.bytes
      last = row.expires
      if (left + bytes <= share) break
    }
    return last
  }

  const undoTx = db.transaction((f: () => void) => f())
  /** Gives back one charge this request made, unless a later request has moved its expiry since. */
  const undoOf = (caller: string, name: string, expires: number, restore: () => void) => async () =>
    undoTx.immediate(() => {
      if (existing.get(caller, name)?.expires === expires) restore()
    })

  const charge = db.transaction(
    (caller: string, name: string, bytes: number, expires: number, now: number, share: number): ChargeResult => {
      const held = settle(caller, now)
      const before = existing.get(caller, name)
      if (before) {
        // Held already: no new bytes, only a later expiry (undone by putting the old one back).
        if (before.expires >= expires) return { ok: true, held, undo: async () => {} }
        extend.run(expires, caller, name)
        return { ok: true, held, undo: undoOf(caller, name, expires, () => extend.run(before.expires, caller, name)) }
      }
      if (held + bytes > share) return { ok: false, held, freesAt: roomAt(caller, held, bytes, share, now) }
      insert.run(caller, name, bytes, expires)
      add.run(caller, bytes)
      const undo = undoOf(caller, name, expires, () => {
        remove.run(caller, name)
        add.run(caller, -bytes)
      })
      return { ok: true, held: held + bytes, undo }
    },
  )

  const expiredBatch = db.query<{ caller: string; name: string; bytes: number }, [number]>(
    `SELECT caller, name, bytes FROM qr_charges WHERE expires <= ? LIMIT ${PRUNE_BATCH}`,
  )
  /** One batch of expired charges dropped and taken off their callers' totals; how many there were. */
  const pruneBatch = db.transaction((now: number): number => {
    const rows = expiredBatch.all(now)
    for (const row of rows) {
      remove.run(row.caller, row.name)
      add.run(row.caller, -row.bytes)
    }
    if (rows.length < PRUNE_BATCH) db.run('DELETE FROM qr_holders WHERE bytes <= 0')
    return rows.length
  })

  const heldAt = (caller: string, now: number) => (total.get(caller)?.bytes ?? 0) - expiredOf.get(caller, now)!.bytes
  return {
    charge: async (caller, name, bytes, expires, now, share) => charge.immediate(caller, name, bytes, expires, now, share),
    async check(caller, bytes, now, share) {
      const held = heldAt(caller, now)
      return held + bytes <= share ? { ok: true, held } : { ok: false, held, freesAt: roomAt(caller, held, bytes, share, now) }
    },
    held: async (caller, now) => heldAt(caller, now),
    async prune(now) {
      while (pruneBatch.immediate(now) === PRUNE_BATCH) await new Promise((resolve) => setImmediate(resolve))
    },
    close: () => db.close(),
  }
}

/** The state dir's ledger, opened on first use (a server that stores no image never writes the file). */
export function stateDirLedger(stateDir: string): StoreLedger {
  let ledger: StoreLedger | undefined
  const open = () => {
    if (ledger) return ledger
    try {
      ledger = sqliteLedger(openStateDatabase(stateDir, LEDGER_FILE, SCHEMA))
    } catch (e) {
      throw unavailable(
        `The QR store's per-key ledger cannot be opened in ${stateDir} (${(e as Error).message}); make ALMANAC_STATE_DIR writable.`,
      )
    }
    return ledger
  }
  return {
    charge: async (...args) => open().charge(...args),
    check: async (...args) => open().check(...args),
    held: async (caller, now) => open().held(caller, now),
    prune: async (now) => ledger?.prune(now),
    close: () => ledger?.close(),
  }
}

/**
 * The 429 a caller over its share gets: what it holds, and when its own links free enough room. `early`:
 * refused before the image was made, because not even the smallest image of these options (`bytes`) fits
 * (the share is at least 1 KiB, more than that, so `freesAt` is then always known).
 */
export function overShare(
  held: number,
  bytes: number,
  share: number,
  now: number,
  freesAt: number | undefined,
  early = false,
): AlmanacError {
  const extra = { share_bytes: share, held_bytes: held, image_bytes: bytes, frees_at: freesAt ?? null }
  const where = `Your key holds ${held} bytes of images in the QR store and its share is ${share} (ALMANAC_QR_STORE_MAX_BYTES_PER_KEY)`
  const needs = early
    ? `not even the smallest image (${bytes} bytes) fits in what is left, so none was made`
    : `this image needs ${bytes} more`
  if (freesAt === undefined)
    return new AlmanacError(
      'quota',
      `This ${bytes}-byte image alone is larger than your key's share of the QR store (${share} bytes): ask for a lower ` +
        `error_correction, a smaller png size, or format base64, which stores nothing.`,
      { extra },
    )
  return new AlmanacError(
    'quota',
    `${where}; ${needs}. Enough of your links expire at ${new Date(freesAt * 1000).toISOString()} to make room. Shorter ttl values free ` +
      `your share sooner, and format base64 stores nothing.`,
    { headers: { 'Retry-After': String(Math.max(1, freesAt - now)) }, extra },
  )
}
