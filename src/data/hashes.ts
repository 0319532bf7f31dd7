/**
 * Content hashes of files and folders, remembered by (size, mtime, inode) so a second build does not
 * read a gigabyte again just to learn nothing changed, yet a touched-but-identical file is still
 * "unchanged" and a same-size edit with a forged mtime is the only thing that can fool it.
 */
import { createHash } from 'node:crypto'
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { dirname, join } from 'node:path'
import { Transform } from 'node:stream'

interface Entry {
  size: number
  mtimeMs: number
  ino: number
  sha256: string
}

const CHUNK = 4 * 1024 * 1024

/** sha256 of a file, read in chunks (never the whole file in memory). */
export function sha256File(path: string): string {
  const hash = createHash('sha256')
  const fd = openSync(path, 'r')
  try {
    const buf = Buffer.allocUnsafe(CHUNK)
    for (let n; (n = readSync(fd, buf, 0, CHUNK, null)) > 0; ) hash.update(n === CHUNK ? buf : buf.subarray(0, n))
  } finally {
    closeSync(fd)
  }
  return hash.digest('hex')
}

export class HashCache {
  private entries: Record<string, Entry> = {}
  private dirty = false

  constructor(private readonly file?: string) {
    if (file && existsSync(file)) {
      try {
        this.entries = JSON.parse(readFileSync(file, 'utf8'))
      } catch {
        this.entries = {}
      }
    }
  }

  /** sha256 of a file; of a folder, a hash over its sorted relative paths and their files' hashes. */
  of(path: string): string {
    const st = statSync(path)
    if (st.isDirectory()) {
      const hash = createHash('sha256')
      const walk = (dir: string, rel: string) => {
        for (const name of readdirSync(dir).sort()) {
          const p = join(dir, name)
          if (statSync(p).isDirectory()) walk(p, `${rel}${name}/`)
          else hash.update(`${rel}${name}\0${this.of(p)}\n`)
        }
      }
      walk(path, '')
      return hash.digest('hex')
    }
    const known = this.entries[path]
    if (known && known.size === st.size && known.mtimeMs === st.mtimeMs && known.ino === st.ino) return known.sha256
    const sha256 = sha256File(path)
    this.entries[path] = { size: st.size, mtimeMs: st.mtimeMs, ino: st.ino, sha256 }
    this.dirty = true
    return sha256
  }

  /** Carries a file's known hash over a rename (same inode and mtime), so it is not read again. */
  moved(from: string, to: string) {
    const known = this.entries[from]
    if (!known) return
    delete this.entries[from]
    this.entries[to] = known
    this.dirty = true
  }

  save() {
    if (!this.file || !this.dirty) return
    mkdirSync(dirname(this.file), { recursive: true })
    const tmp = `${this.file}.${process.pid}.tmp`
    writeFileSync(tmp, JSON.stringify(this.entries))
    renameSync(tmp, this.file)
    this.dirty = false
  }
}

/**
 * A pass-through stage that hashes (sha256) and counts what flows through it, for a pipeline that writes a
 * file and must know what it wrote; `seen` hears each chunk's length.
 */
export function hashingTap(seen?: (bytes: number) => void) {
  const hash = createHash('sha256')
  let bytes = 0
  const stream = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk)
      bytes += chunk.length
      seen?.(chunk.length)
      done(null, chunk)
    },
  })
  return {
    stream,
    get bytes() {
      return bytes
    },
    sha256: () => hash.digest('hex'),
  }
}
