/**
 * The POSIX tar (ustar) subset a data bundle needs: regular files, written and read front to back in one
 * pass, so a bundle of several hundred megabytes streams through a fixed amount of memory, and an
 * operator can list or unpack one with the system's `tar`. Each entry is a 512-byte header (name, size,
 * a checksum over the header) then the bytes, padded to 512; two zero blocks end the archive. A size of
 * 8 GiB or more is written in base-256, as GNU tar and libarchive read it.
 */

const BLOCK = 512

/** The archive is not one this reader takes (damaged, truncated, or another kind of entry). */
export class TarError extends Error {
  override name = 'TarError'
}

function field(header: Buffer, at: number, length: number, value: string) {
  const bytes = Buffer.from(value, 'utf8')
  if (bytes.length > length) throw new TarError(`${JSON.stringify(value)} does not fit a tar header field of ${length} bytes`)
  bytes.copy(header, at)
}

const octal = (n: number, length: number) => n.toString(8).padStart(length - 1, '0')

/** Where a name goes: `name` (100 bytes) or split at a `/` into `prefix` (155) and `name`. */
function splitName(name: string): [prefix: string, name: string] {
  if (Buffer.byteLength(name) <= 100) return ['', name]
  for (let i = name.indexOf('/'); i > 0; i = name.indexOf('/', i + 1)) {
    const [prefix, rest] = [name.slice(0, i), name.slice(i + 1)]
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(rest) <= 100) return [prefix, rest]
  }
  throw new TarError(`${name} is too long a name for a tar entry`)
}

/** The header of a regular file entry. */
export function tarHeader(name: string, size: number, mtime = new Date()): Buffer {
  const header = Buffer.alloc(BLOCK)
  const [prefix, rest] = splitName(name)
  field(header, 0, 100, rest)
  field(header, 100, 8, '0000644')
  field(header, 108, 8, '0000000')
  field(header, 116, 8, '0000000')
  if (size < 8 ** 11) field(header, 124, 12, octal(size, 12))
  else {
    // base-256: the first byte's high bit set, the number big-endian in the rest of the field.
    header[124] = 0x80
    header.writeBigUInt64BE(BigInt(size), 128)
  }
  field(header, 136, 12, octal(Math.floor(mtime.getTime() / 1000), 12))
  header[156] = 0x30 // '0': a regular file
  field(header, 257, 6, 'ustar')
  field(header, 263, 2, '00')
  field(header, 345, 155, prefix)
  header.fill(0x20, 148, 156)
  field(header, 148, 8, `${octal(checksum(header), 7)}\0`)
  return header
}

/** The zeros after an entry of `size` bytes, up to the next block. */
export const tarPadding = (size: number) => Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK)

/** The end of an archive: two zero blocks. */
export const tarEnd = () => Buffer.alloc(2 * BLOCK)

function checksum(header: Buffer): number {
  let sum = 0
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : header[i]!
  return sum
}

const text = (header: Buffer, at: number, length: number) => {
  const raw = header.subarray(at, at + length)
  const end = raw.indexOf(0)
  return raw.subarray(0, end < 0 ? length : end).toString('utf8')
}

function sizeOf(header: Buffer): number {
  if (header[124]! & 0x80) {
    const size = Number(header.readBigUInt64BE(128))
    if (header.subarray(125, 128).some((b) => b !== 0) || !Number.isSafeInteger(size)) throw new TarError('an entry is too large')
    return size
  }
  const digits = text(header, 124, 12).trim()
  if (!/^[0-7]+$/.test(digits)) throw new TarError('an entry header has no valid size (not a tar archive, or damaged)')
  return Number.parseInt(digits, 8)
}

export interface TarEntry {
  name: string
  size: number
}

/**
 * Reads a tar stream entry by entry: `next()` gives the next entry's header, `body()` its bytes as they
 * arrive; an entry's body is read (or skipped) before the next header.
 */
export class TarReader {
  private readonly chunks: AsyncIterator<Uint8Array>
  private buffer: Buffer = Buffer.alloc(0)
  /** Bytes of the current entry not read yet, and its padding. */
  private left = 0
  private padding = 0

  constructor(source: AsyncIterable<Uint8Array>) {
    this.chunks = source[Symbol.asyncIterator]()
  }

  private async more(): Promise<boolean> {
    const { value, done } = await this.chunks.next()
    if (done) return false
    const chunk = Buffer.from(value.buffer, value.byteOffset, value.byteLength)
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk
    return true
  }

  private async take(n: number): Promise<Buffer> {
    while (this.buffer.length < n) if (!(await this.more())) throw new TarError('the archive ends in the middle (truncated)')
    const out = this.buffer.subarray(0, n)
    this.buffer = this.buffer.subarray(n)
    return out
  }

  /** The next entry, or null at the end of the archive. */
  async next(): Promise<TarEntry | null> {
    for await (const _ of this.body()) {
      // The rest of an entry nobody read.
    }
    await this.take(this.padding)
    this.padding = 0
    const header = await this.take(BLOCK)
    if (header.every((b) => b === 0)) return null
    const stored = Number.parseInt(text(header, 148, 8).trim(), 8)
    if (stored !== checksum(header)) throw new TarError('an entry header fails its checksum (not a tar archive, or damaged)')
    const type = String.fromCharCode(header[156]!)
    const prefix = text(header, 345, 155)
    const name = (prefix ? `${prefix}/` : '') + text(header, 0, 100)
    if (type !== '0' && type !== '\0') throw new TarError(`${name} is not a regular file (tar entry type ${JSON.stringify(type)})`)
    const size = sizeOf(header)
    this.left = size
    this.padding = (BLOCK - (size % BLOCK)) % BLOCK
    return { name, size }
  }

  /** The current entry's bytes, chunk by chunk as they arrive. */
  async *body(): AsyncGenerator<Buffer> {
    while (this.left > 0) {
      if (!this.buffer.length && !(await this.more())) throw new TarError('the archive ends in the middle of an entry (truncated)')
      const n = Math.min(this.left, this.buffer.length)
      const out = this.buffer.subarray(0, n)
      this.buffer = this.buffer.subarray(n)
      this.left -= n
      yield out
    }
  }

  /** The current entry whole, when it is at most `max` bytes (a small JSON member). */
  async bytes(entry: TarEntry, max: number): Promise<Buffer> {
    if (entry.size > max) throw new TarError(`${entry.name} is ${entry.size} bytes; at most ${max} expected`)
    const parts: Buffer[] = []
    for await (const chunk of this.body()) parts.push(Buffer.from(chunk))
    return Buffer.concat(parts)
  }
}
