/**
 * IP lookups over the opened datasets: the address is parsed to numbers once, then the City tree, the
 * ASN table and the list table are searched without allocating; the parts of the answer that belong to a
 * network (place, network, security) are shared objects cached per data offset or bitmask, so a lookup
 * allocates only its own small record. Operator MaxMind databases, when configured, take precedence.
 */
import { closeSync, fstatSync, openSync, readFileSync, type Stats } from 'node:fs'
import { stat } from 'node:fs/promises'
import type { Config } from '../../config.ts'
import type { DataDir } from '../../data/types.ts'
import { invalid } from '../../lib/errors.ts'
import { parseIp, type IpAddress } from '../../lib/ip-address.ts'
import { ASN_ARTIFACT, CITY_ARTIFACT, LISTS_ARTIFACT } from './artifacts.ts'
import { GenerationalCache } from '../../lib/cache.ts'
import { CityReader, type Place } from './city.ts'
import { readContainer, readTable } from '../../lib/range-container.ts'
import { BUILTIN_LISTS, listMaskV4, listMaskV6, loadOperatorLists, type ListKind, type ListLabel, type ListSet } from './lists.ts'
import { MmdbReader, type MmdbMetadata } from './mmdb.ts'
import { findV4, findV6 } from '../../lib/ip-ranges.ts'
import { reservedKind, type ReservedKind } from '../../lib/ip-reserved.ts'

/** Shared per AS organisation (or operator record), frozen, in Form A's member order (used as is). */
export interface NetworkInfo {
  isp: string | null
  organization: string | null
  asn: number | null
  asn_organization: string | null
  connection_type: string | null
}

/** Shared per combination of flags, frozen, in Form A's member order (used as is). */
export interface Security {
  /** True when any flag below is; null when none is but one is unknown. */
  is_anonymous: boolean | null
  /** Null: unknown, the list that would say was not built in (see `unavailable_sources`); true stays true. */
  is_anonymous_vpn: boolean | null
  is_hosting_provider: boolean | null
  is_public_proxy: boolean | null
  is_residential_proxy: boolean
  is_tor_exit_node: boolean | null
  /** Which lists or databases flagged the address. */
  sources: string[]
  /** The built-in lists the dataset was built without, whose flags are therefore null unless set. */
  unavailable_sources: string[]
}

/** The canonical IP record; `present.ts` turns it into Form A or Form B. */
export interface IpRecord {
  ip: string
  ip_version: 4 | 6
  /** The special-purpose range of the address (private, loopback …), or null. */
  reserved: ReservedKind | null
  place: Place | null
  network: NetworkInfo | null
  security: Security
}

/** One failed item of a bulk request. */
export interface ItemError {
  ip: unknown
  error: { field: string; message: string }
}

export const isItemError = (x: IpRecord | ItemError): x is ItemError => 'error' in x

export interface IpService {
  /** Looks up one address given as text; throws an `invalid` error naming `field`. */
  lookup(input: string, field?: string): IpRecord
  lookupAddress(ip: IpAddress): IpRecord
  /** Each item answered on its own: a bad item is an ItemError in its place. */
  bulk(inputs: readonly unknown[], field?: string): (IpRecord | ItemError)[]
  /** Re-reads the operator's list files (SIGHUP). On failure the previous lists stay. */
  reload(): { ok: boolean; lists: number; messages: string[] }
  /**
   * The settings (`ALMANAC_IP_*_MMDB`) whose database file holds other bytes than when this service opened
   * it: its size, modification time or inode first, then its content. A file gone or unreadable counts as
   * changed: the domain is then opened again (refresh.ts), and that opening says what is wrong with it.
   */
  changedDatabases(): Promise<string[]>
  /** The operator's City database (`ALMANAC_IP_CITY_MMDB`) as opened; null when the bundled GeoLite2 City answers. */
  readonly operatorCity: OperatorCity | null
}

/** What the operator's City database says of itself (its metadata), as this service opened it. */
export interface OperatorCity {
  metadata: MmdbMetadata
}

interface IspRecord {
  asn: number | null
  asn_organization: string | null
  isp: string | null
  organization: string | null
}

interface AnonymousRecord {
  is_anonymous_vpn: boolean
  is_hosting_provider: boolean
  is_public_proxy: boolean
  is_residential_proxy: boolean
  is_tor_exit_node: boolean
}

const KIND_FLAG: Record<ListKind, keyof AnonymousRecord> = {
  tor: 'is_tor_exit_node',
  vpn: 'is_anonymous_vpn',
  hosting: 'is_hosting_provider',
  proxy: 'is_public_proxy',
}

const NO_FLAGS: Security = Object.freeze({
  is_anonymous: false,
  is_anonymous_vpn: false,
  is_hosting_provider: false,
  is_public_proxy: false,
  is_residential_proxy: false,
  is_tor_exit_node: false,
  sources: Object.freeze([]) as unknown as string[],
  unavailable_sources: Object.freeze([]) as unknown as string[],
}) as Security

/** Which file a path named when it was read: a later stat that differs sends the check to the bytes. */
type FileStamp = Pick<Stats, 'dev' | 'ino' | 'size' | 'mtimeMs'>
const stampOf = ({ dev, ino, size, mtimeMs }: Stats): FileStamp => ({ dev, ino, size, mtimeMs })
const sameStamp = (a: FileStamp, b: FileStamp) => a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs

/**
 * An operator's MaxMind database, decoded per data offset into what we need of it. Read whole into memory
 * (not mapped): the operator may rewrite the file in place, which would change a mapping under the reader.
 */
class OperatorDb<T> {
  private readonly cache = new GenerationalCache<number, T>(100_000)
  readonly reader: MmdbReader
  /** The file as it was read (the stat of the open descriptor, so of the very bytes read). */
  private stamp: FileStamp

  constructor(
    readonly path: string,
    readonly setting: string,
    private readonly convert: (raw: Record<string, unknown>) => T,
  ) {
    let bytes: Uint8Array
    try {
      const fd = openSync(path, 'r')
      try {
        this.stamp = stampOf(fstatSync(fd))
        bytes = readFileSync(fd)
      } finally {
        closeSync(fd)
      }
    } catch (e) {
      throw new Error(`${setting}: cannot read ${path} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`)
    }
    try {
      this.reader = new MmdbReader(bytes, path)
    } catch (e) {
      throw new Error(`${setting}: ${(e as Error).message}`)
    }
  }

  /** Whether the file at `path` now holds other bytes than those read (see IpService.changedDatabases). */
  async changed(): Promise<boolean> {
    let now: Stats
    let bytes: Uint8Array
    try {
      now = await stat(this.path)
      if (sameStamp(stampOf(now), this.stamp)) return false
      bytes = await Bun.file(this.path).bytes()
    } catch {
      return true
    }
    if (!this.reader.buf.equals(bytes)) return true
    // Touched, or copied over with the same bytes: nothing to reopen, and the next check stops at the stat.
    this.stamp = stampOf(now)
    return false
  }

  find(ip: IpAddress): T | null {
    const offset = ip.version === 4 ? this.reader.findV4(ip.v4) : this.reader.findV6(ip.v6!)
    if (!offset) return null
    let v = this.cache.get(offset)
    if (v === undefined) {
      const raw = this.reader.decodeValue(offset)
      v = this.convert(raw && typeof raw === 'object' ? (raw as Record<string, unknown>) : {})
      this.cache.set(offset, v)
    }
    return v
  }
}

const str = (v: unknown) => (typeof v === 'string' && v ? v : null)
const int = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null)

/** The City reader: over the operator's database when configured (`operator` is then its file), else the bundled one. */
function openCity(config: Config, data: DataDir): { city: CityReader; operator: OperatorDb<null> | null } {
  if (config.ip.cityMmdb) {
    const operator = new OperatorDb(config.ip.cityMmdb, 'ALMANAC_IP_CITY_MMDB', () => null)
    return { city: new CityReader(operator.reader), operator }
  }
  // Mapped, not read: the pages are shared between workers and only touched ones are loaded.
  return { city: new CityReader(new MmdbReader(Bun.mmap(data.path(CITY_ARTIFACT)), CITY_ARTIFACT)), operator: null }
}

/** The network answer of each AS organisation of the built ASN table, by its index, made on first use. */
function asnOrgNetworks(asnFile: ReturnType<typeof readContainer>): (i: number) => NetworkInfo {
  const orgAsn = asnFile.u32('orgAsn')
  const orgNames = new TextDecoder().decode(asnFile.bytes('orgNames')).split('\n')
  const orgNetworks: (NetworkInfo | undefined)[] = new Array(orgAsn.length)
  const orgNetwork = (i: number): NetworkInfo => {
    let n = orgNetworks[i]
    if (!n) {
      const name = orgNames[i] || null
      // ISP and organisation default to the AS organisation: the open data has nothing finer.
      n = orgNetworks[i] = Object.freeze({ isp: name, organization: name, asn: orgAsn[i]!, asn_organization: name, connection_type: null })
    }
    return n
  }
  return orgNetwork
}

/** The built ASN table and the network answer of each of its AS organisations. */
function openAsnTable(data: DataDir) {
  const asnFile = readContainer(data.path(ASN_ARTIFACT))
  return { asnTable: readTable(asnFile), orgNetwork: asnOrgNetworks(asnFile) }
}

/** The source named for flags MaxMind's Anonymous IP database gives. */
const ANONYMOUS_SOURCE = 'maxmind-anonymous-ip'

/** The operator's own MaxMind databases (ALMANAC_IP_*_MMDB), each null when not configured. */
function openOperatorDbs(ip: Config['ip']) {
  const asnDb = ip.asnMmdb
    ? new OperatorDb<NetworkInfo>(ip.asnMmdb, 'ALMANAC_IP_ASN_MMDB', (r) => {
        const org = str(r.autonomous_system_organization)
        return Object.freeze({
          isp: org,
          organization: org,
          asn: int(r.autonomous_system_number),
          asn_organization: org,
          connection_type: null,
        })
      })
    : null
  const ispDb = ip.ispMmdb
    ? new OperatorDb<IspRecord>(ip.ispMmdb, 'ALMANAC_IP_ISP_MMDB', (r) => ({
        asn: int(r.autonomous_system_number),
        asn_organization: str(r.autonomous_system_organization),
        isp: str(r.isp),
        organization: str(r.organization),
      }))
    : null
  const connectionDb = ip.connectionTypeMmdb
    ? new OperatorDb<string | null>(ip.connectionTypeMmdb, 'ALMANAC_IP_CONNECTION_TYPE_MMDB', (r) => str(r.connection_type))
    : null
  const anonymousDb = ip.anonymousIpMmdb
    ? new OperatorDb<AnonymousRecord>(ip.anonymousIpMmdb, 'ALMANAC_IP_ANONYMOUS_IP_MMDB', (r) => ({
        is_anonymous_vpn: r.is_anonymous_vpn === true,
        is_hosting_provider: r.is_hosting_provider === true,
        is_public_proxy: r.is_public_proxy === true,
        is_residential_proxy: r.is_residential_proxy === true,
        is_tor_exit_node: r.is_tor_exit_node === true,
      }))
    : null
  return { asnDb, ispDb, connectionDb, anonymousDb }
}

/** What the service says of the operator's databases: the City one's metadata, and which files changed. */
function operatorFiles(
  cityDb: OperatorDb<null> | null,
  all: (Pick<OperatorDb<unknown>, 'setting' | 'changed'> | null)[],
): Pick<IpService, 'operatorCity' | 'changedDatabases'> {
  const dbs = all.filter((db) => db !== null)
  return {
    operatorCity: cityDb && { metadata: cityDb.reader.metadata },
    async changedDatabases() {
      const changed = await Promise.all(dbs.map((db) => db.changed()))
      return dbs.filter((_, i) => changed[i]).map((db) => db.setting)
    },
  }
}

export function openIpService(config: Config, data: DataDir, log: (line: string) => void = () => {}): IpService {
  const { city, operator: cityDb } = openCity(config, data)

  const { asnTable, orgNetwork } = openAsnTable(data)

  const { asnDb, ispDb, connectionDb, anonymousDb } = openOperatorDbs(config.ip)

  const listsFile = readContainer(data.path(LISTS_ARTIFACT))
  const builtin: ListSet = { table: readTable(listsFile), labels: (listsFile.meta.labels as ListLabel[]) ?? [] }
  const first = loadOperatorLists(config.ip)
  for (const w of first.warnings) log(w)
  let operator: ListSet = first.set
  // Lists the dataset was built without (no mirror, no network): their flags are unknown, not false,
  // unless another complete source of that kind answers (the operator's own lists of the kind, MaxMind's
  // Anonymous IP database for every kind).
  const missingLists = BUILTIN_LISTS.filter((l) => ((listsFile.meta.unavailable as string[] | undefined) ?? []).includes(l.source))
  const unknownLists = () => (anonymousDb ? [] : missingLists.filter((l) => !operator.labels.some((o) => o.kind === l.kind)))
  let unknown = unknownLists()

  // Security answers are shared per combination of list bits (and operator-database record).
  const securityByMask: (Security | undefined)[] = new Array(1 << builtin.labels.length)
  const securityByKey = new GenerationalCache<string, Security>(10_000)
  const makeSecurity = (builtinMask: number, operatorMask: number, anon: AnonymousRecord | null): Security => {
    const s: Security = { ...NO_FLAGS, sources: [] as string[] }
    const apply = (labels: ListLabel[], mask: number) => {
      for (const l of labels) {
        if (!(mask & (1 << l.bit))) continue
        s[KIND_FLAG[l.kind]] = true
        if (!s.sources.includes(l.source)) s.sources.push(l.source)
      }
    }
    apply(builtin.labels, builtinMask)
    apply(operator.labels, operatorMask)
    if (anon) {
      let any = false
      for (const k of Object.keys(anon) as (keyof AnonymousRecord)[])
        if (anon[k]) {
          s[k] = true
          any = true
        }
      if (any) s.sources.push(ANONYMOUS_SOURCE)
    }
    // KIND_FLAG never names is_residential_proxy (no built-in list feeds it), so null fits every flag it names.
    for (const l of unknown) if (!s[KIND_FLAG[l.kind]]) (s as unknown as Record<string, boolean | null>)[KIND_FLAG[l.kind]] = null
    if (unknown.length) s.unavailable_sources = unknown.map((l) => l.source)
    const flags = [s.is_anonymous_vpn, s.is_hosting_provider, s.is_public_proxy, s.is_residential_proxy, s.is_tor_exit_node]
    s.is_anonymous = flags.includes(true) ? true : flags.includes(null) ? null : false
    // `sources` stays an ordinary array: JSC's JSON.stringify leaves its fast path on a frozen
    // non-empty array (4x slower for the whole response). Nothing writes to it.
    return Object.freeze(s) as Security
  }
  const security = (builtinMask: number, operatorMask: number, anon: AnonymousRecord | null): Security => {
    if (operatorMask === 0 && anon === null) {
      return (securityByMask[builtinMask] ??= makeSecurity(builtinMask, 0, null))
    }
    const key = `${builtinMask}|${operatorMask}|${anon ? Object.values(anon).map(Number).join('') : ''}`
    let s = securityByKey.get(key)
    if (!s) securityByKey.set(key, (s = makeSecurity(builtinMask, operatorMask, anon)))
    return s
  }

  const networkCache = new GenerationalCache<string, NetworkInfo>(100_000)
  const network = (ip: IpAddress): NetworkInfo | null => {
    let base: NetworkInfo | null = null
    if (asnDb) base = asnDb.find(ip)
    else {
      const i = ip.version === 4 ? findV4(asnTable, ip.v4) : findV6(asnTable, ip.v6!)
      if (i >= 0) base = orgNetwork(i)
    }
    if (!ispDb && !connectionDb) return base
    const isp = ispDb?.find(ip) ?? null
    const connection = connectionDb?.find(ip) ?? null
    if (!base && !isp && !connection) return null
    const merged: NetworkInfo = {
      isp: isp?.isp ?? base?.isp ?? null,
      organization: isp?.organization ?? base?.organization ?? null,
      asn: isp?.asn ?? base?.asn ?? null,
      asn_organization: isp?.asn_organization ?? base?.asn_organization ?? null,
      connection_type: connection,
    }
    const key = JSON.stringify(merged)
    const hit = networkCache.get(key)
    if (hit) return hit
    networkCache.set(key, Object.freeze(merged))
    return merged
  }

  const lookupAddress = (ip: IpAddress): IpRecord => {
    const reserved = reservedKind(ip)
    if (reserved) return { ip: ip.text, ip_version: ip.version, reserved, place: null, network: null, security: NO_FLAGS }
    let place: Place | null
    let mask: number
    let opMask = 0
    if (ip.version === 4) {
      place = city.findV4(ip.v4)
      mask = listMaskV4(builtin, ip.v4)
      if (operator.labels.length) opMask = listMaskV4(operator, ip.v4)
    } else {
      place = city.findV6(ip.v6!)
      mask = listMaskV6(builtin, ip.v6!)
      if (operator.labels.length) opMask = listMaskV6(operator, ip.v6!)
    }
    const anon = anonymousDb ? anonymousDb.find(ip) : null
    return { ip: ip.text, ip_version: ip.version, reserved: null, place, network: network(ip), security: security(mask, opMask, anon) }
  }

  const lookup = (input: string, field = 'ip'): IpRecord => {
    const ip = parseIp(input)
    if (typeof ip === 'string') throw invalid(field, `${JSON.stringify(input)} ${ip}`)
    return lookupAddress(ip)
  }

  return {
    lookup,
    lookupAddress,
    bulk(inputs, field = 'ips') {
      return inputs.map((input, i): IpRecord | ItemError => {
        if (typeof input !== 'string')
          return {
            ip: input ?? null,
            error: {
              field: `${field}.${i}`,
              message: `expected a string holding an IPv4 or IPv6 address, got ${input === null ? 'null' : typeof input}`,
            },
          }
        const ip = parseIp(input)
        if (typeof ip === 'string') return { ip: input, error: { field: `${field}.${i}`, message: `${JSON.stringify(input)} ${ip}` } }
        return lookupAddress(ip)
      })
    },
    ...operatorFiles(cityDb, [cityDb, asnDb, ispDb, connectionDb, anonymousDb]),
    reload() {
      try {
        const next = loadOperatorLists(config.ip)
        operator = next.set
        unknown = unknownLists()
        securityByKey.clear()
        securityByMask.fill(undefined)
        return { ok: true, lists: next.set.labels.length, messages: next.warnings }
      } catch (e) {
        return {
          ok: false,
          lists: operator.labels.length,
          messages: [`operator lists not reloaded, the previous ones stay: ${(e as Error).message}`],
        }
      }
    },
  }
}
