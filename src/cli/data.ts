/**
 * `almanac data build | fetch | verify | extract`: building datasets from upstream files (source tree
 * only), downloading every upstream into a mirror-like folder for an air-gapped build, checking a data
 * directory against its manifest, and extracting the executable's datasets ahead of time (for read-only
 * deployments).
 */
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { loadConfig } from '../config.ts'
import { sources } from '../../datasets/sources.ts'
import { buildDatasets, verifyDataDir } from '../data/build.ts'
import { embeddedData } from '../data/embedded.ts'
import { cacheRoot, extractEmbedded } from '../data/extract.ts'
import { fetchSources } from '../data/fetch.ts'
import { SOURCE_OUT_DIR } from '../data/open.ts'
import { domains } from '../domains/index.ts'
import { recordActivated } from '../refresh.ts'
import { pidFile } from '../serve.ts'
import { didYouMean } from '../lib/did-you-mean.ts'
import { parseCommand, UsageError, type OptionSpec } from './args.ts'

export const DATA_USAGE = `usage:
  almanac data build [--only <domain>[,<domain>]] [--force] [--offline] [--out DIR]
      turn upstream files (ALMANAC_MIRROR, npm packages, system files, URLs) into datasets/out
  almanac data fetch --to DIR
      download every source that has an upstream URL into DIR, laid out like the mirror, with a
      MANIFEST.json (sha256, size, URL, upstream date); then build offline with ALMANAC_MIRROR=DIR
      (ALMANAC_UPSTREAM_BASE=URL fetches https://host/path from URL/host/path instead)
  almanac data verify [--data-dir DIR]
      re-hash every artifact against manifest.json
  almanac data extract [--to DIR]
      (executable) write the embedded datasets into DIR/<content hash> now, not at first start
  almanac data activate DIR [--pid PID]
      check DIR (every artifact against its manifest.json), record it as the data directory to serve
      (ALMANAC_STATE_DIR/active-data, kept across restarts) and send SIGHUP to the running server (PID, else
      the pid in ALMANAC_STATE_DIR/almanac.pid): it opens DIR, checks it again and swaps it in, or logs why not
  almanac data status [--url URL]
      ask a running server (default http://127.0.0.1:$ALMANAC_PORT) for its /readyz: prints it, exits 0
      only when it is ready (the container healthcheck; needs no curl)`

const SUBCOMMANDS = new Map<string, OptionSpec>([
  ['build', { only: { type: 'string' }, force: { type: 'boolean' }, offline: { type: 'boolean' }, out: { type: 'string' } }],
  ['fetch', { to: { type: 'string' } }],
  ['verify', { 'data-dir': { type: 'string' } }],
  ['extract', { to: { type: 'string' } }],
  ['status', { url: { type: 'string' } }],
  ['activate', { pid: { type: 'string' } }],
])

/** How long `data status` waits for /readyz (under the healthcheck's own timeout). */
const STATUS_TIMEOUT_MS = 4000

/** Runs the subcommand; returns the process exit code. */
export async function dataCommand(args: string[], log: (line: string) => void = (l) => console.error(l)): Promise<number> {
  const [sub, ...rest] = args
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    console.log(DATA_USAGE)
    return 0
  }
  const spec = SUBCOMMANDS.get(sub)
  if (!spec) throw new UsageError(`unknown data command ${JSON.stringify(sub)}${didYouMean(sub, SUBCOMMANDS.keys())}\n${DATA_USAGE}`)
  const { values, positionals, help } = parseCommand(rest, spec, sub === 'activate')
  if (help) {
    console.log(DATA_USAGE)
    return 0
  }
  const text = (name: string) => values[name] as string | undefined
  switch (sub) {
    case 'build': {
      if (Bun.isStandaloneExecutable) {
        log(
          'almanac: `data build` runs from the source tree (`bun src/main.ts data build`). This executable carries datasets already ' +
            'built; to serve newer ones, build them in a checkout and set ALMANAC_DATA_DIR to that datasets/out, or compile a new ' +
            'executable.',
        )
        return 2
      }
      const only = text('only')
        ?.split(',')
        .map((s) => s.trim())
        .filter(Boolean)
      await buildDatasets(domains, {
        only,
        force: values.force === true,
        offline: values.offline === true || undefined,
        outDir: text('out'),
        log,
      })
      return 0
    }
    case 'fetch': {
      const to = text('to')
      if (!to) throw new UsageError(`data fetch needs --to DIR\n${DATA_USAGE}`)
      const report = await fetchSources(sources, to, { log })
      for (const s of report.skipped) log(`${s.source}: no upstream URL to fetch; had from ${s.why}`)
      log(
        `${report.dir}: ${report.fetched.length} downloaded, ${report.kept.length} already there, ${report.failed.length} failed` +
          (report.failed.length ? ` (${report.failed.map((f) => f.source).join(', ')})` : ''),
      )
      return report.failed.length ? 1 : 0
    }
    case 'verify': {
      // The path as it is on disk, whichever way it was given.
      const dir = resolve(text('data-dir') ?? process.env.ALMANAC_DATA_DIR ?? SOURCE_OUT_DIR)
      const problems = verifyDataDir(dir)
      for (const p of problems) log(`almanac: ${p}`)
      log(problems.length ? `${dir}: ${problems.length} problem(s)` : `${dir}: every artifact matches manifest.json`)
      return problems.length ? 1 : 0
    }
    case 'activate': {
      const dir = positionals[0]
      if (!dir || positionals.length > 1) throw new UsageError(`data activate needs one DIR\n${DATA_USAGE}`)
      return activate(resolve(dir), text('pid'), log)
    }
    case 'status': {
      // The server's own settings (defaults, --config file, environment) say where it listens.
      const base = text('url') ?? serverUrl()
      try {
        const res = await fetch(new URL('/readyz', base), { signal: AbortSignal.timeout(STATUS_TIMEOUT_MS) })
        console.log(await res.text())
        return res.status === 200 ? 0 : 1
      } catch (e) {
        log(`almanac: ${base}/readyz did not answer: ${(e as Error).message}`)
        return 1
      }
    }
    default: {
      const embedded = embeddedData()
      if (!embedded) {
        log('almanac: `data extract` is for the compiled executable; a source run reads datasets/out directly.')
        return 2
      }
      const dir = await extractEmbedded(embedded, cacheRoot(process.env, text('to') ?? process.env.ALMANAC_DATA_DIR), log)
      console.log(dir)
      return 0
    }
  }
}

/** Where a server started with these settings answers, on this machine. */
function serverUrl(): string {
  const { host, port } = loadConfig({ env: process.env })
  // A wildcard address is reached on loopback (the healthcheck runs beside the server).
  return `http://${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host}:${port}`
}

/** `data activate`: the checks a server would refuse the directory for, then the record and the signal. */
function activate(dir: string, pidText: string | undefined, log: (line: string) => void): number {
  if (!existsSync(join(dir, 'manifest.json'))) {
    log(`almanac: ${dir} holds no manifest.json; build one with \`almanac data build --out ${dir}\``)
    return 1
  }
  const problems = verifyDataDir(dir)
  for (const p of problems) log(`almanac: ${p}`)
  if (problems.length) {
    log(`almanac: ${dir} refused (${problems.length} problem(s)); the server keeps its data`)
    return 1
  }
  // The state dir the server reads, from the same layers of settings it reads it from.
  const stateDir = loadConfig({ env: process.env }).stateDir
  recordActivated(stateDir, dir)
  const file = pidFile(stateDir)
  const pid = Number(pidText ?? (existsSync(file) ? readFileSync(file, 'utf8').trim() : NaN))
  if (!Number.isInteger(pid) || pid <= 0) {
    log(`almanac: ${dir} recorded in ${stateDir}; no running server found (no --pid, no ${file}): it is served from the next start`)
    return 0
  }
  try {
    process.kill(pid, 'SIGHUP')
  } catch (e) {
    log(
      `almanac: ${dir} recorded in ${stateDir}, but signalling pid ${pid} failed (${(e as Error).message}): it is served from the next ` +
        `start`,
    )
    return 1
  }
  log(`almanac: ${dir} recorded; SIGHUP sent to pid ${pid}: the server logs "datasets activated", or why it refused the directory`)
  return 0
}
