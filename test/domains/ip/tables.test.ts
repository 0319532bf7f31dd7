/**
 * The indexed searches against plain references: range tables (16-bit bucket index + binary search)
 * against a linear scan of the same ranges, and the special-purpose check (16-bit bucket table + word
 * comparisons) against CPython's `ipaddress` membership at every range's edges.
 */
import { describe, expect, test } from 'bun:test'
import { RESERVED_NETWORKS, reservedKind } from '../../../src/lib/ip-reserved.ts'
import { findV4, findV6, NOT_FOUND, tableFromRanges, type RawRange } from '../../../src/lib/ip-ranges.ts'
import { parseIp, type IpAddress } from '../../../src/lib/ip-address.ts'
import { pythonJson } from '../../support/python.ts'
import { rng } from '../../support/random.ts'

const MAX4 = 0xffffffffn
const MAX6 = (1n << 128n) - 1n
const words = (v: bigint) => [Number((v >> 96n) & MAX4), Number((v >> 64n) & MAX4), Number((v >> 32n) & MAX4), Number(v & MAX4)]

/** Disjoint random ranges over [0, max]: tiny ones, ones crossing 16-bit buckets, and both ends. */
function randomRanges(r: () => number, max: bigint, count: number): RawRange[] {
  const bits = max === MAX4 ? 32 : 128
  const rand = () => (BigInt(Math.floor(r() * 2 ** 32)) << BigInt(bits - 32)) | (bits > 32 ? BigInt(Math.floor(r() * 2 ** 32)) : 0n)
  const out: RawRange[] = [
    { start: 0n, end: 5n, value: 1 },
    { start: max - 3n, end: max, value: 2 },
  ]
  for (let i = 0; i < count; i++) {
    const start = rand() & max
    const span = r() < 0.3 ? 0n : r() < 0.5 ? BigInt(Math.floor(r() * 1000)) : 1n << BigInt(Math.floor(r() * (bits - 8)))
    out.push({ start, end: start + span > max ? max : start + span, value: i + 3 })
  }
  // Keep them disjoint (first wins), as the built tables are.
  out.sort((a, b) => (a.start < b.start ? -1 : 1))
  const kept: RawRange[] = []
  for (const x of out) if (!kept.length || x.start > kept[kept.length - 1]!.end) kept.push(x)
  return kept
}

const linear = (ranges: RawRange[], v: bigint) => ranges.find((x) => x.start <= v && v <= x.end)?.value ?? NOT_FOUND

describe('range tables', () => {
  test('bucketed search = linear scan, at every edge and at random addresses', () => {
    const r = rng(42)
    const v4 = randomRanges(r, MAX4, 3000)
    const v6 = randomRanges(r, MAX6, 3000)
    const table = tableFromRanges(
      v4.map((x) => ({ ...x })),
      v6.map((x) => ({ ...x })),
    )
    const probes = (ranges: RawRange[], max: bigint) => {
      const out: bigint[] = [0n, max]
      for (const x of ranges) out.push(x.start, x.end, x.start - 1n, x.end + 1n)
      for (let i = 0; i < 3000; i++) out.push(BigInt(Math.floor(r() * 2 ** 32)) * (max / MAX4))
      // bucket boundaries: the last address of a bucket and the first of the next
      for (let i = 0; i < 500; i++) {
        const b = BigInt(Math.floor(r() * 65536)) << (max === MAX4 ? 16n : 112n)
        out.push(b, b - 1n)
      }
      return out.filter((v) => v >= 0n && v <= max)
    }
    let checked = 0
    for (const v of probes(v4, MAX4)) {
      expect(findV4(table, Number(v))).toBe(linear(v4, v))
      checked++
    }
    for (const v of probes(v6, MAX6)) {
      expect(findV6(table, words(v))).toBe(linear(v6, v))
      checked++
    }
    expect(checked).toBeGreaterThan(20_000)
  })

  test('an empty table finds nothing', () => {
    const t = tableFromRanges([], [])
    expect(findV4(t, 0)).toBe(NOT_FOUND)
    expect(findV4(t, 0xffffffff)).toBe(NOT_FOUND)
    expect(findV6(t, [0, 0, 0, 0])).toBe(NOT_FOUND)
    expect(findV6(t, [0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff])).toBe(NOT_FOUND)
  })
})

// Reads [[cidr, kind]] on stdin; prints each network's edges and neighbours with the kind of the first
// network (in table order) holding them, or null.
const EDGES = `
import sys, json, ipaddress
nets = [(ipaddress.ip_network(c), k) for c, k in json.load(sys.stdin)]
out = []
for net, _ in nets:
    cls = type(net.network_address)
    top = 2 ** net.max_prefixlen - 1
    for v in (int(net.network_address), int(net.broadcast_address), int(net.network_address) - 1, int(net.broadcast_address) + 1,
              (int(net.network_address) + int(net.broadcast_address)) // 2):
        if 0 <= v <= top:
            a = cls(v)
            out.append([str(a), next((k for n, k in nets if a in n), None)])
print(json.dumps(out))
`

describe('special-purpose ranges', () => {
  test('every range edge and neighbour, as ipaddress places them', () => {
    const cases = pythonJson<[string, string | null][]>(EDGES, RESERVED_NETWORKS)
    expect(cases.length).toBeGreaterThan(RESERVED_NETWORKS.length * 4)
    for (const [text, kind] of cases) {
      const ip = parseIp(text) as IpAddress
      // ::ffff:0:0/96 is IPv4 here; ipaddress would print those as IPv6, none is a range edge.
      expect([text, reservedKind(ip)]).toEqual([text, kind as never])
    }
  })
})
