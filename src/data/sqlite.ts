/**
 * Opening a built SQLite artifact at run time: read-only, memory-mapped (pages come from the OS page
 * cache and are shared between processes, not copied into the JS heap), and without touching the
 * directory (no journal, so a read-only data directory works).
 */
import { Database } from 'bun:sqlite'

/** 1 GiB: larger than any artifact, so the whole file is mapped. */
const MMAP_BYTES = 1 << 30

export function openReadonlySqlite(path: string): Database {
  const db = new Database(path, { readonly: true })
  db.run(`PRAGMA mmap_size = ${MMAP_BYTES}`)
  db.run('PRAGMA query_only = ON')
  return db
}
