/**
 * What the compiled executable carries. `build/compile.ts` generates a module that registers the
 * embedded artifacts here before the CLI starts; a source run never registers anything, so every
 * caller falls back to `datasets/out`. Nothing in the source tree imports the generated module.
 */

export interface EmbeddedFile {
  /** Artifact name relative to the data directory (as in manifest.json). */
  name: string
  /** Path of the embedded blob inside the executable (`/$bunfs/...`). */
  path: string
  /** Size and sha256 of the artifact once decompressed. */
  bytes: number
  sha256: string
  encoding: 'raw' | 'zstd'
}

export interface EmbeddedData {
  /** Content hash over the manifest and every artifact: the extraction cache's folder name. */
  key: string
  /** Path of the embedded manifest.json. */
  manifest: string
  /**
   * Path of the embedded blob index: JSON `{ name: [file offset, bytes] }` of the large blobs inside the
   * executable file, written there by build/compile.ts after the build (absent or blank: none known).
   */
  blobIndex?: string
  files: EmbeddedFile[]
}

let embedded: EmbeddedData | undefined

export function registerEmbeddedData(data: EmbeddedData | undefined) {
  embedded = data
}

export const embeddedData = (): EmbeddedData | undefined => embedded
