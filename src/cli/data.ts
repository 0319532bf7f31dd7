/**
 * `almanac data build | fetch | verify | extract | pack | activate | rollback | status`: building datasets
 * from upstream files (source tree only), downloading every upstream into a mirror-like folder for an
 * air-gapped build, checking the data a server serves (or any directory) against its manifest, extracting
 * the executable's datasets ahead of time (for read-only deployments), carrying data to another server
 * in one bundle file and swapping it in there without downtime, and going back to the data served before.
 */
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { type Config, loadConfig } from '../config.ts'
import { sources } from '../../datasets/sources.ts'
import {
  activatedDir,
  bundlesDir,
  previousData,
  previousDataFile,
  recordActivated,
  recordRollback,
  removeUnreachableBundles,
  hasManifest,
} from '../data/activation.ts'
import { buildDatasets } from '../data/build.ts'
import { BundleError, type PackSource, packBundle, privateKeyFrom, publicKeyFrom, unpackBundle } from '../data/bundle.ts'
import { embeddedData } from '../data/embedded.ts'
import { cacheRoot, embeddedArtifact, extractEmbedded } from '../data/extract.ts'
import { fetchSources } from '../data/fetch.ts'
import { type DataSource, dataSource, describeSource, readManifest, reloadDir, sourceDir, sourceReady } from '../data/open.ts'
import { mebibytes, verifiedSummary, verifyDataDir } from '../data/verify.ts'
import { domains } from '../domains/index.ts'
import { pidFile } from '../serve.ts'
import { APP_VERSION } from '../version.ts'
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
      re-hash every artifact against manifest.json: DIR, else the data a server started here serves (the
      directory \`data activate\` recorded, else ALMANAC_DATA_DIR, else the executable's datasets, extracted
      first if they are not yet, else datasets/out), naming which; nothing to verify is a failure (exit 1)
  almanac data extract [--to DIR]
      (executable) write the embedded datasets into DIR/<content hash> now, not at first start
  almanac data pack --out FILE [--only <domain|dataset>[,…]] [--sign-key KEYFILE] [--data-dir DIR] [--no-compress]
      write the datasets (those of --only: activation completes the others from the data in service) into
      one bundle FILE for \`data activate\` on another server, with no checkout, Bun or network there; from
      DIR, else the data a server here serves (a checkout's datasets/out, the executable's own). --sign-key
      signs it with an Ed25519 private key (PEM: openssl genpkey -algorithm ed25519 -out KEYFILE)
  almanac data activate DIR|BUNDLE [--pid PID]
      check DIR (every artifact against its manifest.json), record it as the data directory to serve
      (ALMANAC_STATE_DIR/active-data, kept across restarts) and send SIGHUP to the running server (PID, else
      the pid in ALMANAC_STATE_DIR/almanac.pid): it opens DIR, checks it again and swaps it in, or logs why not.
      A BUNDLE file is first unpacked into a new ALMANAC_STATE_DIR/data/<dir> and checked (every artifact; its
      signature when ALMANAC_DATA_BUNDLE_PUBLIC_KEY is set); a refused one changes nothing. The data served
      before is kept for \`data rollback\`; older unpacked bundles are removed
  almanac data rollback [--pid PID]
      serve again the data served before the last activation (checked, recorded and signalled as activate)
  almanac data status [--url URL]
      ask a running server (default http://127.0.0.1:$ALMANAC_PORT) for its /readyz: prints it, exits 0
      only when it is ready (the container healthcheck; needs no curl)`

const SUBCOMMANDS = new Map<string, OptionSpec>([
  ['build', { only: { type: 'string' }, force: { type: 'boolean' }, offline: { type: 'boolean' }, out: { type: 'string' } }],
  ['fetch', { to: { type: 'string' } }],
  ['verify', { 'data-dir': { type: 'string' } }],
  [
    'pack',
    {
      out: { type: 'string' },
      only: { type: 'string' },
      'sign-key': { type: 'string' },
      'data-dir': { type: 'string' },
      'no-compress': { type: 'boolean' },
    },
  ],
  ['rollback', { pid: { type: 'string' } }],
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
            'built; to serve newer ones, build them in a checkout, `almanac data pack --out FILE` there, carry FILE here and ' +
            '`almanac data activate FILE` (`almanac data --help`).',
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
    case 'verify':
      return verify(text('data-dir'), log)
    case 'pack':
      return pack(values, log)
    case 'activate': {
      const target = positionals[0]
      if (!target || positionals.length > 1) throw new UsageError(`data activate needs one DIR or BUNDLE file\n${DATA_USAGE}`)
      return activate(resolve(target), text('pid'), log)
    }
    case 'rollback':
      return rollback(text('pid'), log)
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

/** The settings that choose the data directory, as a server started here would read them. */
const settingsHere = (): Config => loadConfig({ env: process.env })

/** The data a server started here serves: its directory, why that one, and whether it is there yet. */
const servedHere = (config: Config): DataSource => dataSource({ dataDir: config.dataDir, stateDir: config.stateDir, env: process.env })

/** `data verify`: DIR, else the data a server started here serves; nothing to verify is a failure. */
async function verify(given: string | undefined, log: (line: string) => void): Promise<number> {
  let dir: string
  let why: string
  if (given) [dir, why] = [resolve(given), '--data-dir']
  else {
    const source = servedHere(settingsHere())
    why = describeSource(source)
    if (source.from === 'embedded' && !sourceReady(source))
      log(`almanac: the executable's datasets are not extracted into ${source.dir} yet; extracting them, as a server's first start would`)
    dir = await sourceDir(source, log)
  }
  log(`almanac: verifying ${dir}: ${why}`)
  const v = await verifyDataDir(dir)
  if (v.nothing) {
    log(`almanac: nothing to verify: ${v.nothing} (looked there: ${why}); a verification with nothing to check fails`)
    return 1
  }
  for (const p of v.problems) log(`almanac: ${p}`)
  log(v.problems.length ? `${dir}: ${v.problems.length} problem(s)` : `${dir}: ${verifiedSummary(v)}: every artifact matches manifest.json`)
  return v.problems.length ? 1 : 0
}

/** The datasets `--only` names: a domain's name stands for its datasets (as in `data build --only`), else a dataset id. */
function datasetsNamed(only: string | undefined, manifest: { datasets: Record<string, unknown> }): string[] | undefined {
  if (only === undefined) return undefined
  const names = only
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  if (!names.length) throw new UsageError('--only needs at least one domain or dataset name')
  const ids = names.flatMap((name) => {
    const domain = domains.find((d) => d.name === name)
    const of = domain ? domain.datasets.filter((id) => manifest.datasets[id]) : []
    return of.length ? of : [name]
  })
  return [...new Set(ids)]
}

/** Where `data pack` reads: DIR, else the data a server here serves; the executable's own straight from inside it when not extracted. */
function packSource(given: string | undefined): PackSource & { why: string } {
  const fromDir = (dir: string, why: string) => {
    if (!hasManifest(dir))
      throw new BundleError(
        `${dir} holds no manifest.json: nothing to pack (looked there: ${why}); build the datasets with ` +
          `\`almanac data build\`, or name a directory with --data-dir`,
      )
    const read = (name: string) => createReadStream(join(dir, name), { highWaterMark: 2 ** 20 })
    return { dir, why, manifest: readManifest(dir), read }
  }
  if (given) return fromDir(resolve(given), '--data-dir')
  const source = servedHere(settingsHere())
  if (source.from !== 'embedded' || sourceReady(source)) return fromDir(source.dir, describeSource(source))
  const embedded = source.embedded
  return {
    dir: 'the executable',
    why: "the executable's own datasets, read from inside it",
    manifest: JSON.parse(readFileSync(embedded.manifest, 'utf8')),
    read: (name) => embeddedArtifact(embedded, name),
  }
}

/** `data pack`: one bundle file of the datasets, for `data activate` on another server. */
async function pack(values: Record<string, string | boolean | undefined>, log: (line: string) => void): Promise<number> {
  const out = values.out as string | undefined
  if (!out) throw new UsageError(`data pack needs --out FILE\n${DATA_USAGE}`)
  try {
    const source = packSource(values['data-dir'] as string | undefined)
    const only = datasetsNamed(values.only as string | undefined, source.manifest)
    const signKey = values['sign-key'] ? privateKeyFrom(values['sign-key'] as string) : undefined
    log(`almanac: packing ${only ? only.join(', ') : 'every dataset'} of ${source.dir} (${source.why})`)
    const packed = await packBundle(source, { out, only, signKey, compress: values['no-compress'] !== true, appVersion: APP_VERSION })
    const { header } = packed
    log(
      `almanac: ${packed.file}: ${header.datasets.length} dataset(s), ${header.artifacts} artifact(s), ${mebibytes(header.bytes)} of ` +
        `data in ${mebibytes(packed.bytes)}; sha256 ${packed.sha256}; ` +
        (packed.signedBy ? `signed by key ${packed.signedBy}` : 'not signed'),
    )
    if (header.partial)
      log(`almanac: a partial bundle (${header.datasets.join(', ')}): \`data activate\` takes the other datasets from the data in service`)
    console.log(packed.file)
    return 0
  } catch (e) {
    if (!(e instanceof BundleError)) throw e
    log(`almanac: ${e.message}`)
    return 1
  }
}

/** `data activate DIR|BUNDLE`: a directory is checked as it is; a bundle file is unpacked and checked first. */
async function activate(target: string, pidText: string | undefined, log: (line: string) => void): Promise<number> {
  if (!existsSync(target)) {
    log(`almanac: ${target} does not exist: name a data directory or a bundle file (\`almanac data pack\`)`)
    return 1
  }
  const config = settingsHere()
  if (!statSync(target).isDirectory()) return activateBundle(target, config, pidText, log)
  const v = await verifyDataDir(target)
  if (v.nothing) {
    log(`almanac: ${v.nothing}; build one with \`almanac data build --out ${target}\``)
    return 1
  }
  for (const p of v.problems) log(`almanac: ${p}`)
  if (v.problems.length) {
    log(`almanac: ${target} refused (${v.problems.length} problem(s)); the server keeps its data`)
    return 1
  }
  return record(config, target, pidText, log)
}

/** Unpacks the bundle into a new directory of the state dir, checked whole, then activates that. */
async function activateBundle(file: string, config: Config, pidText: string | undefined, log: (line: string) => void): Promise<number> {
  const into = bundlesDir(config.stateDir)
  let unpacked: Awaited<ReturnType<typeof unpackBundle>>
  try {
    const publicKey = config.dataBundlePublicKey === undefined ? undefined : publicKeyFrom(config.dataBundlePublicKey)
    log(`almanac: unpacking ${file} into ${into}`)
    // What a SIGHUP would serve now: the bundle must not be unpacked over it.
    const served = () => reloadDir({ dataDir: config.dataDir, stateDir: config.stateDir, env: process.env }, log)
    unpacked = await unpackBundle({ file, into, publicKey, served })
  } catch (e) {
    if (!(e instanceof BundleError)) throw e
    log(`almanac: ${e.message}`)
    log('almanac: nothing was activated; the data in service is untouched')
    return 1
  }
  const { header } = unpacked
  if (unpacked.verifiedBy) log(`almanac: signature by key ${unpacked.verifiedBy} verified`)
  else if (unpacked.uncheckedSignature)
    log(`almanac: signed by key ${unpacked.uncheckedSignature}, not checked: ALMANAC_DATA_BUNDLE_PUBLIC_KEY is not set`)
  else log('almanac: the bundle is not signed (ALMANAC_DATA_BUNDLE_PUBLIC_KEY is not set, so none is required)')
  if (header.app_version !== APP_VERSION)
    log(
      `almanac: packed by almanac ${header.app_version}, this is ${APP_VERSION}: the server refuses the data if a domain cannot ` +
        `open it`,
    )
  log(
    `almanac: ${unpacked.dir}: ${header.datasets.join(', ')} from the bundle, every artifact checked` +
      (unpacked.completed.length ? `; ${unpacked.completed.join(', ')} from the data in service (${unpacked.completedFrom})` : ''),
  )
  return record(config, unpacked.dir, pidText, log)
}

/** `data rollback`: the data served before the last activation, checked, recorded and signalled. */
async function rollback(pidText: string | undefined, log: (line: string) => void): Promise<number> {
  const config = settingsHere()
  const back = previousData(config.stateDir)
  if (!back) {
    log(`almanac: nothing to roll back to: no activation is recorded in ${config.stateDir} (no ${previousDataFile(config.stateDir)})`)
    return 1
  }
  let what: string
  if (back.dir !== null) {
    const v = await verifyDataDir(back.dir)
    const why = v.nothing ?? (v.problems.length ? v.problems.join('; ') : undefined)
    if (why) {
      log(`almanac: cannot roll back to ${back.dir}: ${why}; the server keeps its data`)
      return 1
    }
    what = back.dir
  } else {
    // Nothing was activated before: the data the settings choose (ALMANAC_DATA_DIR, the executable's own, datasets/out).
    const source = dataSource({ dataDir: config.dataDir, env: process.env })
    if (source.from !== 'embedded' && !sourceReady(source)) {
      log(`almanac: cannot roll back to ${describeSource(source)}: ${source.dir} holds no manifest.json; the server keeps its data`)
      return 1
    }
    what = `${await sourceDir(source, log)} (${describeSource(source)}, as before any activation)`
  }
  const was = activatedDir(config.stateDir)
  recordRollback(config.stateDir)
  log(
    `almanac: rolling back to ${what}; ${was ?? 'the data served before any activation'} is kept as the previous ` +
      `(\`data rollback\` again returns to it)`,
  )
  return signal(config.stateDir, what, pidText, log)
}

/** Records `dir` as the data to serve (the one served until now kept as the previous), signals the server, removes older bundles. */
function record(config: Config, dir: string, pidText: string | undefined, log: (line: string) => void): number {
  recordActivated(config.stateDir, dir)
  for (const old of removeUnreachableBundles(config.stateDir)) log(`almanac: removed ${old} (older than the previous data)`)
  return signal(config.stateDir, dir, pidText, log)
}

/** SIGHUP to the running server (PID, else the pid file's): it swaps in what the state dir now records. */
function signal(stateDir: string, what: string, pidText: string | undefined, log: (line: string) => void): number {
  const file = pidFile(stateDir)
  const pid = Number(pidText ?? (existsSync(file) ? readFileSync(file, 'utf8').trim() : NaN))
  if (!Number.isInteger(pid) || pid <= 0) {
    log(`almanac: ${what} recorded in ${stateDir}; no running server found (no --pid, no ${file}): it is served from the next start`)
    return 0
  }
  try {
    process.kill(pid, 'SIGHUP')
  } catch (e) {
    log(
      `almanac: ${what} recorded in ${stateDir}, but signalling pid ${pid} failed (${(e as Error).message}): it is served from the next ` +
        `start`,
    )
    return 1
  }
  log(`almanac: ${what} recorded; SIGHUP sent to pid ${pid}: the server logs "datasets activated", or why it refused the directory`)
  return 0
}
