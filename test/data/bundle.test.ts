/**
 * Data bundles in process, on small data directories made here: the tar container both ways, a pack
 * unpacked into a new directory with every artifact checked, a partial bundle completed from the data
 * in service by hard links, and every refusal (an altered byte anywhere, a truncated file, an unsigned or
 * wrongly signed bundle when a key is set) leaving nothing behind. Then the state dir's record of
 * activations (previous, rollback, clean-up) and the one rule choosing the data a server serves.
 */
import { describe, expect, test } from 'bun:test'
import { createHash, generateKeyPairSync } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import {
  activatedDir,
  bundlesDir,
  previousData,
  recordActivated,
  recordRollback,
  removeUnreachableBundles,
} from '../../src/data/activation.ts'
import {
  BundleError,
  HEADER_MEMBER,
  keyId,
  type PackSource,
  packBundle,
  publicKeyFrom,
  SIGNATURE_MEMBER,
  unpackBundle,
} from '../../src/data/bundle.ts'
import { registerEmbeddedData } from '../../src/data/embedded.ts'
import { dataSource, readManifest, SOURCE_OUT_DIR } from '../../src/data/open.ts'
import { tarEnd, tarHeader, tarPadding, TarReader } from '../../src/data/tar.ts'
import type { Manifest } from '../../src/data/types.ts'
import { verifyDataDir } from '../../src/data/verify.ts'
import { tempDirs } from '../support/temp.ts'

const tempDir = tempDirs('almanac-bundle-')
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex')

/** A data directory of datasets `a` (a.bin, 200 KiB of varied bytes) and `b` (b/b.txt), version `v`. */
function dataDir(dir: string, v: string, content = 'one'): string {
  mkdirSync(join(dir, 'b'), { recursive: true })
  const a = Buffer.alloc(200 * 1024)
  for (let i = 0; i < a.length; i++) a[i] = (i * 31 + content.length) % 251
  const b = Buffer.from(`dataset b, ${content}\n`)
  writeFileSync(join(dir, 'a.bin'), a)
  writeFileSync(join(dir, 'b', 'b.txt'), b)
  const entry = (id: string, name: string, bytes: Buffer) => ({
    id,
    version: `${id}-${v}`,
    artifacts: [{ name, bytes: bytes.length, sha256: sha(bytes) }],
  })
  const manifest = { generated: v, datasets: { a: entry('a', 'a.bin', a), b: entry('b', 'b/b.txt', b) } }
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest))
  return dir
}

const sourceOf = (dir: string): PackSource => ({
  dir,
  manifest: readManifest(dir),
  read: (name) => Readable.from([readFileSync(join(dir, name))]),
})

const pack = (dir: string, out: string, options: Partial<Parameters<typeof packBundle>[1]> = {}) =>
  packBundle(sourceOf(dir), { out, appVersion: 'test', ...options })

/** What is left in a bundles folder besides finished directories: nothing, after a refusal. */
const leftovers = (into: string) => (existsSync(into) ? readdirSync(into).filter((n) => n.startsWith('.')) : [])

describe('the tar container', () => {
  test('entries round-trip, a long name through the prefix field, and the system tar lists them', async () => {
    const long = `${'folder/'.repeat(20)}file.bin`
    const body = Buffer.from('x'.repeat(1000))
    const chunks = [
      tarHeader('a.txt', 3),
      Buffer.from('abc'),
      tarPadding(3),
      tarHeader(long, body.length),
      body,
      tarPadding(body.length),
      tarEnd(),
    ]
    const reader = new TarReader(Readable.from(chunks))
    const first = await reader.next()
    expect(first).toEqual({ name: 'a.txt', size: 3 })
    expect((await reader.bytes(first!, 10)).toString()).toBe('abc')
    // An entry nobody reads is skipped.
    expect(await reader.next()).toEqual({ name: long, size: 1000 })
    expect(await reader.next()).toBeNull()
    const file = join(tempDir(), 'x.tar')
    writeFileSync(file, Buffer.concat(chunks))
    const listed = Bun.spawnSync(['tar', '-tf', file]).stdout.toString().trim().split('\n')
    expect(listed).toEqual(['a.txt', long])
  })

  test('a size of 8 GiB or more is written in base-256 and read back', async () => {
    const size = 9 * 2 ** 30
    const reader = new TarReader(Readable.from([tarHeader('big', size)]))
    expect(await reader.next()).toEqual({ name: 'big', size })
  })

  test('a header with a wrong checksum, or a stream that stops, is refused', async () => {
    const header = tarHeader('a.txt', 3)
    header[0] = 'b'.charCodeAt(0)
    await expect(new TarReader(Readable.from([header])).next()).rejects.toThrow('checksum')
    const cut = new TarReader(Readable.from([tarHeader('a.txt', 3000), Buffer.alloc(100)]))
    await cut.next()
    await expect(cut.next()).rejects.toThrow('truncated')
  })
})

describe('pack and unpack', () => {
  test('a full bundle unpacks into a new directory, every artifact checked, the manifest whole', async () => {
    const dir = dataDir(join(tempDir(), 'data'), '1')
    const out = join(tempDir(), 'full.almanac')
    const packed = await pack(dir, out)
    expect(packed.header).toMatchObject({ format: 'almanac-data-bundle', version: 1, datasets: ['a', 'b'], partial: false, artifacts: 2 })
    expect(packed.sha256).toBe(sha(readFileSync(out)))
    expect(readdirSync(join(out, '..'))).toEqual(['full.almanac'])
    const into = join(tempDir(), 'state', 'data')
    const unpacked = await unpackBundle({ file: out, into })
    expect(unpacked.dir.startsWith(into)).toBe(true)
    expect(readManifest(unpacked.dir)).toEqual(readManifest(dir))
    expect(readFileSync(join(unpacked.dir, 'b', 'b.txt'))).toEqual(readFileSync(join(dir, 'b', 'b.txt')))
    expect((await verifyDataDir(unpacked.dir)).problems).toEqual([])
    expect(leftovers(into)).toEqual([])
  })

  test('the bundle is zstd-compressed tar the system tar can list; --no-compress is plain tar', async () => {
    const dir = dataDir(join(tempDir(), 'data'), '1')
    const out = join(tempDir(), 'b.almanac')
    await pack(dir, out)
    expect(readFileSync(out).readUInt32LE(0)).toBe(0xfd2fb528)
    await pack(dir, `${out}.tar`, { compress: false })
    const listed = Bun.spawnSync(['tar', '-tf', `${out}.tar`])
      .stdout.toString()
      .trim()
      .split('\n')
    expect(listed).toEqual([HEADER_MEMBER, 'manifest.json', 'a.bin', 'b/b.txt'])
  })

  test('a partial bundle is completed from the data in service by hard links, and checked', async () => {
    const served = dataDir(join(tempDir(), 'served'), '1')
    const next = dataDir(join(tempDir(), 'next'), '2', 'two')
    const out = join(tempDir(), 'partial.almanac')
    const packed = await pack(next, out, { only: ['b'] })
    expect(packed.header).toMatchObject({ datasets: ['b'], partial: true })
    const into = join(tempDir(), 'data')
    const unpacked = await unpackBundle({ file: out, into, served: async () => served })
    expect(unpacked.completed).toEqual(['a'])
    const manifest = readManifest(unpacked.dir)
    expect([manifest.datasets.a?.version, manifest.datasets.b?.version]).toEqual(['a-1', 'b-2'])
    expect(statSync(join(unpacked.dir, 'a.bin')).ino).toBe(statSync(join(served, 'a.bin')).ino)
    expect(readFileSync(join(unpacked.dir, 'b', 'b.txt'), 'utf8')).toBe('dataset b, two\n')
    // Nothing in service to complete it from: refused.
    await expect(unpackBundle({ file: out, into, served: async () => undefined })).rejects.toThrow('the bundle is partial (b)')
    expect(leftovers(into)).toEqual([])
  })

  test('one byte changed in an artifact, the manifest or the compressed stream: refused, nothing left', async () => {
    const dir = dataDir(join(tempDir(), 'data'), '1')
    const into = join(tempDir(), 'data-in')
    const plain = join(tempDir(), 'plain.almanac')
    await pack(dir, plain, { compress: false })
    const bytes = readFileSync(plain)
    const flip = (at: number) => {
      const copy = Buffer.from(bytes)
      copy[at] = copy[at]! ^ 0xff
      const file = join(tempDir(), 'tampered.almanac')
      writeFileSync(file, copy)
      return file
    }
    // Inside a.bin's bytes (its header is followed by 200 KiB of content).
    const inArtifact = bytes.indexOf(Buffer.from('a.bin')) + 512 + 1000
    await expect(unpackBundle({ file: flip(inArtifact), into })).rejects.toThrow(
      "artifact a.bin of dataset a does not match its sha256 in the bundle's manifest",
    )
    const inManifest = bytes.indexOf(Buffer.from('"generated"'))
    await expect(unpackBundle({ file: flip(inManifest), into })).rejects.toThrow('manifest.json does not match the sha256')
    const compressed = join(tempDir(), 'z.almanac')
    await pack(dir, compressed)
    const z = readFileSync(compressed)
    z[Math.floor(z.length / 2)] ^= 0xff
    writeFileSync(compressed, z)
    await expect(unpackBundle({ file: compressed, into })).rejects.toBeInstanceOf(BundleError)
    expect(existsSync(into) ? readdirSync(into) : []).toEqual([])
  })

  test('a truncated bundle is refused', async () => {
    const dir = dataDir(join(tempDir(), 'data'), '1')
    const file = join(tempDir(), 'cut.almanac')
    await pack(dir, file, { compress: false })
    truncateSync(file, statSync(file).size - 3000)
    const into = join(tempDir(), 'in')
    await expect(unpackBundle({ file, into })).rejects.toThrow(/truncated/)
    expect(readdirSync(into)).toEqual([])
  })

  test('packing refuses data that does not match its own manifest, and leaves no file', async () => {
    const dir = dataDir(join(tempDir(), 'data'), '1')
    writeFileSync(join(dir, 'b', 'b.txt'), 'dataset b, oNe\n')
    const out = join(tempDir(), 'never.almanac')
    await expect(pack(dir, out)).rejects.toThrow('artifact b/b.txt of dataset b')
    expect(readdirSync(join(out, '..'))).toEqual([])
    await expect(pack(dir, out, { only: ['c'] })).rejects.toThrow('has no dataset c (it has a, b)')
  })
})

describe('signatures', () => {
  const key = generateKeyPairSync('ed25519')
  const other = generateKeyPairSync('ed25519')
  const pem = key.publicKey.export({ type: 'spki', format: 'pem' }) as string

  test('the public key setting takes a PEM file, PEM text, or the raw key in base64', () => {
    const file = join(tempDir(), 'pub.pem')
    writeFileSync(file, pem)
    const raw = (key.publicKey.export({ format: 'jwk' }) as { x: string }).x
    for (const setting of [file, pem, Buffer.from(raw, 'base64url').toString('base64')])
      expect(keyId(publicKeyFrom(setting))).toBe(keyId(key.publicKey))
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' }) as string
    expect(() => publicKeyFrom(rsa)).toThrow('Ed25519')
    expect(() => publicKeyFrom('/nowhere/key.pem')).toThrow('ALMANAC_DATA_BUNDLE_PUBLIC_KEY')
  })

  test('with a key set: signed by it is accepted; unsigned, signed by another key, or altered after signing is refused', async () => {
    const dir = dataDir(join(tempDir(), 'data'), '1')
    const into = join(tempDir(), 'in')
    const publicKey = key.publicKey
    const signed = join(tempDir(), 'signed.almanac')
    expect((await pack(dir, signed, { signKey: key.privateKey })).signedBy).toBe(keyId(publicKey))
    const ok = await unpackBundle({ file: signed, into, publicKey })
    expect(ok.verifiedBy).toBe(keyId(publicKey))
    // Without a key set, a signed bundle is taken, its signature named as not checked.
    expect((await unpackBundle({ file: signed, into })).uncheckedSignature).toBe(keyId(publicKey))

    const unsigned = join(tempDir(), 'unsigned.almanac')
    await pack(dir, unsigned)
    await expect(unpackBundle({ file: unsigned, into, publicKey })).rejects.toThrow(
      'is not signed, and ALMANAC_DATA_BUNDLE_PUBLIC_KEY is set',
    )
    const wrong = join(tempDir(), 'wrong.almanac')
    await pack(dir, wrong, { signKey: other.privateKey })
    await expect(unpackBundle({ file: wrong, into, publicKey })).rejects.toThrow(`is signed by key ${keyId(other.publicKey)}`)
    // The header changed after signing (an uncompressed bundle: one byte of its JSON).
    const plain = join(tempDir(), 'plain-signed.almanac')
    await pack(dir, plain, { signKey: key.privateKey, compress: false })
    const bytes = readFileSync(plain)
    expect(bytes.indexOf(Buffer.from(SIGNATURE_MEMBER))).toBeGreaterThan(0)
    const at = bytes.indexOf(Buffer.from('"app_version": "test"')) + 17
    bytes[at] = 'T'.charCodeAt(0)
    writeFileSync(plain, bytes)
    await expect(unpackBundle({ file: plain, into, publicKey })).rejects.toThrow('signature does not verify')
    expect(readdirSync(into).filter((n) => n.startsWith('.'))).toEqual([])
  })
})

describe('the record of activations', () => {
  test('activate keeps the previous; rollback swaps them; clean-up keeps only those two', () => {
    const state = tempDir()
    const made = ['one', 'two', 'three'].map((n) => dataDir(join(bundlesDir(state), n), n))
    recordActivated(state, made[0]!)
    expect([activatedDir(state), previousData(state)]).toEqual([made[0], { dir: null }])
    recordActivated(state, made[1]!)
    recordActivated(state, made[1]!) // the same again: the previous stays
    expect([activatedDir(state), previousData(state)]).toEqual([made[1], { dir: made[0] }])
    recordActivated(state, made[2]!)
    mkdirSync(join(bundlesDir(state), '.incoming-999999999-abcdef'))
    expect(removeUnreachableBundles(state)).toEqual([made[0]])
    expect(readdirSync(bundlesDir(state)).sort()).toEqual(['three', 'two'])
    expect(recordRollback(state)).toBe(made[1]!)
    expect([activatedDir(state), previousData(state)]).toEqual([made[1], { dir: made[2] }])
  })

  test('rolling back the first activation returns to the configured data (no active-data)', () => {
    const state = tempDir()
    const dir = dataDir(join(tempDir(), 'x'), 'x')
    expect(previousData(state)).toBeUndefined()
    recordActivated(state, dir)
    expect(recordRollback(state)).toBeNull()
    expect(activatedDir(state)).toBeUndefined()
    expect(previousData(state)).toEqual({ dir })
  })
})

describe('one rule for the data a server serves', () => {
  test('activated, else ALMANAC_DATA_DIR, else datasets/out (source run)', () => {
    const state = tempDir()
    const configured = dataDir(join(tempDir(), 'configured'), 'c')
    expect(dataSource({ stateDir: state })).toEqual({ from: 'checkout', dir: SOURCE_OUT_DIR })
    expect(dataSource({ stateDir: state, dataDir: configured })).toEqual({ from: 'data-dir', dir: configured })
    const activated = dataDir(join(tempDir(), 'activated'), 'a')
    recordActivated(state, activated)
    expect(dataSource({ stateDir: state, dataDir: configured })).toEqual({ from: 'activated', dir: activated })
  })

  test('the executable: ALMANAC_DATA_DIR with a manifest, else its own datasets in the extraction cache', () => {
    const embedded = { key: 'k123', manifest: '/nowhere/manifest.json', files: [] }
    registerEmbeddedData(embedded)
    try {
      const cache = tempDir()
      expect(dataSource({ dataDir: cache })).toEqual({ from: 'embedded', dir: join(cache, 'k123'), root: cache, embedded })
      const built = dataDir(join(tempDir(), 'built'), 'b')
      expect(dataSource({ dataDir: built })).toEqual({ from: 'data-dir', dir: built })
    } finally {
      registerEmbeddedData(undefined)
    }
  })
})

test('the manifest a bundle carries holds only the packed datasets', async () => {
  const dir = dataDir(join(tempDir(), 'data'), '1')
  const out = join(tempDir(), 'x.almanac')
  await pack(dir, out, { only: ['a'], compress: false })
  const reader = new TarReader(Readable.from([readFileSync(out)]))
  let entry = await reader.next()
  while (entry && entry.name !== 'manifest.json') entry = await reader.next()
  const manifest = JSON.parse((await reader.bytes(entry!, 2 ** 20)).toString()) as Manifest
  expect(Object.keys(manifest.datasets)).toEqual(['a'])
})
