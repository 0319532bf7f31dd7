/**
 * Reader for compiled TZif files (RFC 8536), used at build time only. Reads the 64-bit (version 2+) data
 * block and the footer: the POSIX TZ string that governs instants after the last transition.
 */

export interface LocalTimeType {
  /** Seconds east of UTC. */
  offset: number
  isDst: boolean
  abbreviation: string
}

export interface TzifData {
  version: number
  /** Transition instants (seconds since the epoch, ascending). */
  times: number[]
  /** Index into `types` of the type in effect from each transition on. */
  indices: number[]
  types: LocalTimeType[]
  /** POSIX TZ string for instants after the last transition ('' when absent). */
  footer: string
}

const MAGIC = 0x545a6966 // "TZif"

interface Counts {
  isutcnt: number
  isstdcnt: number
  leapcnt: number
  timecnt: number
  typecnt: number
  charcnt: number
}

function header(view: DataView, at: number, file: string): { version: number; counts: Counts } {
  if (view.byteLength < at + 44 || view.getUint32(at) !== MAGIC) throw new Error(`${file}: not a TZif file`)
  const v = view.getUint8(at + 4)
  const version = v === 0 ? 1 : v - 0x30
  const c = (i: number) => view.getUint32(at + 20 + 4 * i)
  return { version, counts: { isutcnt: c(0), isstdcnt: c(1), leapcnt: c(2), timecnt: c(3), typecnt: c(4), charcnt: c(5) } }
}

const blockSize = (c: Counts, timeSize: number) =>
  c.timecnt * timeSize + c.timecnt + c.typecnt * 6 + c.charcnt + c.leapcnt * (timeSize + 4) + c.isstdcnt + c.isutcnt

export function parseTzif(bytes: Uint8Array, file = 'TZif'): TzifData {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const first = header(view, 0, file)
  if (first.version < 2) throw new Error(`${file}: TZif version 1 has no 64-bit data; tzdata too old`)
  const second = 44 + blockSize(first.counts, 4)
  const { counts } = header(view, second, file)
  if (counts.leapcnt) throw new Error(`${file}: carries leap seconds ("right/" zones are not supported)`)
  let p = second + 44
  const times: number[] = []
  for (let i = 0; i < counts.timecnt; i++, p += 8) times.push(Number(view.getBigInt64(p)))
  const indices: number[] = []
  for (let i = 0; i < counts.timecnt; i++, p++) indices.push(view.getUint8(p))
  const raw: { offset: number; isDst: boolean; abbrIndex: number }[] = []
  for (let i = 0; i < counts.typecnt; i++, p += 6)
    raw.push({ offset: view.getInt32(p), isDst: view.getUint8(p + 4) === 1, abbrIndex: view.getUint8(p + 5) })
  const chars = bytes.subarray(p, p + counts.charcnt)
  p += counts.charcnt + counts.isstdcnt + counts.isutcnt
  const abbr = (at: number) => {
    let end = at
    while (end < chars.length && chars[end] !== 0) end++
    return new TextDecoder().decode(chars.subarray(at, end))
  }
  const types = raw.map((t) => ({ offset: t.offset, isDst: t.isDst, abbreviation: abbr(t.abbrIndex) }))
  let footer = ''
  if (bytes[p] === 0x0a) {
    const end = bytes.indexOf(0x0a, p + 1)
    if (end > p) footer = new TextDecoder().decode(bytes.subarray(p + 1, end))
  }
  return { version: first.version, times, indices, types, footer }
}
