/**
 * Finds the built datasets at run time: `ALMANAC_DATA_DIR`, else `datasets/out` of the source tree.
 * (The compiled executable's extraction cache is wired in by build/ — issue 3.)
 */
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { DataDir, Manifest } from './types.ts'

export const SOURCE_OUT_DIR = resolve(import.meta.dir, '../../datasets/out')

export function openDataDir(dir: string = SOURCE_OUT_DIR): DataDir {
  const manifestPath = join(dir, 'manifest.json')
  const manifest: Manifest = existsSync(manifestPath) ? JSON.parse(readFileSync(manifestPath, 'utf8')) : { generated: '', datasets: {} }
  return {
    dir,
    manifest,
    path: (name) => join(dir, name),
    has: (name) => existsSync(join(dir, name)),
  }
}
