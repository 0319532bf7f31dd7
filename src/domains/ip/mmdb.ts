/**
 * A small MaxMind DB (format 2.x) reader over a byte buffer: the search tree walked on numeric addresses
 * (no string parsing, no allocation) and a generic data decoder. `city.ts` adds a decoder that reads only
 * the fields the IP record needs; this file is the format itself.
 * Format: https://maxmind.github.io/MaxMind-DB/
 */

const METADATA_MARKER = [0xab, 0xcd, 0xef, ...new TextEncoder().encode('MaxMind.com')]

export interface MmdbMetadata {
  node_count: number
  record_size: number
  ip_version: number
  database_type: string
  languages?: string[]
  build_epoch: number
  binary_format_major_version: number
  description?: Record<string, string>
}

/** Buffer's native UTF-8 slicer (present in Node and Bun, missing from @types/node). */
export type ByteBuffer = Buffer & { utf8Slice(start: number, end: number): string }

/** Bytes as a Buffer view (no copy), for its native UTF-8 slicing. */
const asBuffer = (bytes: Uint8Array) =>
  (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)) as ByteBuffer

export class MmdbReader {
  readonly buf: ByteBuffer
  readonly metadata: MmdbMetadata
  readonly nodeCount: number
  readonly recordSize: number
  /** Absolute offset of the data section (pointers are relative to it). */
  dataStart: number
  private readonly treeSize: number
  private readonly ipv4Start: number
  /**
   * The tree walked ahead for every value of the first 16 bits (IPv4 and IPv6): the node reached, or
   * the record where the walk ended early, and the depth. Halves the steps of a lookup.
   */
  private readonly v4Jump = new Uint32Array(65536)
  private readonly v4JumpDepth = new Uint8Array(65536)
  private readonly v6Jump = new Uint32Array(65536)
  private readonly v6JumpDepth = new Uint8Array(65536)
  /** Position after the last decoded value. */
  pos = 0

  constructor(
    bytes: Uint8Array,
    readonly name = 'mmdb',
  ) {
    this.buf = asBuffer(bytes)
    const start = findMetadata(this.buf)
    if (start < 0) throw new Error(`${name} is not a MaxMind DB file (no metadata marker)`)
    // Pointers inside the metadata are relative to the metadata section itself.
    this.dataStart = start
    const meta = this.decodeValue(start) as MmdbMetadata
    if (meta.binary_format_major_version !== 2)
      throw new Error(`${name}: MaxMind DB format ${meta.binary_format_major_version} is not supported (2.x is)`)
    if (![24, 28, 32].includes(meta.record_size)) throw new Error(`${name}: record size ${meta.record_size} is not supported`)
    this.metadata = meta
    this.nodeCount = meta.node_count
    this.recordSize = meta.record_size
    this.treeSize = ((meta.record_size * 2) / 8) * meta.node_count
    this.dataStart = this.treeSize + 16
    // The tree and the 16 zero bytes after it must lie before the metadata: a truncated or damaged file
    // (half written, another file's metadata) is refused here rather than read past its end.
    const metadataStart = start - METADATA_MARKER.length
    if (!Number.isInteger(meta.node_count) || meta.node_count <= 0 || this.dataStart > metadataStart)
      throw new Error(`${name} is not a whole MaxMind DB file (its search tree does not fit before its metadata)`)
    for (let i = this.treeSize; i < this.dataStart; i++)
      if (this.buf[i] !== 0) throw new Error(`${name} is not a whole MaxMind DB file (no data section separator after its search tree)`)
    let node = 0
    if (meta.ip_version === 6) for (let i = 0; i < 96 && node < this.nodeCount; i++) node = this.record(node, 0)
    this.ipv4Start = node
    this.fillJumps(this.ipv4Start, this.v4Jump, this.v4JumpDepth)
    if (meta.ip_version === 6) this.fillJumps(0, this.v6Jump, this.v6JumpDepth)
  }

  private fillJumps(root: number, jump: Uint32Array, depth: Uint8Array) {
    // Breadth-first over the first 16 levels; a subtree that ends early fills its whole span.
    const walk = (node: number, level: number, prefix: number) => {
      if (node >= this.nodeCount || level === 16) {
        const span = 1 << (16 - level)
        const start = prefix << (16 - level)
        jump.fill(node, start, start + span)
        depth.fill(level, start, start + span)
        return
      }
      walk(this.record(node, 0), level + 1, prefix * 2)
      walk(this.record(node, 1), level + 1, prefix * 2 + 1)
    }
    walk(root, 0, 0)
  }

  /** One of the two records of a node (`bit` 0 left, 1 right). */
  record(node: number, bit: number): number {
    const b = this.buf
    if (this.recordSize === 28) {
      const p = node * 7
      return bit === 0
        ? ((b[p + 3]! & 0xf0) << 20) | (b[p]! << 16) | (b[p + 1]! << 8) | b[p + 2]!
        : ((b[p + 3]! & 0x0f) << 24) | (b[p + 4]! << 16) | (b[p + 5]! << 8) | b[p + 6]!
    }
    if (this.recordSize === 24) {
      const p = node * 6 + bit * 3
      return (b[p]! << 16) | (b[p + 1]! << 8) | b[p + 2]!
    }
    const p = node * 8 + bit * 4
    return ((b[p]! << 24) | (b[p + 1]! << 16) | (b[p + 2]! << 8) | b[p + 3]!) >>> 0
  }

  /** Absolute data offset for an IPv4 address (u32), or 0 when the tree has no record for it. */
  findV4(ip: number): number {
    const top = ip >>> 16
    let node = this.v4Jump[top]!
    const count = this.nodeCount
    let i = this.v4JumpDepth[top]!
    if (this.recordSize === 28) {
      const b = this.buf
      for (; i < 32 && node < count; i++) {
        const p = node * 7
        node =
          ((ip >>> (31 - i)) & 1) === 0
            ? ((b[p + 3]! & 0xf0) << 20) | (b[p]! << 16) | (b[p + 1]! << 8) | b[p + 2]!
            : ((b[p + 3]! & 0x0f) << 24) | (b[p + 4]! << 16) | (b[p + 5]! << 8) | b[p + 6]!
      }
    } else {
      for (; i < 32 && node < count; i++) node = this.record(node, (ip >>> (31 - i)) & 1)
    }
    return this.resolve(node)
  }

  /** Absolute data offset for an IPv6 address (four u32 words), or 0. */
  findV6(words: ArrayLike<number>): number {
    if (this.metadata.ip_version === 4) return 0
    const top = words[0]! >>> 16
    let node = this.v6Jump[top]!
    const count = this.nodeCount
    let i = this.v6JumpDepth[top]!
    if (this.recordSize === 28) {
      // GeoLite2/GeoIP2 use 28-bit records: read them inline, as findV4 does (twice as fast as record()).
      const b = this.buf
      for (; i < 128 && node < count; i++) {
        const p = node * 7
        node =
          ((words[i >>> 5]! >>> (31 - (i & 31))) & 1) === 0
            ? ((b[p + 3]! & 0xf0) << 20) | (b[p]! << 16) | (b[p + 1]! << 8) | b[p + 2]!
            : ((b[p + 3]! & 0x0f) << 24) | (b[p + 4]! << 16) | (b[p + 5]! << 8) | b[p + 6]!
      }
    } else {
      for (; i < 128 && node < count; i++) node = this.record(node, (words[i >>> 5]! >>> (31 - (i & 31))) & 1)
    }
    return this.resolve(node)
  }

  private resolve(node: number): number {
    if (node <= this.nodeCount) return 0 // == node count: no data; < node count: a malformed tree
    return this.treeSize + (node - this.nodeCount)
  }

  /** Decodes the value at an absolute offset into plain JS values (maps as objects). */
  decodeValue(offset: number): unknown {
    this.pos = offset
    return this.value()
  }

  /** Reads a control byte at `pos`; sets `pos` past it and its size bytes; returns type and size. */
  header(): { type: number; size: number } {
    const b = this.buf
    let p = this.pos
    const ctrl = b[p++]!
    let type = ctrl >> 5
    if (type === 1) {
      this.pos = p
      return { type, size: ctrl & 0x1f }
    }
    if (type === 0) type = 7 + b[p++]!
    let size = ctrl & 0x1f
    if (size >= 29) {
      if (size === 29) size = 29 + b[p++]!
      else if (size === 30) {
        size = 285 + ((b[p]! << 8) | b[p + 1]!)
        p += 2
      } else {
        size = 65821 + ((b[p]! << 16) | (b[p + 1]! << 8) | b[p + 2]!)
        p += 3
      }
    }
    this.pos = p
    return { type, size }
  }

  /** Whether the value at the cursor is a pointer. */
  atPointer(): boolean {
    return this.buf[this.pos]! >> 5 === 1
  }

  /** Reads, with `read`, the value the pointer at the cursor points to; leaves the cursor after the pointer. */
  pointed<T>(read: () => T): T {
    const ctrl = this.buf[this.pos++]!
    const target = this.pointer(ctrl)
    const after = this.pos
    this.pos = target
    const value = read()
    this.pos = after
    return value
  }

  /** Target (absolute offset) of a pointer whose control byte was `ctrl`; `pos` is after the control byte. */
  pointer(ctrl: number): number {
    const b = this.buf
    const p = this.pos
    const ss = (ctrl >> 3) & 3
    const v = ctrl & 7
    let ptr: number
    if (ss === 0) {
      ptr = (v << 8) | b[p]!
      this.pos = p + 1
    } else if (ss === 1) {
      ptr = ((v << 16) | (b[p]! << 8) | b[p + 1]!) + 2048
      this.pos = p + 2
    } else if (ss === 2) {
      ptr = ((v << 24) | (b[p]! << 16) | (b[p + 1]! << 8) | b[p + 2]!) + 526336
      this.pos = p + 3
    } else {
      ptr = ((b[p]! << 24) | (b[p + 1]! << 16) | (b[p + 2]! << 8) | b[p + 3]!) >>> 0
      this.pos = p + 4
    }
    return this.dataStart + ptr
  }

  uint(p: number, size: number): number {
    let v = 0
    for (let i = 0; i < size; i++) v = v * 256 + this.buf[p + i]!
    return v
  }

  private value(): unknown {
    if (this.atPointer()) return this.pointed(() => this.value())
    const b = this.buf
    const { type, size } = this.header()
    const p = this.pos
    switch (type) {
      case 2:
        this.pos = p + size
        return b.utf8Slice(p, p + size)
      case 3:
        this.pos = p + 8
        return b.readDoubleBE(p)
      case 4:
        this.pos = p + size
        return new Uint8Array(b.subarray(p, p + size))
      case 5:
      case 6:
      case 9:
      case 10: {
        this.pos = p + size
        if (size <= 6) return this.uint(p, size)
        let v = 0n
        for (let i = 0; i < size; i++) v = (v << 8n) | BigInt(b[p + i]!)
        return v
      }
      case 7: {
        const out: Record<string, unknown> = {}
        for (let i = 0; i < size; i++) {
          const key = this.value() as string
          out[key] = this.value()
        }
        return out
      }
      case 8: {
        this.pos = p + size
        const u = this.uint(p, size)
        return size === 4 ? u | 0 : u
      }
      case 11: {
        const out: unknown[] = []
        for (let i = 0; i < size; i++) out.push(this.value())
        return out
      }
      case 14:
        return size !== 0
      case 15:
        this.pos = p + 4
        return b.readFloatBE(p)
      default:
        throw new Error(`${this.name}: unsupported data type ${type} at offset ${p}`)
    }
  }

  /** Moves `pos` past the value at `pos` without building it. */
  skip(): void {
    const ctrl = this.buf[this.pos]!
    if (ctrl >> 5 === 1) {
      this.pos++
      this.pointer(ctrl)
      return
    }
    const { type, size } = this.header()
    switch (type) {
      case 7:
        for (let i = 0; i < size * 2; i++) this.skip()
        return
      case 11:
        for (let i = 0; i < size; i++) this.skip()
        return
      case 3:
        this.pos += 8
        return
      case 15:
        this.pos += 4
        return
      case 14:
        return
      default:
        this.pos += size
    }
  }
}

function findMetadata(buf: Uint8Array): number {
  const marker = METADATA_MARKER
  // The metadata is in the last 128 KiB of the file.
  const stop = Math.max(0, buf.length - 128 * 1024)
  outer: for (let i = buf.length - marker.length; i >= stop; i--) {
    for (let j = 0; j < marker.length; j++) if (buf[i + j] !== marker[j]) continue outer
    return i + marker.length
  }
  return -1
}
