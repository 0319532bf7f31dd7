/**
 * How the ip service tells that an operator's MaxMind database file changed (what a reload reopens the
 * domain on): its stat first, then its bytes; a touch or the same bytes copied over is no change, other
 * bytes or a missing file is. And what a damaged file is refused for, naming the setting.
 */
import { expect, test } from 'bun:test'
import { copyFileSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig } from '../../../src/config.ts'
import { openDataDir } from '../../../src/data/open.ts'
import { openIpService } from '../../../src/domains/ip/service.ts'
import { MIRROR } from '../../support/mirror.ts'
import { tempDirs } from '../../support/temp.ts'

const TEST_DATA = `${MIRROR}/maxmind-test/test-data`
const data = openDataDir()
const tempDir = tempDirs('almanac-ip-operator-files-')
const open = (env: Record<string, string>) => openIpService(loadConfig({ env }), data)

test('a City and an ASN database: changed when their bytes are, not when only their stat is', async () => {
  const dir = tempDir()
  const city = join(dir, 'city.mmdb')
  const asn = join(dir, 'asn.mmdb')
  copyFileSync(`${TEST_DATA}/GeoIP2-City-Test.mmdb`, city)
  copyFileSync(`${TEST_DATA}/GeoLite2-ASN-Test.mmdb`, asn)
  const s = open({ ALMANAC_IP_CITY_MMDB: city, ALMANAC_IP_ASN_MMDB: asn })
  expect(s.operatorCity).toMatchObject({ metadata: { database_type: 'GeoIP2-City' } })
  expect(await s.changedDatabases()).toEqual([])

  // Touched, then the same bytes copied over (a new inode): no change, twice (the stat is taken in).
  const later = new Date(Date.now() + 60_000)
  utimesSync(city, later, later)
  writeFileSync(`${asn}.new`, readFileSync(asn))
  renameSync(`${asn}.new`, asn)
  expect(await s.changedDatabases()).toEqual([])
  expect(await s.changedDatabases()).toEqual([])

  // Other bytes of the same size, written in place: a change.
  const bytes = readFileSync(city)
  bytes[100] = bytes[100]! ^ 0xff
  writeFileSync(city, bytes)
  expect(await s.changedDatabases()).toEqual(['ALMANAC_IP_CITY_MMDB'])

  rmSync(asn)
  expect(await s.changedDatabases()).toEqual(['ALMANAC_IP_CITY_MMDB', 'ALMANAC_IP_ASN_MMDB'])
})

test('without operator databases nothing is watched and the bundled GeoLite2 City is what answers', async () => {
  const s = open({})
  expect(s.operatorCity).toBeNull()
  expect(await s.changedDatabases()).toEqual([])
})

test('a damaged database is refused, naming the setting: truncated, metadata alone, a broken separator', () => {
  const dir = tempDir()
  const bytes = readFileSync(`${TEST_DATA}/GeoIP2-City-Test.mmdb`)
  const refused = (name: string, content: Uint8Array) => {
    const path = join(dir, name)
    writeFileSync(path, content)
    return () => open({ ALMANAC_IP_CITY_MMDB: path })
  }
  expect(refused('head.mmdb', bytes.subarray(0, bytes.length / 2))).toThrow(/^ALMANAC_IP_CITY_MMDB: .*head\.mmdb is not a MaxMind DB file/)
  // The metadata of a City database with most of its tree cut away.
  expect(refused('tail.mmdb', bytes.subarray(bytes.length - 2000))).toThrow(
    /ALMANAC_IP_CITY_MMDB: .*tail\.mmdb is not a whole MaxMind DB file/,
  )
  // The 16 zero bytes between the tree and the data overwritten.
  const treeSize = ((28 * 2) / 8) * 1547
  const broken = Buffer.from(bytes)
  broken.fill(0xff, treeSize, treeSize + 16)
  expect(refused('separator.mmdb', broken)).toThrow(/not a whole MaxMind DB file \(no data section separator/)
})
