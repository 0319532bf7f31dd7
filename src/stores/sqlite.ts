/**
 * The state databases under `config.stateDir` (API keys, quota counters): SQLite in WAL mode so the
 * server's readers never wait for the CLI's writers, and several processes (`--workers`, a CLI run
 * beside a server) can share one file; `busy_timeout` makes a writer wait for another instead of failing.
 */
import { Database } from 'bun:sqlite'
import { chmodSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'

export class StateError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'StateError'
  }
}

/**
 * Opens (creating if needed) `<stateDir>/<file>`; each schema step runs once. Anything that fails on the
 * way (a missing permission, a full disk while the journal or the schema is written) is a StateError
 * naming ALMANAC_STATE_DIR, which the CLI reports in one line.
 */
export function openStateDatabase(stateDir: string, file: string, schema: string[]): Database {
  const path = join(stateDir, file)
  try {
    return open(stateDir, path, schema)
  } catch (e) {
    if (e instanceof StateError) throw e
    throw new StateError(`ALMANAC_STATE_DIR: cannot open ${path}: ${(e as Error).message}`)
  }
}

function open(stateDir: string, path: string, schema: string[]): Database {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 })
  const db = new Database(path, { create: true, strict: true })
  // Hashes and counters only, but nobody else needs to read them.
  chmodSync(path, 0o600)
  db.exec('PRAGMA busy_timeout = 5000')
  db.exec('PRAGMA journal_mode = WAL')
  db.exec('PRAGMA synchronous = NORMAL')
  // Each entry of `schema` is one version step; user_version records how many have run.
  // Read again inside the write lock: two processes may open a new file at once.
  const version = () => (db.query('PRAGMA user_version').get() as { user_version: number }).user_version
  if (version() < schema.length) {
    db.transaction(() => {
      const from = version()
      if (from > schema.length) return
      for (const step of schema.slice(from)) db.exec(step)
      db.exec(`PRAGMA user_version = ${schema.length}`)
    }).immediate()
  }
  if (version() > schema.length)
    throw new StateError(`${path} was written by a newer Almanac (schema ${version()}, this one knows ${schema.length}).`)
  return db
}
