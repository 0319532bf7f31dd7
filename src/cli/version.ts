/**
 * `almanac version [--json]`: the app version and each dataset's version and upstream date, read from
 * the manifest (the embedded one in the executable: nothing is extracted to answer).
 */
import { DEFAULTS } from '../config.ts'
import { currentManifest } from '../data/open.ts'
import { provenance } from '../data/provenance.ts'
import type { Manifest } from '../data/types.ts'
import { APP_VERSION } from '../version.ts'
import { parseCommand } from './args.ts'

export const VERSION_USAGE = `usage: almanac version [--json] [--data-dir DIR]
      the app's version, runtime, and each dataset's version, upstream date, build date and licence`

export interface VersionReport {
  name: string
  version: string
  runtime: string
  datasets_from: string
  datasets: { id: string; version: string; date: string | null; built: string; license: string | null }[]
}

export function versionReport(manifest: Manifest, from: string): VersionReport {
  return {
    name: 'almanac',
    version: APP_VERSION,
    runtime: `bun ${Bun.version} ${process.platform}-${process.arch}`,
    datasets_from: from,
    datasets: Object.values(manifest.datasets).map((d) => ({
      id: d.id,
      version: d.version,
      date: d.date ?? provenance(d.sources).date,
      built: d.built,
      license: d.license ?? provenance(d.sources).license,
    })),
  }
}

export function formatVersion(r: VersionReport): string {
  const lines = [`${r.name} ${r.version} (${r.runtime})`, `datasets (${r.datasets_from}):`]
  if (!r.datasets.length) lines.push('  none built')
  const w = (k: 'id' | 'version') => Math.max(...r.datasets.map((d) => d[k].length), 0)
  for (const d of r.datasets)
    lines.push(`  ${d.id.padEnd(w('id'))}  ${d.version.padEnd(w('version'))}  ${d.date ?? '-'}  built ${d.built.slice(0, 10)}`)
  if (r.datasets.length) lines.push('licences and credit lines: almanac version --json, NOTICE.md, GET /api/v1/meta/datasets')
  return lines.join('\n')
}

export function versionCommand(args: string[], env: Record<string, string | undefined> = process.env): number {
  const { values, help } = parseCommand(args, { json: { type: 'boolean' }, 'data-dir': { type: 'string' } })
  if (help) {
    console.log(VERSION_USAGE)
    return 0
  }
  // --data-dir names a directory outright; otherwise what a server with these settings serves (an activated one first).
  const flag = values['data-dir'] as string | undefined
  const { manifest, from } = flag
    ? currentManifest({ dataDir: flag })
    : currentManifest({ dataDir: env.ALMANAC_DATA_DIR, stateDir: env.ALMANAC_STATE_DIR ?? DEFAULTS.stateDir })
  const report = versionReport(manifest, from)
  console.log(values.json ? JSON.stringify(report, null, 2) : formatVersion(report))
  return 0
}
