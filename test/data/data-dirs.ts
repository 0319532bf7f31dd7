/**
 * Data directories for the activation and bundle tests: datasets/out with every artifact symlinked (no
 * copy of 680 MB) except countries.sqlite, a real copy in which France is renamed, its manifest entry
 * following (sha256, size, and a version with a suffix that /api/v1/meta/datasets shows).
 */
import { Database } from 'bun:sqlite'
import { copyFileSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { sha256File } from '../../src/data/hashes.ts'
import type { Manifest } from '../../src/data/types.ts'

export const SOURCE_OUT = resolve(import.meta.dir, '../../datasets/out')

/** The countries dataset's version in datasets/out. */
export const sourceVersion = (): string =>
  (JSON.parse(readFileSync(join(SOURCE_OUT, 'manifest.json'), 'utf8')) as Manifest).datasets.countries!.version

/** `dir` made like datasets/out, with France called `france` and the countries version `<version><suffix>`. */
export function countriesVariant(dir: string, france: string, suffix: string): string {
  mkdirSync(dir, { recursive: true })
  for (const file of readdirSync(SOURCE_OUT))
    if (!['manifest.json', 'countries.sqlite', '.cache', '.downloads'].includes(file)) symlinkSync(join(SOURCE_OUT, file), join(dir, file))
  copyFileSync(join(SOURCE_OUT, 'countries.sqlite'), join(dir, 'countries.sqlite'))
  const db = new Database(join(dir, 'countries.sqlite'))
  db.run('UPDATE countries SET name = ? WHERE alpha2 = ?', [france, 'FR'])
  db.close()
  const manifest = JSON.parse(readFileSync(join(SOURCE_OUT, 'manifest.json'), 'utf8')) as Manifest
  const entry = manifest.datasets.countries!
  entry.artifacts = entry.artifacts.map((a) =>
    a.name === 'countries.sqlite' ? { ...a, sha256: sha256File(join(dir, a.name)), bytes: statSync(join(dir, a.name)).size } : a,
  )
  entry.version += suffix
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2))
  return dir
}
