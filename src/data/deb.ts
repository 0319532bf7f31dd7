/**
 * Files out of a Debian package without dpkg, so a build on any machine can read a source Debian
 * publishes only inside a `.deb` (SWORD's versification headers and locales, bibledit's USFM files).
 * A .deb is an `ar` archive: `!<arch>\n`, then per member a 60-byte header (name 16, mtime 12, uid 6,
 * gid 6, mode 8, size 10 bytes, then "`\n") and the data padded to an even length. Its members are
 * `debian-binary`, `control.tar.*` and `data.tar.{xz,zst,gz,bz2}` or a plain `data.tar`; tar (and the xz
 * or zstd it runs) unpacks the data member, as the build already uses tar for the mirror's tarballs.
 */
import { mkdirSync, readFileSync } from 'node:fs'

/** Members of an ar archive: name and bytes. */
function arMembers(bytes: Uint8Array): { name: string; data: Uint8Array }[] {
  const text = (from: number, length: number) => Buffer.from(bytes.subarray(from, from + length)).toString('latin1')
  if (text(0, 8) !== '!<arch>\n') throw new Error('not an ar archive (a .deb starts with !<arch>)')
  const members: { name: string; data: Uint8Array }[] = []
  let at = 8
  while (at + 60 <= bytes.length) {
    if (text(at + 58, 2) !== '`\n') throw new Error(`ar member header at byte ${at} is damaged`)
    const name = text(at, 16).trim().replace(/\/$/, '')
    const size = Number(text(at + 48, 10).trim())
    const start = at + 60
    if (!Number.isSafeInteger(size) || start + size > bytes.length) throw new Error(`ar member ${name} runs past the end of the file`)
    members.push({ name, data: bytes.subarray(start, start + size) })
    at = start + size + (size % 2)
  }
  return members
}

const TAR_FLAGS: Record<string, string[]> = { '': [], '.xz': ['-J'], '.zst': ['--zstd'], '.gz': ['-z'], '.bz2': ['-j'] }

/**
 * Unpacks the files of a .deb's data member that match `patterns` (tar wildcards over the package's
 * paths, e.g. `./usr/include/sword/canon*.h`) into `into`, keeping their paths.
 */
export function extractDeb(deb: string, into: string, patterns: string[]): void {
  const data = arMembers(readFileSync(deb)).find((m) => /^data\.tar(\.\w+)?$/.test(m.name))
  if (!data) throw new Error(`${deb}: no data.tar member; not a Debian package`)
  const flags = TAR_FLAGS[data.name.slice('data.tar'.length)]
  if (!flags) throw new Error(`${deb}: ${data.name} is compressed in a way this build does not read`)
  mkdirSync(into, { recursive: true })
  const r = Bun.spawnSync(['tar', '-x', ...flags, '-f', '-', '-C', into, '--wildcards', ...patterns], { stdin: data.data })
  if (r.exitCode !== 0) throw new Error(`${deb}: tar could not unpack ${data.name} (${patterns.join(' ')}): ${r.stderr.toString().trim()}`)
}
