/**
 * A small authoritative DNS server over UDP on 127.0.0.1, for the email domain's tests and benchmark:
 * real DNS messages (RFC 1035 wire format) from a zone table, so the resolver under test speaks to a
 * real server. Names it does not know are NXDOMAIN; a `slow` name is never answered (the client must
 * time out); a `held` name is answered when the test calls `release()` (a slow resolver the test controls,
 * with no clock in it); every query is counted per name and type, so tests can see what the cache saved.
 * With `delayMs` every answer not held is held that long (a slow resolver, for bench/fairness.ts).
 *
 * Like a resolver that sees the internet, it knows the well-known names the email domain checks its
 * resolver against (DEFAULT_DNS_CHECK_NAMES, each with an address) unless the zones say otherwise or
 * `wellKnown: false`; with `nxdomainForAll` set (at start, or later through the property) it is a
 * resolver that answers NXDOMAIN to every question, as a filtered host's does.
 */
import { createSocket, type Socket } from 'node:dgram'
import { createServer, type Server, type Socket as NetSocket } from 'node:net'
import { DEFAULT_DNS_CHECK_NAMES } from '../../../src/domains/email/settings.ts'

export interface Zone {
  /** [preference, exchange]; exchange '' is the root, so [[0, '']] is a null MX (RFC 7505). */
  mx?: [number, string][]
  a?: string[]
  aaaa?: string[]
  ttl?: number
  /** Never answered. */
  slow?: boolean
  /** Answered (over UDP) only when the test calls `release()`. */
  held?: boolean
  /** Answered with SERVFAIL (rcode 2). */
  servfail?: boolean
  /** Answered with the query's id and question followed by bytes that are not records. */
  garbage?: boolean
  /** Over UDP: TC set and no records (too big); over TCP: the full answer. */
  truncate?: boolean
  /** A server from before EDNS: FORMERR to a query with an additional record (an OPT). */
  noEdns?: boolean
}

const TYPE = { A: 1, MX: 15, AAAA: 28 } as const
const TYPE_NAME = new Map<number, string>([
  [1, 'A'],
  [15, 'MX'],
  [28, 'AAAA'],
])

function encodeName(name: string): number[] {
  const out: number[] = []
  for (const label of name.split('.').filter(Boolean)) {
    const bytes = new TextEncoder().encode(label)
    out.push(bytes.length, ...bytes)
  }
  out.push(0)
  return out
}

function readName(msg: Buffer, offset: number): { name: string; end: number } {
  const labels: string[] = []
  let i = offset
  while (i < msg.length && msg[i]! > 0) {
    const len = msg[i]!
    labels.push(msg.subarray(i + 1, i + 1 + len).toString('latin1'))
    i += 1 + len
  }
  return { name: labels.join('.').toLowerCase(), end: i + 1 }
}

const u16 = (n: number) => [(n >> 8) & 0xff, n & 0xff]
const u32 = (n: number) => [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]

function v6Bytes(text: string): number[] {
  const [head, tail = ''] = text.split('::')
  const h = head ? head.split(':') : []
  const t = text.includes('::') && tail ? tail.split(':') : []
  const groups = [...h, ...Array(8 - h.length - t.length).fill('0'), ...t]
  return groups.flatMap((g) => u16(parseInt(g, 16)))
}

export interface DnsServer {
  /** `127.0.0.1:port`, for ALMANAC_EMAIL_DNS_SERVERS. */
  address: string
  port: number
  /** Queries received, by `name TYPE`. */
  queries: Map<string, number>
  zones: Map<string, Zone>
  /** Queries of `held` names waiting for `release()`. */
  readonly held: number
  /** Resolves once `n` queries are held (at once). */
  whenHeld(n: number): Promise<void>
  /** Answers every query held so far. */
  release(): void
  /** While true, every question is answered NXDOMAIN (and counted). */
  nxdomainForAll: boolean
  close(): Promise<void>
}

export async function startDnsServer(
  zones: Record<string, Zone>,
  { delayMs = 0, wellKnown = true, nxdomainForAll = false } = {},
): Promise<DnsServer> {
  const known = wellKnown ? DEFAULT_DNS_CHECK_NAMES.map((name, i): [string, Zone] => [name, { a: [`192.0.2.${200 + i}`] }]) : []
  const table = new Map([...known, ...Object.entries(zones).map(([k, v]): [string, Zone] => [k.toLowerCase(), v])])
  const state = { nxdomainForAll }
  const queries = new Map<string, number>()
  let socket: Socket
  let closed = false
  /** The answer to a query, or null for none; `tcp` answers in full what UDP truncates. */
  const answer = (msg: Buffer, tcp: boolean): Buffer | null => {
    if (msg.length < 12) return null
    const { name, end } = readName(msg, 12)
    const qtype = msg.readUInt16BE(end)
    const key = `${name} ${TYPE_NAME.get(qtype) ?? qtype}${tcp ? ' tcp' : ''}`
    queries.set(key, (queries.get(key) ?? 0) + 1)
    const zone = state.nxdomainForAll ? undefined : table.get(name)
    if (zone?.slow) return null
    if (zone?.noEdns && msg.readUInt16BE(10) > 0)
      return Buffer.from([...msg.subarray(0, 2), 0x84, 0x01, 0, 1, 0, 0, 0, 0, 0, 0, ...msg.subarray(12, end + 4)])
    if (zone?.garbage)
      return Buffer.from([
        ...msg.subarray(0, 2),
        0x84,
        0x00,
        0,
        1,
        0,
        5,
        0,
        0,
        0,
        0,
        ...msg.subarray(12, end + 4),
        0xc0,
        0xff,
        0xff,
        0x3f,
        1,
        2,
        3,
      ])
    const question = [...msg.subarray(12, end + 4)]
    const answers: number[][] = []
    const ttl = zone?.ttl ?? 300
    const rr = (type: number, rdata: number[]) => [0xc0, 0x0c, ...u16(type), ...u16(1), ...u32(ttl), ...u16(rdata.length), ...rdata]
    const truncated = !!zone?.truncate && !tcp
    if (zone && !zone.servfail && !truncated) {
      if (qtype === TYPE.MX) for (const [pref, host] of zone.mx ?? []) answers.push(rr(TYPE.MX, [...u16(pref), ...encodeName(host)]))
      if (qtype === TYPE.A) for (const ip of zone.a ?? []) answers.push(rr(TYPE.A, ip.split('.').map(Number)))
      if (qtype === TYPE.AAAA) for (const ip of zone.aaaa ?? []) answers.push(rr(TYPE.AAAA, v6Bytes(ip)))
    }
    const rcode = !zone ? 3 : zone.servfail ? 2 : 0
    const flags = 0x8400 | (truncated ? 0x0200 : 0) | (msg.readUInt16BE(2) & 0x0100) | 0x0080 | rcode
    return Buffer.from([
      ...msg.subarray(0, 2),
      ...u16(flags),
      ...u16(1),
      ...u16(answers.length),
      0,
      0,
      0,
      0,
      ...question,
      ...answers.flat(),
    ])
  }
  const held: (() => void)[] = []
  const heldWaiters: { n: number; resolve: () => void }[] = []
  const onMessage = (msg: Buffer, peer: { port: number; address: string }) => {
    const reply = answer(msg, false)
    if (!reply) return
    const send = () => closed || socket.send(reply, peer.port, peer.address)
    if (!state.nxdomainForAll && table.get(readName(msg, 12).name)?.held) {
      held.push(send)
      for (const w of heldWaiters.filter((w) => held.length >= w.n)) {
        heldWaiters.splice(heldWaiters.indexOf(w), 1)
        w.resolve()
      }
    } else if (delayMs > 0) setTimeout(send, delayMs).unref()
    else send()
  }
  const onConnection = (conn: NetSocket) => {
    let buffer = Buffer.alloc(0)
    conn.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk])
      if (buffer.length < 2 || buffer.length < 2 + buffer.readUInt16BE(0)) return
      const reply = answer(buffer.subarray(2, 2 + buffer.readUInt16BE(0)), true)
      if (!reply) return
      conn.end(Buffer.concat([Buffer.from(u16(reply.length)), reply]))
    })
    conn.on('error', () => {})
  }
  // UDP takes a free port and TCP the same one (RFC 7766 length-prefixed messages for truncated answers); another
  // process may hold that port over TCP, so a pair is tried again on a new port until both are bound.
  let tcp: Server
  let port = 0
  for (let attempt = 1; ; attempt++) {
    socket = createSocket('udp4')
    socket.on('message', onMessage)
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve))
    port = socket.address().port
    tcp = createServer(onConnection)
    try {
      await new Promise<void>((resolve, reject) => {
        tcp.once('error', reject)
        tcp.listen(port, '127.0.0.1', () => resolve())
      })
      break
    } catch (e) {
      await new Promise<void>((resolve) => socket.close(() => resolve()))
      if ((e as { code?: string }).code !== 'EADDRINUSE' || attempt === 20) throw e
    }
  }
  // Tests end by themselves: the sockets do not keep the process alive.
  socket.unref()
  tcp.unref()
  return {
    address: `127.0.0.1:${port}`,
    port,
    queries,
    zones: table,
    get held() {
      return held.length
    },
    whenHeld: (n) => (held.length >= n ? Promise.resolve() : new Promise<void>((resolve) => heldWaiters.push({ n, resolve }))),
    release: () => {
      for (const send of held.splice(0)) send()
    },
    get nxdomainForAll() {
      return state.nxdomainForAll
    },
    set nxdomainForAll(on) {
      state.nxdomainForAll = on
    },
    close: async () => {
      closed = true
      await new Promise<void>((resolve) => socket.close(() => resolve()))
      await new Promise<void>((resolve) => tcp.close(() => resolve()))
    },
  }
}
