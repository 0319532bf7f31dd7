/**
 * DNS messages (RFC 1035 wire format): a query for one name and type, with an EDNS0 OPT record (RFC 6891)
 * asking for answers up to 1,232 bytes, and the answer read back into records with their TTLs. Reading
 * is bounded: names at most 255 octets and 64 compression jumps, every length checked against the
 * message; anything else is a DnsError('malformed').
 */

export const RR = { A: 1, CNAME: 5, SOA: 6, MX: 15, AAAA: 28, OPT: 41 } as const
export const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const

export interface MxRecord {
  preference: number
  /** '' is the root: a lone `0 .` MX is a null MX (RFC 7505). */
  exchange: string
}

export interface DnsRecord {
  type: number
  ttl: number
  /** MX: MxRecord; A/AAAA: the address text; other types: null. */
  data: MxRecord | string | null
}

export interface DnsAnswer {
  rcode: number
  truncated: boolean
  records: DnsRecord[]
  /** RFC 2308 negative-caching TTL (min of the SOA's TTL and MINIMUM), when an SOA came back. */
  negativeTtl: number | null
}

export class DnsError extends Error {
  constructor(
    /** `timeout`: no answer in time; `network`: the server could not be reached; `malformed`: an unreadable answer. */
    readonly code: 'timeout' | 'network' | 'malformed',
    message: string,
  ) {
    super(message)
    this.name = 'DnsError'
  }
}

export function encodeQuery(id: number, name: string, type: number, edns = true): Buffer {
  const labels = name.split('.').filter(Boolean)
  const length = 12 + labels.reduce((n, l) => n + 1 + l.length, 1) + 4 + (edns ? 11 : 0)
  const b = Buffer.alloc(length)
  b.writeUInt16BE(id, 0)
  b.writeUInt16BE(0x0100, 2) // RD: the server recurses for us
  b.writeUInt16BE(1, 4) // QDCOUNT
  if (edns) b.writeUInt16BE(1, 10) // ARCOUNT: the EDNS0 OPT record
  let at = 12
  for (const l of labels) {
    b[at++] = l.length
    at += b.write(l, at, 'latin1')
  }
  b[at++] = 0
  b.writeUInt16BE(type, at)
  b.writeUInt16BE(1, at + 2) // IN
  at += 4
  if (!edns) return b
  // OPT: root name, type 41, UDP payload 1232 (the DNS flag day 2020 size), no flags, no options.
  b[at++] = 0
  b.writeUInt16BE(RR.OPT, at)
  b.writeUInt16BE(1232, at + 2)
  return b
}

/** Reads a (possibly compressed) name; bounded by 255 octets and 64 pointer jumps. */
function readName(msg: Buffer, offset: number): { name: string; end: number } {
  const labels: string[] = []
  let at = offset
  let end = -1
  let octets = 0
  for (let jumps = 0; ; ) {
    if (at >= msg.length) throw new DnsError('malformed', 'name runs past the message')
    const len = msg[at]!
    if (len === 0) {
      if (end < 0) end = at + 1
      break
    }
    if ((len & 0xc0) === 0xc0) {
      if (at + 1 >= msg.length || ++jumps > 64) throw new DnsError('malformed', 'bad compression pointer')
      if (end < 0) end = at + 2
      at = ((len & 0x3f) << 8) | msg[at + 1]!
      continue
    }
    if (len > 63 || at + 1 + len > msg.length) throw new DnsError('malformed', 'bad label')
    octets += len + 1
    if (octets > 255) throw new DnsError('malformed', 'name longer than 255 octets')
    labels.push(msg.toString('latin1', at + 1, at + 1 + len).toLowerCase())
    at += 1 + len
  }
  return { name: labels.join('.'), end }
}

function formatV6(b: Buffer, at: number): string {
  const groups: string[] = []
  for (let i = 0; i < 16; i += 2) groups.push(b.readUInt16BE(at + i).toString(16))
  return groups.join(':')
}

/** Parses an answer to the question (id, name, type); throws DnsError('malformed') when it is not one. */
export function decodeAnswer(msg: Buffer, id: number, name: string, type: number): DnsAnswer {
  if (msg.length < 12) throw new DnsError('malformed', 'answer shorter than a header')
  if (msg.readUInt16BE(0) !== id) throw new DnsError('malformed', 'answer id does not match')
  const flags = msg.readUInt16BE(2)
  if (!(flags & 0x8000)) throw new DnsError('malformed', 'not a response')
  const qd = msg.readUInt16BE(4)
  const an = msg.readUInt16BE(6)
  const ns = msg.readUInt16BE(8)
  let at = 12
  if (qd !== 1) throw new DnsError('malformed', 'answer does not hold exactly one question')
  const q = readName(msg, at)
  if (q.name !== name.toLowerCase() || msg.readUInt16BE(q.end) !== type) throw new DnsError('malformed', 'answer is for another question')
  at = q.end + 4
  const records: DnsRecord[] = []
  let negativeTtl: number | null = null
  for (let i = 0; i < an + ns; i++) {
    const owner = readName(msg, at)
    at = owner.end
    if (at + 10 > msg.length) throw new DnsError('malformed', 'record runs past the message')
    const rtype = msg.readUInt16BE(at)
    const ttl = msg.readUInt32BE(at + 4)
    const rdlength = msg.readUInt16BE(at + 8)
    const rdata = at + 10
    at = rdata + rdlength
    if (at > msg.length) throw new DnsError('malformed', 'record data runs past the message')
    if (i >= an) {
      if (rtype === RR.SOA) {
        const mname = readName(msg, rdata)
        const rname = readName(msg, mname.end)
        if (rname.end + 20 > at) throw new DnsError('malformed', 'short SOA')
        negativeTtl = Math.min(ttl, msg.readUInt32BE(rname.end + 16))
      }
      continue
    }
    if (rtype === RR.MX && rdlength >= 3)
      records.push({ type: rtype, ttl, data: { preference: msg.readUInt16BE(rdata), exchange: readName(msg, rdata + 2).name } })
    else if (rtype === RR.A && rdlength === 4)
      records.push({ type: rtype, ttl, data: `${msg[rdata]}.${msg[rdata + 1]}.${msg[rdata + 2]}.${msg[rdata + 3]}` })
    else if (rtype === RR.AAAA && rdlength === 16) records.push({ type: rtype, ttl, data: formatV6(msg, rdata) })
    else records.push({ type: rtype, ttl, data: null })
  }
  return { rcode: flags & 0x0f, truncated: (flags & 0x0200) !== 0, records, negativeTtl }
}
