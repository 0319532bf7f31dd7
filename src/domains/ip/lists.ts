/**
 * Anonymity lists: which networks are Tor exits, VPNs, hosting providers or public proxies. The built-in
 * lists come flattened in one range table (value = bitmask, one bit per list); operator lists (config
 * `ip.*ListFiles`) are parsed at start and again on `reload()` (SIGHUP), without a restart.
 */
import { readFileSync } from 'node:fs'
import { basename } from 'node:path'
import type { Config } from '../../config.ts'
import { findV4, findV6, flattenBitRanges, parseListText, type RangeTable, type RawRange } from '../../lib/ip-ranges.ts'

export type ListKind = 'tor' | 'vpn' | 'hosting' | 'proxy'

export interface ListLabel {
  bit: number
  kind: ListKind
  /** Named in `security.sources` when the list flags an address. */
  source: string
}

export interface ListSet {
  table: RangeTable
  labels: ListLabel[]
}

/** The built-in lists, in bit order; `files` are source ids of ./sources.ts. */
export const BUILTIN_LISTS: { source: string; kind: ListKind; files: string[] }[] = [
  { source: 'tor-exit-nodes', kind: 'tor', files: ['tor-exit-nodes'] },
  { source: 'x4bnet-vpn', kind: 'vpn', files: ['x4bnet-vpn-ipv4', 'x4bnet-vpn-ipv6'] },
  { source: 'x4bnet-datacenter', kind: 'hosting', files: ['x4bnet-datacenter-ipv4', 'x4bnet-datacenter-ipv6'] },
  { source: 'public-proxies-monosans', kind: 'proxy', files: ['public-proxies-monosans'] },
]

const OPERATOR_SETTINGS: { kind: ListKind; key: keyof Config['ip']; env: string }[] = [
  { kind: 'tor', key: 'torListFiles', env: 'ALMANAC_IP_TOR_LISTS' },
  { kind: 'vpn', key: 'vpnListFiles', env: 'ALMANAC_IP_VPN_LISTS' },
  { kind: 'hosting', key: 'hostingListFiles', env: 'ALMANAC_IP_HOSTING_LISTS' },
  { kind: 'proxy', key: 'proxyListFiles', env: 'ALMANAC_IP_PROXY_LISTS' },
]

/**
 * Reads the operator's list files. A missing or unreadable file throws (at start that disables the
 * domain with the reason; on reload the previous lists stay). Bad lines are skipped and reported.
 */
export function loadOperatorLists(ip: Config['ip']): { set: ListSet; warnings: string[] } {
  const v4: RawRange[] = []
  const v6: RawRange[] = []
  const labels: ListLabel[] = []
  const warnings: string[] = []
  for (const { kind, key, env } of OPERATOR_SETTINGS) {
    for (const path of (ip[key] as string[] | undefined) ?? []) {
      const bit = labels.length
      if (bit >= 32) throw new Error(`${env}: at most 32 operator list files in all are supported`)
      let text: string
      try {
        text = readFileSync(path, 'utf8')
      } catch (e) {
        throw new Error(`${env}: cannot read list file ${path} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`)
      }
      const parsed = parseListText(text, (1 << bit) >>> 0)
      if (parsed.bad.length)
        warnings.push(
          `${path}: ${parsed.bad.length} unreadable lines skipped ` +
            `(line ${parsed.bad[0]!.line}: ${JSON.stringify(parsed.bad[0]!.text)} ${parsed.bad[0]!.why})`,
        )
      v4.push(...parsed.v4)
      v6.push(...parsed.v6)
      labels.push({ bit, kind, source: `operator:${basename(path)}` })
    }
  }
  return { set: { table: flattenBitRanges(v4, v6), labels }, warnings }
}

export const listMaskV4 = (set: ListSet, ip: number) => {
  const v = findV4(set.table, ip)
  return v < 0 ? 0 : v
}

export const listMaskV6 = (set: ListSet, words: ArrayLike<number>) => {
  const v = findV6(set.table, words)
  return v < 0 ? 0 : v
}
