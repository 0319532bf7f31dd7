/**
 * Reading the files inside a ZIP archive as streams, with nothing but node:zlib: the central directory
 * at the end of the file says where each entry starts and how it is compressed (stored or deflate),
 * and the entry is inflated while it is read, so a 400 MB allCountries.txt never sits in memory.
 */
import { closeSync, createReadStream, fstatSync, openSync, readSync } from 'node:fs'
import { Readable } from 'node:stream'
import { createInflateRaw } from 'node:zlib'

export interface ZipEntry {
  name: string
  method: number
  compressedSize: number
  size: number
  localHeaderOffset: number
}

const EOCD = 0x06054b50
const ZIP64_EOCD_LOCATOR = 0x07064b50
const ZIP64_EOCD = 0x06064b50
const CENTRAL = 0x02014b50
const LOCAL = 0x04034b50

function readAt(fd: number, position: number, length: number): Buffer {
  const buf = Buffer.alloc(length)
  let done = 0
  while (done < length) {
    const n = readSync(fd, buf, done, length - done, position + done)
    if (n <= 0) throw new Error(`unexpected end of file at byte ${position + done}`)
    done += n
  }
  return buf
}

/** The entries of a ZIP file, from its central directory (ZIP64 included). */
export function zipEntries(path: string): ZipEntry[] {
  const fd = openSync(path, 'r')
  try {
    const size = fstatSync(fd).size
    const tailLength = Math.min(size, 22 + 0xffff)
    const tail = readAt(fd, size - tailLength, tailLength)
    let eocd = -1
    for (let i = tail.length - 22; i >= 0; i--)
      if (tail.readUInt32LE(i) === EOCD) {
        eocd = i
        break
      }
    if (eocd < 0) throw new Error(`${path} is not a ZIP file (no end-of-central-directory record)`)
    let count = tail.readUInt16LE(eocd + 10)
    let cdSize = tail.readUInt32LE(eocd + 12)
    let cdOffset = tail.readUInt32LE(eocd + 16)
    if ((count === 0xffff || cdOffset === 0xffffffff) && eocd >= 20 && tail.readUInt32LE(eocd - 20) === ZIP64_EOCD_LOCATOR) {
      const z64 = readAt(fd, Number(tail.readBigUInt64LE(eocd - 20 + 8)), 56)
      if (z64.readUInt32LE(0) !== ZIP64_EOCD) throw new Error(`${path}: broken ZIP64 end-of-central-directory record`)
      count = Number(z64.readBigUInt64LE(32))
      cdSize = Number(z64.readBigUInt64LE(40))
      cdOffset = Number(z64.readBigUInt64LE(48))
    }
    const cd = readAt(fd, cdOffset, cdSize)
    const entries: ZipEntry[] = []
    for (let p = 0, i = 0; i < count; i++) {
      if (cd.readUInt32LE(p) !== CENTRAL) throw new Error(`${path}: broken central directory at entry ${i}`)
      const nameLength = cd.readUInt16LE(p + 28)
      const extraLength = cd.readUInt16LE(p + 30)
      const commentLength = cd.readUInt16LE(p + 32)
      const entry: ZipEntry = {
        name: cd.toString('utf8', p + 46, p + 46 + nameLength),
        method: cd.readUInt16LE(p + 10),
        compressedSize: cd.readUInt32LE(p + 20),
        size: cd.readUInt32LE(p + 24),
        localHeaderOffset: cd.readUInt32LE(p + 42),
      }
      // ZIP64 extra field (id 1) holds the 64-bit values whose 32-bit slots are all ones, in this order.
      for (let e = p + 46 + nameLength, end = e + extraLength; e + 4 <= end; ) {
        const id = cd.readUInt16LE(e)
        const len = cd.readUInt16LE(e + 2)
        if (id === 1) {
          let q = e + 4
          const next = () => Number(cd.readBigUInt64LE((q += 8) - 8))
          if (entry.size === 0xffffffff) entry.size = next()
          if (entry.compressedSize === 0xffffffff) entry.compressedSize = next()
          if (entry.localHeaderOffset === 0xffffffff) entry.localHeaderOffset = next()
        }
        e += 4 + len
      }
      entries.push(entry)
      p += 46 + nameLength + extraLength + commentLength
    }
    return entries
  } finally {
    closeSync(fd)
  }
}

/** The uncompressed bytes of one entry, as a stream. */
export function openZipEntry(path: string, entry: ZipEntry): Readable {
  const fd = openSync(path, 'r')
  let local: Buffer
  try {
    local = readAt(fd, entry.localHeaderOffset, 30)
  } finally {
    closeSync(fd)
  }
  if (local.readUInt32LE(0) !== LOCAL) throw new Error(`${path}: entry ${entry.name} has no local header`)
  const start = entry.localHeaderOffset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28)
  if (entry.compressedSize === 0) return Readable.from([])
  const raw = createReadStream(path, { start, end: start + entry.compressedSize - 1, highWaterMark: 1 << 20 })
  if (entry.method === 0) return raw
  if (entry.method !== 8)
    throw new Error(`${path}: entry ${entry.name} uses compression method ${entry.method}; only stored (0) and deflate (8) are supported`)
  const inflate = createInflateRaw({ chunkSize: 1 << 20 })
  raw.on('error', (e) => inflate.destroy(e))
  return raw.pipe(inflate)
}
