/**
 * The file format of the ip domain's table artifacts: a JSON header (names, offsets, metadata) followed
 * by raw little-endian u32 and byte sections, each 8-byte aligned, so opening is a few typed-array views
 * over one read of the file — no parsing of the data itself.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { rangeTable, type RangeTable } from './ip-ranges.ts'

const MAGIC = 'ALMIPT01'

export interface Container {
  meta: Record<string, unknown>
  u32(name: string): Uint32Array
  bytes(name: string): Uint8Array
}

const align8 = (n: number) => (n + 7) & ~7

export function writeContainer(path: string, meta: Record<string, unknown>, sections: Record<string, Uint32Array | Uint8Array>) {
  const entries = Object.entries(sections)
  const layout: Record<string, { offset: number; length: number; kind: 'u32' | 'bytes' }> = {}
  let headerJson = ''
  // The header's own length moves the sections; settle it by iterating until stable.
  let dataStart = 0
  for (let pass = 0; pass < 4; pass++) {
    let offset = dataStart
    for (const [name, arr] of entries) {
      layout[name] = {
        offset,
        length: arr instanceof Uint32Array ? arr.length : arr.byteLength,
        kind: arr instanceof Uint32Array ? 'u32' : 'bytes',
      }
      offset = align8(offset + arr.byteLength)
    }
    headerJson = JSON.stringify({ meta, sections: layout, littleEndian: true })
    const next = align8(12 + Buffer.byteLength(headerJson))
    if (next === dataStart) break
    dataStart = next
  }
  const total = Math.max(dataStart, ...entries.map(([name, arr]) => align8(layout[name]!.offset + arr.byteLength)))
  const out = new Uint8Array(total)
  out.set(new TextEncoder().encode(MAGIC), 0)
  new DataView(out.buffer).setUint32(8, Buffer.byteLength(headerJson), true)
  out.set(new TextEncoder().encode(headerJson), 12)
  for (const [name, arr] of entries) out.set(new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength), layout[name]!.offset)
  writeFileSync(path, out)
}

export function readContainer(path: string): Container {
  if (new Uint8Array(new Uint32Array([1]).buffer)[0] !== 1)
    throw new Error(`${path}: this machine is big-endian; the ip tables are little-endian`)
  const file = readFileSync(path)
  // Copy into a fresh, aligned buffer: Node may hand back a pooled slice at an odd offset.
  const buf = new Uint8Array(file.byteLength)
  buf.set(file)
  if (new TextDecoder().decode(buf.subarray(0, 8)) !== MAGIC) throw new Error(`${path} is not an ip table file (bad magic)`)
  const headerLength = new DataView(buf.buffer).getUint32(8, true)
  const header = JSON.parse(new TextDecoder().decode(buf.subarray(12, 12 + headerLength))) as {
    meta: Record<string, unknown>
    sections: Record<string, { offset: number; length: number; kind: 'u32' | 'bytes' }>
  }
  const section = (name: string, kind: 'u32' | 'bytes') => {
    const s = header.sections[name]
    if (!s || s.kind !== kind) throw new Error(`${path}: section ${name} is missing`)
    return s
  }
  return {
    meta: header.meta,
    u32: (name) => {
      const s = section(name, 'u32')
      return new Uint32Array(buf.buffer, s.offset, s.length)
    },
    bytes: (name) => {
      const s = section(name, 'bytes')
      return buf.subarray(s.offset, s.offset + s.length)
    },
  }
}

export const tableSections = (t: RangeTable, prefix = ''): Record<string, Uint32Array> => ({
  [`${prefix}v4Start`]: t.v4Start,
  [`${prefix}v4End`]: t.v4End,
  [`${prefix}v4Value`]: t.v4Value,
  [`${prefix}v6Start`]: t.v6Start,
  [`${prefix}v6End`]: t.v6End,
  [`${prefix}v6Value`]: t.v6Value,
})

export const readTable = (c: Container, prefix = ''): RangeTable =>
  rangeTable(
    c.u32(`${prefix}v4Start`),
    c.u32(`${prefix}v4End`),
    c.u32(`${prefix}v4Value`),
    c.u32(`${prefix}v6Start`),
    c.u32(`${prefix}v6End`),
    c.u32(`${prefix}v6Value`),
  )
