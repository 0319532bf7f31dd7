/**
 * `almanac keys create | list | update | rotate | revoke | audit`: API keys in the key store
 * ALMANAC_KEY_STORE names (the state dir's SQLite, or Redis). A new key (create, rotate) is printed once,
 * alone on stdout, so `KEY=$(almanac keys create …)` works; only its SHA-256 is kept. A running server sees
 * every change at once with SQLite (it looks each key up per request), within a second with Redis (see
 * keys-redis.ts). Every change is recorded in the store's audit log as `cli:<OS user>`.
 *
 * The driver here (`runStoreCommand`) also runs `almanac customers` (customers.ts).
 */
import { userInfo } from 'node:os'
import { ConfigError, loadConfig, settingOptions, type Config } from '../config.ts'
import { domains } from '../domains/index.ts'
import { redactUrl } from '../stores/redis.ts'
import { createKeyStore } from '../stores/index.ts'
import {
  KeyStoreError,
  MAX_GRACE_SECONDS,
  type AuditEntry,
  type AuditValue,
  type Customer,
  type KeyChanges,
  type KeyStore,
  type StoredKey,
} from '../stores/keys.ts'
import { StateError } from '../stores/sqlite.ts'
import { didYouMean } from '../lib/did-you-mean.ts'
import { parseCommand, UsageError, type OptionSpec } from './args.ts'

export const KEYS_USAGE = `usage:
  almanac keys create --name NAME [--plan PLAN] [--scopes ip,ua,…] [--expires DATE] [--customer ID|NAME] [--json]
      issue a key (printed once, alone on stdout); without --plan the key follows ALMANAC_DEFAULT_PLAN;
      --scopes limits it to those domains; --expires (2027-01-01 or an ISO 8601 time) refuses it from that
      moment (UTC); --customer makes it spend that customer's credits on the customer's plan (its own plan
      is then unused)
  almanac keys list [--json]
      every key's id, name, plan, customer, scopes, expiry, creation and revocation time (never the key)
  almanac keys update <id | name> [--name NAME] [--plan PLAN|default] [--scopes ip,ua|all] [--expires DATE|never]
                      [--customer ID|NAME|none] [--json]
      change a key and keep its secret
  almanac keys rotate <id | name> [--grace 24h] [--json]
      a new secret for the key (printed once, alone on stdout); the old one still works for the grace (s, m,
      h or d; 0: refused at once), and any older one still in its grace gets no longer than that
  almanac keys revoke <id | name> [--json]
      refuse the key from now on (a name matches the active key of that name)
  almanac keys audit [--since 7d|DATE] [--limit N] [--json]
      who created, changed, rotated or revoked keys and customers, and what changed; newest first (100)
Keys live in ALMANAC_KEY_STORE (--key-store): sqlite, in ALMANAC_STATE_DIR/keys.sqlite (--state-dir), or a
redis:// URL (the default when ALMANAC_QUOTA_STORE is Redis); plans are ALMANAC_PLANS (--plans). A running
server sees changes at once (sqlite) or within a second (redis). Changes are recorded as cli:<OS user>.
Customers (accounts whose keys share one quota): almanac customers --help.`

/** A flag's value this command cannot use: exit 2, before anything is written. */
class FlagError extends Error {}

const DATE = /^\d{4}-\d{2}-\d{2}$/
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/
const DURATION_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 }

/** A date (its midnight UTC) or an ISO 8601 time with a zone, as ms; NaN when it is neither. */
const parseMoment = (raw: string) => (DATE.test(raw) ? Date.parse(`${raw}T00:00:00Z`) : DATE_TIME.test(raw) ? Date.parse(raw) : NaN)

/** `--expires`: a date (its midnight UTC) or an ISO 8601 time with a zone, in the future; else why not. */
export function parseExpiry(raw: string, now = Date.now()): { at: string } | { error: string } {
  const ms = parseMoment(raw)
  if (Number.isNaN(ms))
    return { error: `--expires ${JSON.stringify(raw)}: expected a date such as 2027-01-01 or a time such as 2027-01-01T12:00:00Z` }
  if (ms <= now) return { error: `--expires ${JSON.stringify(raw)}: that moment has passed` }
  return { at: new Date(ms).toISOString() }
}

/** `--scopes ip,ua`: domain names this server has; else why not. */
export function parseScopes(raw: string): { scopes: string[] } | { error: string } {
  const scopes = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  const known = domains.map((d) => d.name)
  if (!scopes.length) return { error: '--scopes: no domain named; leave it out for a key that may call every domain' }
  const unknown = scopes.find((s) => !known.includes(s))
  if (unknown !== undefined)
    return { error: `--scopes: ${JSON.stringify(unknown)} is not a domain${didYouMean(unknown, known)} (domains: ${known.join(', ')})` }
  return { scopes: [...new Set(scopes)] }
}

/** `--grace 24h`, `--since 7d`: whole seconds, minutes, hours or days (a bare number is seconds). */
export function parseDuration(raw: string, flag: string): number {
  const m = /^(\d+)([smhd]?)$/.exec(raw.trim())
  if (!m) throw new FlagError(`--${flag} ${JSON.stringify(raw)}: expected a duration such as 30m, 24h or 7d`)
  return Number(m[1]) * DURATION_UNITS[m[2] || 's']!
}

const unwrap = <T>(parsed: T | { error: string }): T => {
  if (parsed && typeof parsed === 'object' && 'error' in parsed) throw new FlagError(parsed.error)
  return parsed as T
}

/** `--plan`: a configured plan, or `default` (null: ALMANAC_DEFAULT_PLAN at each request) where allowed. */
export function planFlag(raw: string, config: Pick<Config, 'plans'>, allowDefault: boolean): string | null {
  if (allowDefault && raw === 'default') return null
  if (config.plans.has(raw)) return raw
  throw new FlagError(
    `--plan ${JSON.stringify(raw)} is not among the configured plans (${[...config.plans.keys()].join(', ')})${
      allowDefault ? ', nor "default"' : ''
    }; set ALMANAC_PLANS as the server does`,
  )
}

/** Who the audit log names for this command: the OS user (the name, else the uid where no passwd entry exists). */
export function operator(): string {
  try {
    return `cli:${userInfo().username}`
  } catch {
    return `cli:${process.env.USER || `uid-${process.getuid?.() ?? 'unknown'}`}`
  }
}

/** The store in words, without a password. */
export const where = (config: Pick<Config, 'stores'>) => {
  const store = config.stores.keys
  return store.kind === 'sqlite' ? `${store.dir}/keys.sqlite` : redactUrl(store.url)
}

/** Rows as columns two spaces apart, the last one unpadded. */
export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)))
  return rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')
}

export const printJson = (value: unknown) => console.log(JSON.stringify(value, null, 2))

/** What a subcommand is given: its flags, its target (the id or name after it), and the store, opened on first use. */
export interface CommandContext {
  config: Config
  flags: Map<string, string>
  target: string
  json: boolean
  log: (line: string) => void
  store(): KeyStore
}

export interface StoreCommand {
  /** Its own flags; --json and the settings' flags (--state-dir, --key-store, --plans, …) are always taken. */
  options?: OptionSpec
  /** Takes an id or a name (`keys revoke NAME`). */
  target?: boolean
  run(context: CommandContext): Promise<number>
}

/** Parses `args` for one of `commands`, runs it, and answers the exit code (2: usage, 1: the store refused or failed). */
export async function runStoreCommand(
  group: string,
  usage: string,
  commands: Record<string, StoreCommand>,
  args: string[],
  env: Record<string, string | undefined>,
  log: (line: string) => void,
): Promise<number> {
  const [sub, ...rest] = args
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    console.log(usage)
    return 0
  }
  const command = Object.hasOwn(commands, sub) ? commands[sub] : undefined
  if (!command) {
    const names = Object.keys(commands)
    throw new UsageError(`unknown ${group} command ${JSON.stringify(sub)}${didYouMean(sub, names)}\n${usage}`)
  }
  // `--json` never takes a value: `keys revoke --json NAME` revokes NAME. The settings' flags are
  // accepted too (--state-dir, --plans, --config …), as the server takes them.
  const parsed = parseCommand(rest, { ...settingOptions(), json: { type: 'boolean' }, ...command.options }, command.target === true)
  if (parsed.help) {
    console.log(usage)
    return 0
  }
  const target = parsed.positionals[0] ?? ''
  if (command.target && !target) {
    log(`almanac: ${group} ${sub} needs an id or a name\n${usage}`)
    return 2
  }
  const flags = new Map(Object.entries(parsed.values).filter(([, v]) => typeof v === 'string') as [string, string][])
  let store: KeyStore | undefined
  try {
    const config = loadConfig({ env, argv: rest })
    const json = parsed.values.json === true
    return await command.run({ config, flags, target, json, log, store: () => (store ??= createKeyStore(config)) })
  } catch (e) {
    return storeCommandFailed(e, log)
  } finally {
    store?.close()
  }
}

/** How a command over the state stores ends on a failure: its exit code, the reason said in one line (or thrown on, when unexpected). */
export function storeCommandFailed(e: unknown, log: (line: string) => void): number {
  if (e instanceof FlagError) {
    log(`almanac: ${e.message}`)
    return 2
  }
  if (e instanceof ConfigError) {
    log(`almanac: configuration error: ${e.message}`)
    return 2
  }
  if (e instanceof KeyStoreError || e instanceof StateError || /^Redis at /.test((e as Error)?.message ?? '')) {
    log(`almanac: ${(e as Error).message}`)
    return 1
  }
  throw e
}

const KEY_FIELDS: OptionSpec = {
  name: { type: 'string' },
  plan: { type: 'string' },
  scopes: { type: 'string' },
  expires: { type: 'string' },
  customer: { type: 'string' },
}

/** `keys update`'s flags as changes; `default`, `all`, `never` and `none` clear a field. */
function keyChanges(flags: Map<string, string>, config: Config): KeyChanges {
  const changes: KeyChanges = {}
  const given = (flag: string) => flags.get(flag)
  if (given('name') !== undefined) changes.name = given('name')!
  if (given('plan') !== undefined) changes.plan = planFlag(given('plan')!, config, true)
  if (given('scopes') !== undefined) changes.scopes = given('scopes') === 'all' ? null : unwrap(parseScopes(given('scopes')!)).scopes
  if (given('expires') !== undefined) changes.expires = given('expires') === 'never' ? null : unwrap(parseExpiry(given('expires')!)).at
  if (given('customer') !== undefined) changes.customer = given('customer') === 'none' ? null : given('customer')!
  if (!Object.keys(changes).length)
    throw new FlagError('keys update: name what to change (--name, --plan, --scopes, --expires, --customer)')
  return changes
}

const planWords = (plan: string | null, config: Config) => plan ?? `${config.defaultPlan} (default)`

/** How `keys create` and `keys update` describe a key on stderr. */
function describe(key: StoredKey, config: Config): string {
  const parts = [
    key.customer
      ? `customer ${key.customer}${key.plan ? `; its own plan ${key.plan} is unused while it has one` : ''}`
      : `plan ${planWords(key.plan, config)}`,
  ]
  if (key.scopes) parts.push(`scopes ${key.scopes.join(',')}`)
  if (key.expires) parts.push(`expires ${key.expires}`)
  return `${key.id} (${key.name}, ${parts.join(', ')})`
}

async function create({ config, flags, json, log, store }: CommandContext): Promise<number> {
  const name = flags.get('name')
  if (!name) throw new FlagError('keys create needs --name NAME')
  const plan = flags.has('plan') ? planFlag(flags.get('plan')!, config, false) : null
  const scopes = flags.has('scopes') ? unwrap(parseScopes(flags.get('scopes')!)).scopes : null
  const expires = flags.has('expires') ? unwrap(parseExpiry(flags.get('expires')!)).at : null
  const { key, record } = await store().create({ name, plan, scopes, expires, customer: flags.get('customer') ?? null }, operator())
  if (json) printJson({ ...record, key })
  else {
    console.log(key)
    log(`created ${describe(record, config)} in ${where(config)}; the key above is shown only this once`)
  }
  return 0
}

/** The PLAN and CUSTOMER cells of a key: a customer's key uses its customer's plan. */
function planAndCustomer(key: StoredKey, customers: Map<string, Customer>): [string, string] {
  if (!key.customer) return [key.plan ?? '(default)', '-']
  const customer = customers.get(key.customer)
  return [`${customer?.plan ?? '(default)'} (customer)`, customer?.name ?? key.customer]
}

async function list({ json, store }: CommandContext): Promise<number> {
  const keys = await store().list()
  if (json) printJson(keys)
  else if (!keys.length) console.log('no keys')
  else {
    const customers = new Map((await store().listCustomers()).map((c) => [c.id, c]))
    const rows = keys.map((k) => {
      const [plan, customer] = planAndCustomer(k, customers)
      return [k.id, k.name, plan, customer, k.scopes?.join(',') ?? '(all)', k.expires ?? '-', k.created, k.revoked ?? '-']
    })
    console.log(table([['ID', 'NAME', 'PLAN', 'CUSTOMER', 'SCOPES', 'EXPIRES', 'CREATED', 'REVOKED'], ...rows]))
  }
  return 0
}

async function update({ config, flags, target, json, log, store }: CommandContext): Promise<number> {
  const record = await store().update(target, keyChanges(flags, config), operator())
  if (json) printJson(record)
  else log(`updated ${describe(record, config)}`)
  return 0
}

async function rotate({ flags, target, json, log, store }: CommandContext): Promise<number> {
  const graceSeconds = parseDuration(flags.get('grace') ?? '24h', 'grace')
  if (graceSeconds > MAX_GRACE_SECONDS) throw new FlagError(`--grace ${flags.get('grace')}: at most 90d`)
  const { key, record, previousUntil } = await store().rotate(target, { graceSeconds }, operator())
  if (json) printJson({ ...record, key, previousUntil })
  else {
    console.log(key)
    log(
      `rotated ${record.id} (${record.name}): the old key ${graceSeconds ? `works until ${previousUntil}` : 'is refused from now'}; ` +
        'the key above is shown only this once',
    )
  }
  return 0
}

async function revoke({ target, json, log, store }: CommandContext): Promise<number> {
  const revoked = await store().revoke(target, operator())
  if (json) printJson(revoked)
  else log(`revoked ${revoked.id} (${revoked.name}) at ${revoked.revoked}`)
  return 0
}

/** `--since`: a duration back from now (7d) or a date or time. */
function sinceFlag(raw: string): string {
  const moment = parseMoment(raw)
  if (!Number.isNaN(moment)) return new Date(moment).toISOString()
  return new Date(Date.now() - parseDuration(raw, 'since') * 1000).toISOString()
}

const auditValue = (v: AuditValue) => (v === null ? '-' : Array.isArray(v) ? v.join(',') : v)
const changeWords = (e: AuditEntry) =>
  Object.entries(e.changes)
    .map(([field, { from, to }]) => `${field}: ${auditValue(from)} → ${auditValue(to)}`)
    .join('; ')

async function audit({ flags, json, store }: CommandContext): Promise<number> {
  const limit = flags.has('limit') ? Number(flags.get('limit')) : undefined
  if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1 && limit <= 10_000))
    throw new FlagError(`--limit ${JSON.stringify(flags.get('limit'))}: expected a whole number from 1 to 10000`)
  const since = flags.has('since') ? sinceFlag(flags.get('since')!) : undefined
  const entries = await store().audit({ limit, since })
  if (json) printJson(entries)
  else if (!entries.length) console.log('no changes recorded')
  else
    console.log(
      table([['AT', 'ACTOR', 'ACTION', 'TARGET', 'CHANGES'], ...entries.map((e) => [e.at, e.actor, e.action, e.target, changeWords(e)])]),
    )
  return 0
}

const KEY_COMMANDS: Record<string, StoreCommand> = {
  create: { options: KEY_FIELDS, run: create },
  list: { run: list },
  update: { options: KEY_FIELDS, target: true, run: update },
  rotate: { options: { grace: { type: 'string' } }, target: true, run: rotate },
  revoke: { target: true, run: revoke },
  audit: { options: { since: { type: 'string' }, limit: { type: 'string' } }, run: audit },
}

/** Runs the subcommand; returns the process exit code. */
export function keysCommand(
  args: string[],
  env: Record<string, string | undefined> = process.env,
  log: (line: string) => void = (l) => console.error(l),
): Promise<number> {
  return runStoreCommand('keys', KEYS_USAGE, KEY_COMMANDS, args, env, log)
}
