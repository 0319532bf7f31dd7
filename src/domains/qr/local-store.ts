/**
 * The local object store: one folder, objects named by content hash, each file's mtime holding the time
 * its newest link expires (so no index is needed: a later request for the same image only moves the
 * mtime forward). Writes go to a temporary name and are renamed into place, so a reader or a crash never
 * sees half a file. A sweeper deletes objects whose time has passed; a write that would take the folder
 * over `storeMaxBytes`, or that the disk refuses, is a 503 and leaves nothing behind.
 *
 * Links point at the download route outside /api/v1 (`download.ts`), signed by `signing.ts`.
 */
import { randomBytes } from 'node:crypto'
import { linkSync, mkdirSync, renameSync, statSync, unlinkSync, utimesSync, type Dir } from 'node:fs'
import { opendir, rename, unlink, utimes, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { AlmanacError } from '../../lib/errors.ts'
import type { Signer } from './signing.ts'
import type { ObjectStore, StoredObject } from './store.ts'

export const DOWNLOAD_PREFIX = '/files/qr/'

/** Objects and temporary files the store may hold; anything else in the folder is left alone. */
export const OBJECT_NAME = /^[0-9a-f]{64}\.(png|svg)$/
const TEMP_PREFIX = '.tmp-'
/** A temporary file this old was left by a crash mid-write. */
const TEMP_MAX_AGE_MS = 10 * 60 * 1000

const RETRY_SECONDS = 30
/** Files handled between two yields to the event loop during a sweep. */
const SWEEP_BATCH = 256

export interface SweepResult {
  deleted: number
  objects: number
  bytes: number
}

/** A store failure: 503 with a reason an operator can act on. */
const storeDown = (detail: string) => new AlmanacError('unavailable', detail, { headers: { 'Retry-After': String(RETRY_SECONDS) } })

export interface LocalStore extends ObjectStore {
  readonly dir: string
  /** Deletes expired objects and stale temporary files; resolves to what is left. */
  sweep(): Promise<SweepResult>
  /** Bytes the store believes it holds (last sweep plus writes since). */
  readonly bytes: number
}

export interface LocalStoreOptions {
  dir: string
  maxBytes: number
  signer: Signer
  /** Milliseconds since the epoch: what expiries are compared with; injected by tests. */
  now: () => number
  /** The file system's clock, for the age of temporary files (their ctime); injected by tests. */
  fsNow?: () => number
}

export function createLocalStore({ dir, maxBytes, signer, now, fsNow = Date.now }: LocalStoreOptions): LocalStore {
  let bytes = 0
  let counted = false
  let made = false

  const ensureDir = () => {
    if (made) return
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 })
    } catch (e) {
      throw storeDown(`The QR image store ${dir} cannot be created (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}).`)
    }
    made = true
  }

  /**
   * One pass over the folder. Entries are read in batches (`opendir`) and the loop yields every
   * SWEEP_BATCH files, so a folder of a million images never holds the event loop; each file's stat and
   * retirement stay back to back (synchronous), so no request in this process can refresh a file between
   * them, and `retire` catches other processes that do.
   */
  async function sweepOnce(): Promise<SweepResult> {
    const nowMs = now()
    let deleted = 0
    let objects = 0
    let total = 0
    let seen = 0
    let folder: Dir
    try {
      folder = await opendir(dir)
    } catch {
      counted = true
      bytes = 0
      return { deleted, objects, bytes }
    }
    for await (const entry of folder) {
      if (++seen % SWEEP_BATCH === 0) await new Promise((resolve) => setImmediate(resolve))
      const name = entry.name
      const path = join(dir, name)
      try {
        if (name.startsWith(TEMP_PREFIX)) {
          // A temp file's mtime is set to its expiry before the rename; its ctime says how old it is.
          const s = statSync(path)
          if (fsNow() - s.ctimeMs > TEMP_MAX_AGE_MS) unlinkSync(path), deleted++
          continue
        }
        if (!OBJECT_NAME.test(name)) continue
        const s = statSync(path)
        if (s.mtimeMs <= nowMs) {
          if (retire(path, nowMs)) deleted++
          else objects++, (total += s.size)
        } else {
          objects++
          total += s.size
        }
      } catch {
        // Gone already (another worker's sweep) or unreadable: the next sweep tries again.
      }
    }
    // Writes that finished during the pass were counted into `bytes` and may or may not have been seen:
    // the pass's own total is the truth for what it saw, and the next pass settles the rest.
    bytes = total
    counted = true
    return { deleted, objects, bytes }
  }

  /**
   * Deletes an expired object unless another process refreshed it at the same moment. The file is first
   * renamed aside (atomic), then its mtime read again: a `utimes` or a fresh write by another worker that
   * landed between our stat and the rename shows there, and the file is linked back (unless a newer copy
   * already took its name). Returns whether it was deleted.
   */
  function retire(path: string, nowMs: number): boolean {
    const aside = join(dir, `${TEMP_PREFIX}swept-${process.pid}-${randomBytes(6).toString('hex')}`)
    renameSync(path, aside)
    let kept = false
    if (statSync(aside).mtimeMs > nowMs) {
      try {
        linkSync(aside, path)
      } catch {
        // EEXIST: a newer copy of the same bytes is in place already.
      }
      kept = true
    }
    unlinkSync(aside)
    return !kept
  }

  /** One sweep at a time: a caller arriving during a pass shares its result. */
  let running: Promise<SweepResult> | undefined
  const sweep = () => (running ??= sweepOnce().finally(() => (running = undefined)))

  async function put(object: StoredObject, expires: number) {
    ensureDir()
    if (!counted) await sweep()
    const path = join(dir, object.name)
    try {
      const s = statSync(path)
      if (s.mtimeMs > now()) {
        // Stored already and not yet expired: only make it last as long as the newest link.
        if (s.mtimeMs < expires * 1000) utimesSync(path, expires, expires)
        return
      }
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code
      if (code !== 'ENOENT') throw storeDown(`The QR image store ${dir} cannot be read or updated (${code ?? (e as Error).message}).`)
    }
    if (bytes + object.bytes.length > maxBytes) {
      await sweep()
      if (bytes + object.bytes.length > maxBytes)
        throw storeDown(
          `The QR image store is full: it holds ${bytes} bytes and its limit is ${maxBytes} (ALMANAC_QR_STORE_MAX_BYTES); expired images ` +
            `are swept every few minutes.`,
        )
    }
    const temp = join(dir, `${TEMP_PREFIX}${process.pid}-${randomBytes(6).toString('hex')}`)
    try {
      await writeFile(temp, object.bytes, { mode: 0o600 })
      await utimes(temp, expires, expires)
      await rename(temp, path)
    } catch (e) {
      await unlink(temp).catch(() => {})
      const code = (e as NodeJS.ErrnoException).code
      const why = code === 'ENOSPC' || code === 'EDQUOT' ? 'the disk is full' : `it is not writable (${code ?? (e as Error).message})`
      throw storeDown(`The QR image store ${dir} cannot take the image: ${why}.`)
    }
    bytes += object.bytes.length
  }

  return {
    dir,
    // Our own links: any lifetime the SPEC allows.
    maxTtl: Number.MAX_SAFE_INTEGER,
    get bytes() {
      return bytes
    },
    put,
    sweep,
    link(name, expires, origin) {
      const path = DOWNLOAD_PREFIX + name
      return `${origin}${path}?expires=${expires}&signature=${signer.sign(path, expires)}`
    },
    close() {},
  }
}
