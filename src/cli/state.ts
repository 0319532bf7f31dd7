/**
 * `almanac state backup | restore`: a copy of the state directory (ALMANAC_STATE_DIR) that can be taken
 * while a server writes it, and put back into a fresh or stopped one.
 *
 * Each SQLite database is copied with `VACUUM INTO`: it reads inside one transaction, so in WAL mode it sees
 * one committed snapshot while the server keeps writing (a reader never blocks the writer, nor the other way
 * round), and it writes a compact file with no WAL beside it. `serialize()` would hold the whole database in
 * memory first, and `cp` can catch a page half-written. Databases are copied one after another: each is
 * consistent, not all at one instant (a key created during the backup may be in keys.sqlite without a usage
 * row, never a half-written row). The manifest, `backup.json`, is written last: a folder without it is an
 * interrupted backup, and restore refuses it.
 */
import { Database } from 'bun:sqlite'
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { join, resolve } from 'node:path'
import { loadConfig, settingOptions, type Config } from '../config.ts'
import { sha256File } from '../data/hashes.ts'
import { processAlive } from '../lib/orphans.ts'
import { activeDataFile, hasManifest } from '../data/activation.ts'
import { pidFile } from '../serve.ts'
import { APP_VERSION } from '../version.ts'
import { didYouMean } from '../lib/did-you-mean.ts'
import { type OptionSpec, parseCommand, UsageError } from './args.ts'
import { storeCommandFailed } from './keys.ts'
import { migrateRedisCommand } from './migrate-redis.ts'

export const STATE_USAGE = `usage: almanac state backup --to DIR
       almanac state restore --from DIR [--force]
       almanac state migrate-redis --from URL --to URL [--dry-run] [--replace]
  backup   copies ALMANAC_STATE_DIR into DIR (new or empty), also while a server runs: every SQLite database
           (keys.sqlite, quota.sqlite, usage.sqlite, qr-shares.sqlite, …) as a consistent snapshot of its own,
           the QR signing key and the active-data and previous-data pointers (not the data directories they
           name); DIR/backup.json, written last, lists them with sha256
  restore  puts such a backup into ALMANAC_STATE_DIR (created if missing), replacing those files. Stop the
           server first: restore refuses while the process in ALMANAC_STATE_DIR/almanac.pid runs (--force when
           that pid is no longer Almanac's). Run both as the server's user, with its ALMANAC_STATE_DIR (or --state-dir).
  migrate-redis  copies what the stores keep in one Redis into another (a single node into a Redis Cluster or
           a Sentinel group, or back), renamed as the stores name keys there: \`almanac state migrate-redis --help\`
Not in the state directory, so not in the backup: keys and quotas kept in Redis (back Redis up), QR images
(the local store's qr/ folder or S3; they expire).`

const MANIFEST = 'backup.json'
const FORMAT = 'almanac-state-backup/1'
/** Plain files of the state directory worth keeping (the pid file and quota.lock describe processes, not state). */
const PLAIN_FILES = ['qr-signing-key', 'active-data', 'previous-data']

interface BackedUp {
  name: string
  kind: 'sqlite' | 'file'
  bytes: number
  sha256: string
}

interface Manifest {
  format: string
  almanac: string
  created: string
  state_dir: string
  files: BackedUp[]
}

class StateCommandError extends Error {}

/** Copies one database with VACUUM INTO: a snapshot of what was committed when it began. */
function snapshot(source: string, target: string) {
  // Read-write so a WAL left by a crashed server can be read; nothing is written to the source.
  let db: Database
  try {
    db = new Database(source, { readwrite: true, create: false })
  } catch (e) {
    throw new StateCommandError(`cannot open ${source}: ${(e as Error).message}`)
  }
  try {
    db.exec('PRAGMA busy_timeout = 5000')
    db.query('VACUUM INTO ?').run(target)
  } catch (e) {
    throw new StateCommandError(`cannot copy ${source}: ${(e as Error).message}`)
  } finally {
    db.close()
  }
}

function backup(config: Config, to: string, out: (line: string) => void): number {
  const state = resolve(config.stateDir)
  if (!existsSync(state)) throw new StateCommandError(`${state} does not exist: there is no state to back up`)
  if (existsSync(to) && readdirSync(to).length > 0) throw new StateCommandError(`${to} is not empty: back up into a new or empty folder`)
  mkdirSync(to, { recursive: true, mode: 0o700 })
  const files: BackedUp[] = []
  const record = (name: string, kind: BackedUp['kind']) => {
    const target = join(to, name)
    // Key hashes, the usage record and the signing key: for the server's user alone, as in the state dir.
    chmodSync(target, 0o600)
    // Hashed in chunks: a usage ledger of many months need not be in memory at once.
    const bytes = statSync(target).size
    files.push({ name, kind, bytes, sha256: sha256File(target) })
    out(`${name}: ${bytes} bytes`)
  }
  for (const name of readdirSync(state)
    .filter((n) => n.endsWith('.sqlite'))
    .sort()) {
    snapshot(join(state, name), join(to, name))
    record(name, 'sqlite')
  }
  for (const name of PLAIN_FILES) {
    if (!existsSync(join(state, name))) continue
    copyFileSync(join(state, name), join(to, name))
    record(name, 'file')
  }
  const manifest: Manifest = { format: FORMAT, almanac: APP_VERSION, created: new Date().toISOString(), state_dir: state, files }
  writeFileSync(join(to, `${MANIFEST}.tmp`), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 })
  renameSync(join(to, `${MANIFEST}.tmp`), join(to, MANIFEST))
  out(`backed up ${files.length} files of ${state} into ${to}`)
  const pointer = existsSync(activeDataFile(state)) ? readFileSync(activeDataFile(state), 'utf8').trim() : ''
  // Data directories are rebuilt or re-activated from their bundle, never copied: they are the datasets, not state.
  if (pointer) out(`note: active-data names ${pointer}; that data directory itself is not in the backup`)
  for (const note of notInState(config)) out(note)
  return 0
}

/** What this configuration keeps outside the state directory, which a backup of it does not hold. */
function notInState(config: Config): string[] {
  const notes: string[] = []
  if (config.stores.keys.kind === 'redis') notes.push('note: API keys are in Redis (ALMANAC_KEY_STORE), not in this backup: back Redis up')
  if (config.stores.quota.kind === 'redis')
    notes.push('note: quota counters and the usage ledger are in Redis (ALMANAC_QUOTA_STORE), not in this backup: back Redis up')
  return notes
}

/** The manifest of a complete backup in `from`, each file checked against its sha256. */
function readBackup(from: string): Manifest {
  const path = join(from, MANIFEST)
  if (!existsSync(path)) throw new StateCommandError(`${from} holds no ${MANIFEST}: not a backup, or one that did not finish`)
  const manifest = JSON.parse(readFileSync(path, 'utf8')) as Manifest
  if (manifest.format !== FORMAT) throw new StateCommandError(`${path}: format ${JSON.stringify(manifest.format)}, expected ${FORMAT}`)
  for (const file of manifest.files) {
    if (file.name.includes('/') || file.name.startsWith('.'))
      throw new StateCommandError(`${path}: bad file name ${JSON.stringify(file.name)}`)
    if (!existsSync(join(from, file.name)) || sha256File(join(from, file.name)) !== file.sha256)
      throw new StateCommandError(`${join(from, file.name)} is missing or differs from ${MANIFEST}`)
  }
  return manifest
}

/** The pid of a server that still runs on `state`, when its pid file says so. */
function runningServer(state: string): number | undefined {
  const file = pidFile(state)
  if (!existsSync(file)) return undefined
  const pid = Number(readFileSync(file, 'utf8').trim())
  return Number.isInteger(pid) && pid > 0 && processAlive(pid) ? pid : undefined
}

function restore(config: Config, from: string, force: boolean, out: (line: string) => void): number {
  const manifest = readBackup(from)
  const state = resolve(config.stateDir)
  const pid = runningServer(state)
  if (pid !== undefined && !force)
    throw new StateCommandError(
      `a server (pid ${pid}, from ${pidFile(state)}) is running on ${state}: stop it, restore, then start it ` +
        '(--force if that pid is no longer Almanac)',
    )
  mkdirSync(state, { recursive: true, mode: 0o700 })
  for (const file of manifest.files) {
    const target = join(state, file.name)
    const temp = join(state, `.restore-${process.pid}-${file.name}`)
    copyFileSync(join(from, file.name), temp)
    chmodSync(temp, 0o600)
    // A WAL or shared-memory file left beside the old database would be replayed onto the restored one.
    if (file.kind === 'sqlite') for (const suffix of ['-wal', '-shm', '-journal']) rmSync(target + suffix, { force: true })
    renameSync(temp, target)
    out(`${file.name}: restored`)
  }
  const pointer = manifest.files.some((f) => f.name === 'active-data') ? readFileSync(activeDataFile(state), 'utf8').trim() : undefined
  if (pointer && !hasManifest(pointer))
    out(`note: active-data names ${pointer}, which holds no manifest.json here: the server serves its default data directory`)
  out(`restored ${manifest.files.length} files of the backup of ${manifest.created} into ${state}`)
  return 0
}

/** Runs `almanac state`; returns the process exit code. */
export async function stateCommand(
  args: string[],
  env: Record<string, string | undefined> = process.env,
  out: (line: string) => void = (l) => console.log(l),
  log: (line: string) => void = (l) => console.error(l),
): Promise<number> {
  const [sub, ...rest] = args
  const text = { type: 'string' } as const
  if (sub === undefined) {
    log(STATE_USAGE)
    return 2
  }
  if (sub === '--help' || sub === '-h' || sub === 'help') {
    out(STATE_USAGE)
    return 0
  }
  if (sub === 'migrate-redis') return migrateRedisCommand(rest, out, log)
  const subs = ['backup', 'restore', 'migrate-redis']
  if (sub !== 'backup' && sub !== 'restore')
    throw new UsageError(`state ${JSON.stringify(sub)}: expected ${subs.join(', ')}${didYouMean(sub, subs)}`)
  const flagSpec: OptionSpec = sub === 'backup' ? { to: text } : { from: text, force: { type: 'boolean' } }
  const parsed = parseCommand(rest, { ...settingOptions(), ...flagSpec })
  if (parsed.help) {
    out(STATE_USAGE)
    return 0
  }
  const dir = parsed.values[sub === 'backup' ? 'to' : 'from'] as string | undefined
  if (!dir) throw new UsageError(`state ${sub} needs ${sub === 'backup' ? '--to' : '--from'} DIR`)
  try {
    const config = loadConfig({ env, argv: rest })
    return sub === 'backup' ? backup(config, resolve(dir), out) : restore(config, resolve(dir), parsed.values.force === true, out)
  } catch (e) {
    if (e instanceof StateCommandError) {
      log(`almanac: ${e.message}`)
      return 1
    }
    return storeCommandFailed(e, log)
  }
}
