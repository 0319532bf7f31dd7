/**
 * A CrossWire SWORD zText module, read with node:zlib alone. The module zip holds `mods.d/<name>.conf`
 * and, per testament, three files: `.bzs` (12 bytes per compressed block: offset, compressed size,
 * uncompressed size), `.bzv` (10 bytes per verse slot: block number, offset in the inflated block, size)
 * and `.bzz` (the zlib blocks). Slot numbers follow the module's versification (versification.ts).
 */
import { inflateSync } from 'node:zlib'
import { openZipEntry, zipEntries } from '../../lib/zip.ts'
import { loadVersification, slotsOf, type Slot } from './versification.ts'

export interface SwordModule {
  name: string
  conf: Map<string, string>
  /** Raw verse markup (OSIS or GBF) of every slot with text, in slot order per testament (OT, then NT). */
  verses: (Slot & { raw: string })[]
  /** Raw markup of each book's heading slot that has any (OSIS id -> markup): where a module titles its books. */
  headings: Map<string, string>
}

async function readEntry(zip: string, entry: ReturnType<typeof zipEntries>[number]): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of openZipEntry(zip, entry)) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

export function parseConf(text: string): { name: string; conf: Map<string, string> } {
  const conf = new Map<string, string>()
  let name = ''
  for (const line of text.split(/\r?\n/)) {
    const section = /^\[(.+)\]\s*$/.exec(line)
    if (section) name = section[1]!
    const kv = /^([A-Za-z0-9_.]+)=(.*)$/.exec(line)
    if (kv && !conf.has(kv[1]!)) conf.set(kv[1]!, kv[2]!.trim())
  }
  return { name, conf }
}

/** Inflated blocks of one testament, on demand (a book's block is read for each of its verses). */
function testamentReader(bzs: Buffer, bzz: Buffer) {
  const cache = new Map<number, Buffer>()
  return (block: number): Buffer => {
    let data = cache.get(block)
    if (!data) {
      const at = block * 12
      if (at + 12 > bzs.length) throw new Error(`block ${block} beyond the block index`)
      const offset = bzs.readUInt32LE(at)
      const size = bzs.readUInt32LE(at + 4)
      data = inflateSync(bzz.subarray(offset, offset + size))
      cache.clear() // blocks are read in order: keep one
      cache.set(block, data)
    }
    return data
  }
}

/** Reads every verse of a zText module zip. */
export async function readSwordModule(zip: string, versificationDir: string): Promise<SwordModule> {
  const entries = zipEntries(zip)
  const confEntry = entries.find((e) => /^mods\.d\/[^/]+\.conf$/i.test(e.name))
  if (!confEntry) throw new Error(`${zip}: no mods.d/*.conf`)
  const { name, conf } = parseConf((await readEntry(zip, confEntry)).toString('utf8'))
  if (conf.get('ModDrv')?.toLowerCase() !== 'ztext') throw new Error(`${zip}: ModDrv ${conf.get('ModDrv')} is not zText`)
  if ((conf.get('CompressType') ?? 'ZIP').toUpperCase() !== 'ZIP')
    throw new Error(`${zip}: CompressType ${conf.get('CompressType')} is not ZIP`)
  if (conf.get('CipherKey')) throw new Error(`${zip}: module is enciphered`)
  const latin1 = (conf.get('Encoding') ?? 'Latin-1').toUpperCase() !== 'UTF-8'
  const v11n = loadVersification(versificationDir, conf.get('Versification') ?? 'KJV')
  const dataPath = (conf.get('DataPath') ?? '').replace(/^\.\//, '').replace(/\/?$/, '/')
  const file = async (suffix: string) => {
    const e = entries.find((x) => x.name === dataPath + suffix)
    return e ? readEntry(zip, e) : undefined
  }
  const verses: SwordModule['verses'] = []
  const headings = new Map<string, string>()
  for (const [t, books] of [
    ['ot', v11n.ot],
    ['nt', v11n.nt],
  ] as const) {
    const [bzs, bzv, bzz] = [await file(`${t}.bzs`), await file(`${t}.bzv`), await file(`${t}.bzz`)]
    if (!bzs || !bzv || !bzz) continue // a testament the module does not have
    const slots = slotsOf(books)
    const block = testamentReader(bzs, bzz)
    const count = Math.min(slots.length, Math.floor(bzv.length / 10))
    const entry = (i: number): string | undefined => {
      const at = i * 10
      const size = i < count ? bzv.readUInt16LE(at + 8) : 0
      if (!size) return undefined
      const data = block(bzv.readUInt32LE(at))
      const start = bzv.readUInt32LE(at + 4)
      const bytes = data.subarray(start, start + size)
      // libsword trims trailing white space from an entry; so do we.
      return (latin1 ? bytes.toString('latin1') : bytes.toString('utf8')).trimEnd()
    }
    // A book's heading slot is the one before its first chapter's heading (slotsOf's layout).
    let at = 2
    for (const b of books) {
      const raw = entry(at)
      if (raw) headings.set(b.osis, raw)
      at += 1 + b.chapters.reduce((n, verses) => n + verses + 1, 0)
    }
    for (let i = 0; i < count; i++) {
      const slot = slots[i]
      if (!slot) continue
      const raw = entry(i)
      if (raw !== undefined) verses.push({ ...slot, raw })
    }
  }
  return { name, conf, verses, headings }
}
