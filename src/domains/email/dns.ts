/**
 * A stub DNS resolver client (the messages: dns-message.ts): asks the configured recursive servers one
 * question over UDP and returns the rcode, records with their TTLs and the negative-caching TTL (RFC
 * 2308: the SOA in the authority section).
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
import { decodeAnswer, DnsError, encodeQuery, RCODE, type DnsAnswer } from './dns-message.ts'

export { DnsError, RCODE, RR, type DnsAnswer, type DnsRecord, type MxRecord } from './dns-message.ts'

export interface DnsServer {
  host: string
  port: number
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
    socket.on('error', (e) =>
      finish(new DnsError('network', `${server.host}:${server.port}: ${(e as NodeJS.ErrnoException).code ?? e.message}`)),
    )
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
    socket.on('error', (e) =>
      finish(new DnsError('network', `${server.host}:${server.port} (TCP): ${(e as NodeJS.ErrnoException).code ?? e.message}`)),
    )
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
      if (answer.rcode === RCODE.FORMERR)
        answer = await ask(servers[i]!, name, type, Math.max(1, Math.floor(share - (performance.now() - t0))), false)
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
