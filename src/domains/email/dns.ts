/**
 * A stub DNS resolver client over UDP (RFC 1035 messages, EDNS0 for 1232-byte answers): asks the
 * configured recursive servers one question and returns the rcode, records with their TTLs and the
 * negative-caching TTL (RFC 2308: the SOA in the authority section).
 *
 * A truncated UDP answer (TC) is asked again over TCP (RFC 7766), and a FORMERR (a server that does not
 * know EDNS) again without the OPT record, within the same deadline.
 *
 * Why not `node:dns`'s Resolver: measured on Bun 1.4.5 against the loopback test server, it ignores its
 * `timeout` option (1 s per try whatever is asked), answers ENOTFOUND both for NXDOMAIN and for a name that
 * exists without the record type (so "the domain does not exist" and "it has no MX" cannot be told apart),
 * and gives no TTL for MX records. Each of those is an answer this domain must report honestly.
 */
import { createSocket } from 'node:dgram'
import { getServers } from 'node:dns'
import { connect, isIP } from 'node:net'

export const RR = { A: 1, CNAME: 5, SOA: 6, MX: 15, AAAA: 28, OPT: 41 } as const
export const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const

export interface DnsServer {
  host: string
  port: number
}

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

/** `host`, `host:port`, `[v6]` or `[v6]:port` -> server; throws naming the entry. */
export function parseServer(entry: string): DnsServer {
  const s = entry.trim()
  let host = s
  let port = 53
  const bracket = /^\[([^\]]+)\](?::(\d+))?$/.exec(s)
  if (bracket) {
    host = bracket[1]!
    if (bracket[2]) port = Number(bracket[2])
  } else if (s.split(':').length === 2) {
    ;[host, port] = [s.slice(0, s.indexOf(':')), Number(s.slice(s.indexOf(':') + 1))]
  }
  if (!isIP(host)) throw new Error(`${JSON.stringify(entry)} is not an IP address (host, host:port or [v6]:port)`)
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`${JSON.stringify(entry)} has no valid port`)
  return { host, port }
}

/** The system's resolvers, as `node:dns` read them from /etc/resolv.conf. */
export const systemServers = (): DnsServer[] => getServers().map(parseServer)

function encodeQuery(id: number, name: string, type: number, edns = true): Buffer {
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
    if (rtype === RR.MX && rdlength >= 3) records.push({ type: rtype, ttl, data: { preference: msg.readUInt16BE(rdata), exchange: readName(msg, rdata + 2).name } })
    else if (rtype === RR.A && rdlength === 4) records.push({ type: rtype, ttl, data: `${msg[rdata]}.${msg[rdata + 1]}.${msg[rdata + 2]}.${msg[rdata + 3]}` })
    else if (rtype === RR.AAAA && rdlength === 16) records.push({ type: rtype, ttl, data: formatV6(msg, rdata) })
    else records.push({ type: rtype, ttl, data: null })
  }
  return { rcode: flags & 0x0f, truncated: (flags & 0x0200) !== 0, records, negativeTtl }
}

/** One question to one server, answered within `ms` or rejected. */
function ask(server: DnsServer, name: string, type: number, ms: number, edns = true): Promise<DnsAnswer> {
  return new Promise((resolve, reject) => {
    // Unpredictable ids (with the OS's random source port): a blind spoofed answer must guess both.
    const id = crypto.getRandomValues(new Uint16Array(1))[0]!
    const socket = createSocket(isIP(server.host) === 6 ? 'udp6' : 'udp4')
    let done = false
    const finish = (err: Error | null, answer?: DnsAnswer) => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.close()
      if (err) reject(err)
      else resolve(answer!)
    }
    const timer = setTimeout(() => finish(new DnsError('timeout', `no answer from ${server.host}:${server.port} within ${ms} ms`)), ms)
    socket.on('error', (e) => finish(new DnsError('network', `${server.host}:${server.port}: ${(e as NodeJS.ErrnoException).code ?? e.message}`)))
    socket.on('message', (msg, peer) => {
      // Anything not from the server, or not the answer to our question, is ignored (spoofing, stale answers).
      if (peer.port !== server.port || peer.address.replace(/^::ffff:/, '') !== server.host) return
      try {
        finish(null, decodeAnswer(msg, id, name, type))
      } catch (e) {
        if (e instanceof DnsError && e.message.startsWith('answer id')) return
        finish(e as Error)
      }
    })
    socket.send(encodeQuery(id, name, type, edns), server.port, server.host, (e) => {
      if (e) finish(new DnsError('network', `${server.host}:${server.port}: ${(e as NodeJS.ErrnoException).code ?? e.message}`))
    })
  })
}

/** The largest DNS message over TCP (its 2-byte length prefix). */
const MAX_TCP_MESSAGE = 65535

/** One question to one server over TCP (RFC 7766: each message prefixed by its 2-byte length). */
function askTcp(server: DnsServer, name: string, type: number, ms: number): Promise<DnsAnswer> {
  return new Promise((resolve, reject) => {
    const id = crypto.getRandomValues(new Uint16Array(1))[0]!
    const query = encodeQuery(id, name, type)
    const socket = connect({ host: server.host, port: server.port })
    let buffer = Buffer.alloc(0)
    let done = false
    const finish = (err: Error | null, answer?: DnsAnswer) => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      if (err) reject(err)
      else resolve(answer!)
    }
    const timer = setTimeout(() => finish(new DnsError('timeout', `no TCP answer from ${server.host}:${server.port} within ${ms} ms`)), ms)
    socket.on('connect', () => {
      const length = Buffer.alloc(2)
      length.writeUInt16BE(query.length)
      socket.write(Buffer.concat([length, query]))
    })
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk])
      if (buffer.length > MAX_TCP_MESSAGE + 2) return finish(new DnsError('malformed', 'TCP answer longer than its length'))
      if (buffer.length < 2 || buffer.length < 2 + buffer.readUInt16BE(0)) return
      try {
        finish(null, decodeAnswer(buffer.subarray(2, 2 + buffer.readUInt16BE(0)), id, name, type))
      } catch (e) {
        finish(e as Error)
      }
    })
    socket.on('error', (e) => finish(new DnsError('network', `${server.host}:${server.port} (TCP): ${(e as NodeJS.ErrnoException).code ?? e.message}`)))
    socket.on('close', () => finish(new DnsError('network', `${server.host}:${server.port} (TCP) closed before answering`)))
  })
}

/**
 * Asks the servers in order until one answers (SERVFAIL and REFUSED move on to the next); the whole call
 * ends by `deadline` (a `performance.now()` time), each server getting an equal share of what is left.
 */
export async function query(servers: readonly DnsServer[], name: string, type: number, deadline: number): Promise<DnsAnswer> {
  let last: DnsAnswer | DnsError = new DnsError('network', 'no DNS server is configured')
  for (let i = 0; i < servers.length; i++) {
    const left = deadline - performance.now()
    if (left < 1) {
      if (last instanceof DnsError) throw new DnsError('timeout', 'the DNS deadline passed')
      return last
    }
    try {
      const share = Math.max(1, Math.floor(left / (servers.length - i)))
      const t0 = performance.now()
      let answer = await ask(servers[i]!, name, type, share)
      // A server that does not know EDNS (RFC 6891 §7) answers FORMERR: ask it again the RFC 1035 way.
      if (answer.rcode === RCODE.FORMERR) answer = await ask(servers[i]!, name, type, Math.max(1, Math.floor(share - (performance.now() - t0))), false)
      if (answer.truncated) answer = await askTcp(servers[i]!, name, type, Math.max(1, Math.floor(share - (performance.now() - t0))))
      if (answer.rcode !== RCODE.SERVFAIL && answer.rcode !== RCODE.REFUSED) return answer
      last = answer
    } catch (e) {
      if (!(e instanceof DnsError)) throw e
      last = e
    }
  }
  if (last instanceof DnsError) throw last
  return last
}
