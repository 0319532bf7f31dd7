/**
 * Opening a built SQLite artifact at run time: read-only, immutable, memory-mapped.
 *
 * `immutable=1` tells SQLite the file never changes while open, so it takes no file locks and does no
 * change detection. Without it every statement begins a read transaction with fcntl locking and a
 * re-read of the header: measured 6.4 µs for a primary-key lookup against 0.3 µs with it. Artifacts are
 * replaced by rename, never rewritten in place, so the promise holds. Memory mapping serves pages from
 * the OS page cache, shared between processes, not copied into the JS heap; nothing is written to the
 * directory, so a read-only data directory works.
 */
import { constants, Database } from 'bun:sqlite'

/** 1 GiB: larger than any artifact, so the whole file is mapped. */
const MMAP_BYTES = 1 << 30

/** A file path as an SQLite URI filename (`?`, `#` and `%` are the characters URI parsing would take). */
const uriOf = (path: string) => `file:${path.replace(/[?#%]/g, (c) => encodeURIComponent(c))}?immutable=1`

export function openReadonlySqlite(path: string): Database {
  const db = new Database(uriOf(path), constants.SQLITE_OPEN_READONLY | constants.SQLITE_OPEN_URI)
  db.run(`PRAGMA mmap_size = ${MMAP_BYTES}`)
  db.run('PRAGMA query_only = ON')
  return db
}
