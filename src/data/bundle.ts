/**
 * Data bundles: one file that carries a data directory (manifest + artifacts) to a server with no
 * checkout, no Bun and no network, where `almanac data activate BUNDLE` unpacks, checks and activates it.
 *
 * The container is a POSIX tar stream (data/tar.ts), zstd-compressed unless packed with --no-compress.
 * Tar rather than ZIP (src/lib/zip.ts only reads ZIP): tar is written and read front to back in one pass,
 * so packing and unpacking stream a few hundred megabytes through a fixed buffer, the members that decide
 * whether the rest is worth reading (header, signature, manifest) come first, and an operator can list
 * or unpack a bundle with the system's tar (`tar --zstd -tvf x.almanac`). ZIP keeps its directory at the
 * end: reading it needs the whole file first and a seek, and writing one needs a writer we do not have.
 * zstd because the artifacts shrink by half or more (postal 308 MB to 74 MB in 1.8 s here) and node:zlib
 * decompresses it at ~300 MB/s.
 *
 * The members, in order:
 * 1. `almanac-bundle.json`: format, version, when, which release packed it, the datasets, whether it is
 *    partial (`--only`), and the size and sha256 of the manifest member;
 * 2. `almanac-bundle.sig` when signed: an Ed25519 signature over the exact bytes of member 1, which pins
 *    the manifest, which pins every artifact's sha256;
 * 3. `manifest.json`: the data directory's manifest, holding only the packed datasets;
 * 4. the artifacts, each exactly as the manifest lists it.
 * Unpacking refuses anything else: another member, a missing or extra artifact, a size or sha256 that
 * differs, a header or manifest that was altered, a signature that does not verify (when a key is set).
 */
import { createHash, createPrivateKey, createPublicKey, type KeyObject, randomBytes, sign, verify } from 'node:crypto'
import {
  closeSync,
  copyFileSync,
  constants as fsConstants,
  createReadStream,
  createWriteStream,
  existsSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs'
import { open } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { PassThrough, Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { constants as zlib, createZstdCompress, createZstdDecompress } from 'node:zlib'
import { hasManifest, INCOMING } from './activation.ts'
import { sha256OfFile } from './integrity.ts'
import { readManifest } from './open.ts'
import type { Manifest, ManifestEntry } from './types.ts'
import { sweepOrphans } from '../lib/orphans.ts'
import { tarEnd, TarError, tarHeader, tarPadding, TarReader, type TarEntry } from './tar.ts'
import { hashingTap } from './hashes.ts'

export const HEADER_MEMBER = 'almanac-bundle.json'
export const SIGNATURE_MEMBER = 'almanac-bundle.sig'
const FORMAT = 'almanac-data-bundle'
const VERSION = 1
/** The header, signature and manifest are small; anything larger is not a bundle of ours. */
const SMALL_MEMBER_MAX = 16 * 2 ** 20

/** The bundle cannot be packed or is refused; the message says why and what was left as it was. */
export class BundleError extends Error {
  override name = 'BundleError'
}

/** `almanac-bundle.json`. */
export interface BundleHeader {
  format: typeof FORMAT
  version: number
  created: string
  /** The almanac release that packed it. */
  app_version: string
  datasets: string[]
  /** Packed with --only: activation takes the other datasets from the data being served. */
  partial: boolean
  manifest: { bytes: number; sha256: string }
  artifacts: number
  bytes: number
}

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex')

/** A short name of a public key: the start of the sha256 of its SPKI form (what `data pack` prints). */
export const keyId = (key: KeyObject) =>
  sha256((key.type === 'public' ? key : createPublicKey(key)).export({ type: 'spki', format: 'der' }) as Buffer).slice(0, 16)

const ed25519 = (key: KeyObject, what: string) => {
  if (key.asymmetricKeyType !== 'ed25519')
    throw new BundleError(`${what} is an ${key.asymmetricKeyType} key; bundles are signed with Ed25519`)
  return key
}

/**
 * The public key of ALMANAC_DATA_BUNDLE_PUBLIC_KEY: a PEM file's path, the PEM text itself, or the raw
 * 32 bytes in base64 (or base64url).
 */
export function publicKeyFrom(setting: string): KeyObject {
  const what = 'ALMANAC_DATA_BUNDLE_PUBLIC_KEY'
  const value = setting.trim()
  try {
    if (value.startsWith('-----BEGIN')) return ed25519(createPublicKey(value), what)
    if (existsSync(value)) return ed25519(createPublicKey(readFileSync(value)), `${what} (${value})`)
    const x = /^[A-Za-z0-9+/_-]{43}=?$/.test(value) ? Buffer.from(value, 'base64') : undefined
    if (x?.length === 32) return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: x.toString('base64url') }, format: 'jwk' })
    throw new BundleError(`${what}: ${value} is neither a PEM file, PEM text, nor 32 bytes in base64`)
  } catch (e) {
    if (e instanceof BundleError) throw e
    throw new BundleError(`${what}: not an Ed25519 public key (${(e as Error).message})`)
  }
}

/** The private key of `--sign-key FILE`: PEM (PKCS#8), as `openssl genpkey -algorithm ed25519` writes it. */
export function privateKeyFrom(file: string): KeyObject {
  try {
    return ed25519(createPrivateKey(readFileSync(file)), `--sign-key ${file}`)
  } catch (e) {
    if (e instanceof BundleError) throw e
    throw new BundleError(`--sign-key ${file}: not an Ed25519 private key in PEM (${(e as Error).message})`)
  }
}

/** An artifact name that stays inside the directory it is unpacked into, and is none of the bundle's own members. */
function safeName(name: string): boolean {
  if (!name || name.startsWith('/') || /[\\\0]/.test(name) || [HEADER_MEMBER, SIGNATURE_MEMBER, 'manifest.json'].includes(name))
    return false
  return name.split('/').every((part) => part !== '' && part !== '.' && part !== '..' && !INCOMING.test(part))
}

/** Where the artifacts of a bundle are read from: a data directory, or the executable's embedded datasets. */
export interface PackSource {
  /** What to call it in messages (a directory). */
  dir: string
  manifest: Manifest
  read(name: string): Readable
}

export interface Packed {
  file: string
  /** The bundle file's own size and sha256 (to compare after carrying it across). */
  bytes: number
  sha256: string
  header: BundleHeader
  /** The signing key's id, when signed. */
  signedBy?: string
}

/** The datasets `only` names (all without it), or why not. */
function selectDatasets(source: PackSource, only: string[] | undefined): ManifestEntry[] {
  const all = Object.values(source.manifest.datasets ?? {})
  if (!all.length) throw new BundleError(`${source.dir} holds no datasets (no or an empty manifest.json): nothing to pack`)
  if (!only) return all
  const unknown = only.filter((id) => !source.manifest.datasets[id])
  if (unknown.length)
    throw new BundleError(`${source.dir} has no dataset ${unknown.join(', ')} (it has ${all.map((e) => e.id).join(', ')})`)
  return all.filter((e) => only.includes(e.id))
}

/** One small member: header, bytes, padding. */
const member = (name: string, bytes: Buffer) => [tarHeader(name, bytes.length), bytes, tarPadding(bytes.length)]

/**
 * The tar stream of the bundle. Every artifact is hashed on its way in: one that does not match its
 * manifest stops the packing (a bundle never carries data its own manifest would refuse).
 */
async function* bundleStream(source: PackSource, datasets: ManifestEntry[], small: Buffer[][]): AsyncGenerator<Buffer> {
  for (const parts of small) yield* parts
  for (const entry of datasets)
    for (const a of entry.artifacts) {
      if (!safeName(a.name)) throw new BundleError(`dataset ${entry.id} names an artifact ${JSON.stringify(a.name)} that cannot be packed`)
      yield tarHeader(a.name, a.bytes)
      const hash = createHash('sha256')
      let bytes = 0
      for await (const chunk of source.read(a.name) as AsyncIterable<Buffer>) {
        bytes += chunk.length
        if (bytes > a.bytes) break
        hash.update(chunk)
        yield chunk
      }
      if (bytes !== a.bytes || hash.digest('hex') !== a.sha256)
        throw new BundleError(
          `artifact ${a.name} of dataset ${entry.id} in ${source.dir} does not match its manifest (size or sha256): ` +
            `nothing was packed; run \`almanac data verify\` on it`,
        )
      yield tarPadding(a.bytes)
    }
  yield tarEnd()
}

/** Writes the bundle of `source` (the datasets of `only`, else all) into `out`: whole, or not at all. */
export async function packBundle(
  source: PackSource,
  options: { out: string; only?: string[]; signKey?: KeyObject; compress?: boolean; appVersion: string },
): Promise<Packed> {
  const datasets = selectDatasets(source, options.only)
  const manifest: Manifest = { generated: source.manifest.generated, datasets: Object.fromEntries(datasets.map((e) => [e.id, e])) }
  const manifestBytes = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`)
  const artifacts = datasets.flatMap((e) => e.artifacts)
  const header: BundleHeader = {
    format: FORMAT,
    version: VERSION,
    created: new Date().toISOString(),
    app_version: options.appVersion,
    datasets: datasets.map((e) => e.id),
    partial: datasets.length < Object.keys(source.manifest.datasets).length,
    manifest: { bytes: manifestBytes.length, sha256: sha256(manifestBytes) },
    artifacts: artifacts.length,
    bytes: artifacts.reduce((n, a) => n + a.bytes, 0),
  }
  const headerBytes = Buffer.from(`${JSON.stringify(header, null, 2)}\n`)
  const small = [member(HEADER_MEMBER, headerBytes)]
  const signedBy = options.signKey && keyId(options.signKey)
  if (options.signKey) {
    const signature = { algorithm: 'Ed25519', key: signedBy, signature: sign(null, headerBytes, options.signKey).toString('base64') }
    small.push(member(SIGNATURE_MEMBER, Buffer.from(`${JSON.stringify(signature)}\n`)))
  }
  small.push(member('manifest.json', manifestBytes))

  const out = resolve(options.out)
  const tmp = `${out}.${process.pid}-${randomBytes(3).toString('hex')}.tmp`
  const tap = hashingTap()
  const compress = options.compress === false ? new PassThrough() : createZstdCompress({ params: { [zlib.ZSTD_c_compressionLevel]: 3 } })
  try {
    await pipeline(Readable.from(bundleStream(source, datasets, small)), compress, tap.stream, createWriteStream(tmp))
    renameSync(tmp, out)
  } catch (e) {
    rmSync(tmp, { force: true })
    if (e instanceof BundleError) throw e
    throw new BundleError(`cannot write ${out}: ${diskWhy(e)}; no bundle was written`)
  }
  return { file: out, bytes: tap.bytes, sha256: tap.sha256(), header, signedBy }
}

/** A file system error in words. */
function diskWhy(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code
  if (code === 'ENOSPC' || code === 'EDQUOT') return 'the disk is full'
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied'
  if (code === 'EROFS') return 'the file system is read-only'
  if (code === 'EFBIG') return 'a file grew past the size limit (ulimit -f)'
  return (e as Error).message
}

export interface Unpacked {
  /** The new data directory, complete and checked. */
  dir: string
  header: BundleHeader
  /** The id of the key whose signature was checked, when one was. */
  verifiedBy?: string
  /** Signed, but no key is configured to check it with: the key id it names. */
  uncheckedSignature?: string
  /** Datasets taken from the data in service to complete a partial bundle. */
  completed: string[]
  completedFrom?: string
}

export interface UnpackOptions {
  file: string
  /** `<state dir>/data`: the new directory is made there, beside the others, never over one. */
  into: string
  /** ALMANAC_DATA_BUNDLE_PUBLIC_KEY: when set, only a bundle it signed is unpacked. */
  publicKey?: KeyObject
  /** The data directory being served, for the datasets a partial bundle does not carry. */
  served?: () => Promise<string | undefined>
}

/** What the first bytes say: a zstd frame, else a tar stream (the reader then checks its headers). */
function compressed(file: string): boolean {
  const fd = openSync(file, 'r')
  try {
    const magic = Buffer.alloc(4)
    readSync(fd, magic, 0, 4, 0)
    return magic.readUInt32LE(0) === 0xfd2fb528
  } finally {
    closeSync(fd)
  }
}

/**
 * Unpacks `file` into a new directory under `into` and checks it whole: the header, the signature (when a
 * key is given), the manifest against the header, every artifact's size and sha256 against the manifest;
 * a partial bundle is completed from the data being served (hard links, copies across file systems),
 * those artifacts checked too. Anything wrong (a bad file, a full disk) removes what was written and
 * throws a BundleError: nothing half-written is left, and nothing outside the new directory is touched.
 */
export async function unpackBundle(options: UnpackOptions): Promise<Unpacked> {
  const file = resolve(options.file)
  if (!existsSync(file) || !statSync(file).isFile()) throw new BundleError(`${file} is not a file`)
  const into = resolve(options.into)
  let work: string
  try {
    mkdirSync(into, { recursive: true })
    sweepOrphans(into, INCOMING)
    work = join(into, `.incoming-${process.pid}-${randomBytes(3).toString('hex')}`)
    mkdirSync(work)
  } catch (e) {
    throw new BundleError(`cannot make a directory under ${into}: ${diskWhy(e)}`)
  }
  const input = createReadStream(file, { highWaterMark: 2 ** 20 })
  let stream: Readable = input
  if (compressed(file)) {
    stream = input.pipe(createZstdDecompress({ chunkSize: 256 * 1024 }))
    input.on('error', (e) => stream.destroy(e))
  }
  try {
    const tar = new TarReader(stream)
    const { header, verifiedBy, uncheckedSignature, manifest } = await readPreamble(tar, file, options.publicKey)
    await writeArtifacts(tar, manifest, work)
    const completion = header.partial ? await complete(manifest, work, await options.served?.()) : { datasets: {}, from: undefined }
    const whole: Manifest = { generated: manifest.generated, datasets: { ...completion.datasets, ...manifest.datasets } }
    const text = `${JSON.stringify(whole, null, 2)}\n`
    await writeSynced(join(work, 'manifest.json'), Buffer.from(text))
    const stamp = new Date()
      .toISOString()
      .replace(/[-:]/g, '')
      .replace(/\.\d+Z$/, 'Z')
    let dir = join(into, `${stamp}-${sha256(text).slice(0, 12)}`)
    if (existsSync(dir)) dir += `-${randomBytes(3).toString('hex')}`
    renameSync(work, dir)
    return { dir, header, verifiedBy, uncheckedSignature, completed: Object.keys(completion.datasets), completedFrom: completion.from }
  } catch (e) {
    rmSync(work, { recursive: true, force: true })
    if (e instanceof BundleError) throw e
    if (e instanceof TarError) throw new BundleError(`${file} is not a valid data bundle: ${e.message}; refused`)
    if ((e as NodeJS.ErrnoException).syscall !== undefined)
      throw new BundleError(`cannot unpack ${file} into ${into}: ${diskWhy(e)}; what was written is removed`)
    // The decompressor's complaints (a damaged or cut zstd stream).
    throw new BundleError(`${file} is damaged (${(e as Error).message}); refused`)
  } finally {
    input.destroy()
    stream.destroy()
  }
}

/** The next member, which must be one of `names`. */
async function expectMember(tar: TarReader, file: string, names: string[]): Promise<TarEntry> {
  const entry = await tar.next()
  if (!entry || !names.includes(entry.name))
    throw new BundleError(
      `${file} is not a data bundle: ${entry ? `its member ${JSON.stringify(entry.name)} comes` : 'it ends'} where ${names.join(' or ')} ` +
        `should be; refused`,
    )
  return entry
}

/** Header, signature, manifest: each checked before any artifact is read. */
async function readPreamble(tar: TarReader, file: string, publicKey: KeyObject | undefined) {
  const headerBytes = await tar.bytes(await expectMember(tar, file, [HEADER_MEMBER]), SMALL_MEMBER_MAX)
  let header: BundleHeader
  try {
    header = JSON.parse(headerBytes.toString('utf8'))
  } catch {
    throw new BundleError(`${file}: ${HEADER_MEMBER} is not JSON; refused`)
  }
  if (header.format !== FORMAT)
    throw new BundleError(`${file} is not a data bundle (${HEADER_MEMBER} says format ${header.format}); refused`)
  if (header.version !== VERSION)
    throw new BundleError(`${file} is a bundle of format version ${header.version}; this almanac reads version ${VERSION}; refused`)
  let next = await expectMember(tar, file, [SIGNATURE_MEMBER, 'manifest.json'])
  let signature: { key?: string; signature?: string } | undefined
  if (next.name === SIGNATURE_MEMBER) {
    try {
      signature = JSON.parse((await tar.bytes(next, SMALL_MEMBER_MAX)).toString('utf8'))
    } catch {
      throw new BundleError(`${file}: ${SIGNATURE_MEMBER} is not JSON; refused`)
    }
    next = await expectMember(tar, file, ['manifest.json'])
  }
  const verifiedBy = publicKey ? checkSignature(file, headerBytes, signature, publicKey) : undefined
  const manifestBytes = await tar.bytes(next, SMALL_MEMBER_MAX)
  if (manifestBytes.length !== header.manifest?.bytes || sha256(manifestBytes) !== header.manifest?.sha256)
    throw new BundleError(`${file}: manifest.json does not match the sha256 in ${HEADER_MEMBER} (altered or damaged); refused`)
  const manifest: Manifest = JSON.parse(manifestBytes.toString('utf8'))
  const ids = Object.keys(manifest.datasets ?? {})
  if (!ids.length || ids.join() !== header.datasets.join())
    throw new BundleError(
      `${file}: manifest.json lists datasets ${ids.join(', ') || '(none)'}, the header ${header.datasets.join(', ')}; refused`,
    )
  return { header, manifest, verifiedBy, uncheckedSignature: publicKey ? undefined : signature?.key }
}

/** The configured key's id when `signature` is its valid signature of the header; a BundleError otherwise. */
function checkSignature(file: string, headerBytes: Buffer, signature: { key?: string; signature?: string } | undefined, key: KeyObject) {
  const id = keyId(key)
  const set = `ALMANAC_DATA_BUNDLE_PUBLIC_KEY is set (key ${id})`
  if (!signature) throw new BundleError(`${file} is not signed, and ${set}: only bundles signed by that key are activated; refused`)
  const valid = typeof signature.signature === 'string' && verify(null, headerBytes, key, Buffer.from(signature.signature, 'base64'))
  if (valid) return id
  throw new BundleError(
    signature.key && signature.key !== id
      ? `${file} is signed by key ${signature.key}, not by the configured one; ${set}; refused`
      : `${file}: its signature does not verify with the configured key (altered after signing); ${set}; refused`,
  )
}

/** Every artifact of the manifest, written into `work` and checked as it arrives; nothing more, nothing less. */
async function writeArtifacts(tar: TarReader, manifest: Manifest, work: string) {
  const expected = new Map<string, { id: string; bytes: number; sha256: string }>()
  for (const entry of Object.values(manifest.datasets))
    for (const a of entry.artifacts ?? []) {
      if (!safeName(a.name) || expected.has(a.name))
        throw new BundleError(`the bundle's manifest names an artifact ${JSON.stringify(a.name)} that cannot be unpacked; refused`)
      expected.set(a.name, { id: entry.id, bytes: a.bytes, sha256: a.sha256 })
    }
  for (let entry = await tar.next(); entry; entry = await tar.next()) {
    const want = expected.get(entry.name)
    if (!want) throw new BundleError(`the bundle holds ${JSON.stringify(entry.name)}, which its manifest does not list (or twice); refused`)
    expected.delete(entry.name)
    const what = `artifact ${entry.name} of dataset ${want.id}`
    if (entry.size !== want.bytes)
      throw new BundleError(`${what} is ${entry.size} bytes in the bundle, its manifest says ${want.bytes}; refused`)
    const path = join(work, entry.name)
    mkdirSync(dirname(path), { recursive: true })
    const hash = createHash('sha256')
    const fh = await open(path, 'wx')
    try {
      for await (const chunk of tar.body()) {
        hash.update(chunk)
        for (let at = 0; at < chunk.length; ) at += (await fh.write(chunk, at)).bytesWritten
      }
      await fh.datasync()
    } finally {
      await fh.close()
    }
    if (hash.digest('hex') !== want.sha256)
      throw new BundleError(`${what} does not match its sha256 in the bundle's manifest (the bundle is damaged or was altered); refused`)
  }
  if (expected.size) throw new BundleError(`the bundle ends without ${[...expected.keys()].join(', ')} (truncated?); refused`)
}

/**
 * A partial bundle's other datasets, from the data being served: each artifact hard-linked into `work`
 * (copied when the link cannot be made, across file systems), then checked against the served manifest.
 */
async function complete(manifest: Manifest, work: string, served: string | undefined) {
  const packed = Object.keys(manifest.datasets)
  if (!served || !hasManifest(served))
    throw new BundleError(
      `the bundle is partial (${packed.join(', ')}) and there is no data in service to take the other datasets from` +
        `${served ? ` (${served} holds no manifest.json)` : ''}; pack a full bundle; refused`,
    )
  const current = readManifest(served)
  const datasets: Record<string, ManifestEntry> = {}
  for (const entry of Object.values(current.datasets)) {
    if (manifest.datasets[entry.id]) continue
    for (const a of entry.artifacts) {
      const [from, to] = [join(served, a.name), join(work, a.name)]
      if (!safeName(a.name) || existsSync(to))
        throw new BundleError(
          `the served data's artifact ${JSON.stringify(a.name)} (dataset ${entry.id}) cannot complete the bundle; refused`,
        )
      if (!existsSync(from))
        throw new BundleError(`artifact ${a.name} of dataset ${entry.id} is missing from the data in service (${served}); refused`)
      mkdirSync(dirname(to), { recursive: true })
      try {
        linkSync(from, to)
      } catch {
        copyFileSync(from, to, fsConstants.COPYFILE_FICLONE)
      }
      const ok = statSync(to).size === a.bytes && (await sha256OfFile(to)) === a.sha256
      if (!ok)
        throw new BundleError(
          `artifact ${a.name} of dataset ${entry.id} in the data in service (${served}) does not match its manifest, so it cannot ` +
            `complete the partial bundle; activate a full bundle; refused`,
        )
    }
    datasets[entry.id] = entry
  }
  return { datasets, from: served }
}

async function writeSynced(path: string, bytes: Buffer) {
  const fh = await open(path, 'wx')
  try {
    await fh.writeFile(bytes)
    await fh.datasync()
  } finally {
    await fh.close()
  }
}
