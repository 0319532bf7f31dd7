/**
 * Finds the built datasets at run time: `ALMANAC_DATA_DIR`, else `datasets/out` of the source tree.
 * (The compiled executable's extraction cache is wired in by build/ — issue 3.)
 */
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { DataDir, Manifest } from './types.ts'

export const SOURCE_OUT_DIR = resolve(import.meta.dir, '../../datasets/out')

export function readManifest(dir: string): Manifest {
  const path = join(dir, 'manifest.json')
  return existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : { generated: '', datasets: {} }
}

export function openDataDir(dir: string = SOURCE_OUT_DIR): DataDir {
  return {
    dir,
    manifest: readManifest(dir),
    path: (name) => join(dir, name),
    has: (name) => existsSync(join(dir, name)),
  }
}
