/**
 * One typed configuration, layered: defaults < config file (`--config path.json`) < `ALMANAC_*`
 * environment < command-line flags. Every setting is declared once in SCHEMA (lib/settings.ts): its
 * parser, default, names in each layer and one line on what it does. The Config type, DEFAULTS, the
 * flags, the README table (`bun scripts/settings-table.ts`) and `almanac serve --help` are derived from
 * it, and a bad value anywhere is reported with the name the operator used. Shared settings (server, auth,
 * quotas, stores, http, query workers) are declared here; each domain's in its folder (`settings.ts`),
 * composed below under the domain's name.
 */
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { didYouMean, nearest } from './lib/did-you-mean.ts'
import { bibleSettings } from './domains/bible/settings.ts'
import { emailSettings } from './domains/email/settings.ts'
import { hashSettings } from './domains/hash/settings.ts'
import { ipSettings } from './domains/ip/settings.ts'
import { postalSettings } from './domains/postal/settings.ts'
import { qrSettings } from './domains/qr/settings.ts'
import { uaSettings } from './domains/ua/settings.ts'
import { boolean, fail, integer, list, oneOf, origins, storeSetting, text } from './lib/parsers.ts'
import { ConfigError, defaultsOf, entriesOf, optional, setting, type Parser, type ValuesOf } from './lib/settings.ts'

export { ConfigError }

export type ResponseForm = 'enveloped' | 'bare'

export interface Plan {
  name: string
  credits: number
  /**
   * A fixed window's length. A monthly plan's window follows the calendar (src/stores/quota.ts `quotaWindow`
   * gives it, and its length); this is then the longest a month can be (31 days), a bound for sizing only.
   */
  windowSeconds: number
  /** `1mo`: the window is the UTC calendar month, reset at 00:00 UTC on the 1st. */
  calendar?: 'month'
}

/** `ops:<token>,ci:<token>`: operator credentials of the operator API and console, each named for the audit log. */
const adminTokens: Parser<{ name: string; token: string }[]> = (raw, name) =>
  list(raw, name).map((entry) => {
    const at = entry.indexOf(':')
    const [who, token] = [entry.slice(0, at), entry.slice(at + 1)]
    if (at < 1 || !/^[A-Za-z0-9_.-]{1,64}$/.test(who)) fail(name, 'expected name:token, the name of letters, digits, `_`, `.` or `-`')
    // Long enough that guessing is hopeless: 32 characters of a random token are well over 128 bits.
    if (token.length < 32) fail(name, `the token of ${who} is shorter than 32 characters (make one with \`openssl rand -hex 32\`)`)
    return { name: who, token }
  })

const apiKeys: Parser<{ key: string; plan?: string }[]> = (raw, name) =>
  list(raw, name).map((entry) => {
    const [key, plan, ...rest] = entry.split(':')
    if (!key || rest.length) fail(name, `expected key or key:plan, got ${JSON.stringify(entry)}`)
    if (key!.length < 8) fail(name, `key ${JSON.stringify(key!.slice(0, 3) + '…')} is shorter than 8 characters`)
    return plan ? { key: key!, plan } : { key: key! }
  })

const WINDOW_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 }
/** A monthly plan's `windowSeconds`: the longest month. */
const LONGEST_MONTH_SECONDS = 31 * 86400

/** Names a plan may not have: what a plain object already answers (`__proto__`, `constructor`, …). */
const RESERVED_PLAN_NAMES = new Set(Object.getOwnPropertyNames(Object.prototype))

/**
 * `free:1000/1d,tiny:5/60s,pro:100000/1mo` -> plans; each window is a count and a unit (s, m, h, d), or `1mo`:
 * the UTC calendar month. A Map: plan names come from tokens and keys, and a plain object would answer `constructor`.
 */
const plans: Parser<ReadonlyMap<string, Plan>> = (raw, name) => {
  const out = new Map<string, Plan>()
  for (const entry of list(raw, name)) {
    const m = /^([A-Za-z0-9_.-]+):(\d+)\/(\d*)(mo|[smhd])$/.exec(entry)
    if (!m) fail(name, `expected name:credits/window such as free:1000/1d or pro:100000/1mo, got ${JSON.stringify(entry)}`)
    const [, plan, credits, count, unit] = m!
    if (RESERVED_PLAN_NAMES.has(plan!)) fail(name, `plan name ${plan} is reserved; choose another`)
    out.set(
      plan!,
      unit === 'mo' ? monthlyPlan(name, plan!, Number(credits), count!) : fixedPlan(name, plan!, Number(credits), count!, unit!),
    )
  }
  return out
}

function fixedPlan(setting: string, name: string, credits: number, count: string, unit: string): Plan {
  const windowSeconds = Number(count || 1) * WINDOW_UNITS[unit]!
  if (credits < 1 || windowSeconds < 1) fail(setting, `plan ${name} needs at least 1 credit and a window of at least 1s`)
  return { name, credits, windowSeconds }
}

// Months differ in length, so only one month is a window every store counts alike: `2mo` would need an epoch.
function monthlyPlan(setting: string, name: string, credits: number, count: string): Plan {
  if (count !== '' && Number(count) !== 1)
    fail(setting, `plan ${name}: a calendar window is one month (\`1mo\`), not ${count}mo; use days for longer windows (\`60d\`)`)
  if (credits < 1) fail(setting, `plan ${name} needs at least 1 credit`)
  return { name, credits, windowSeconds: LONGEST_MONTH_SECONDS, calendar: 'month' }
}

/** `pro:500,enterprise:5000` -> credit-lease block size by plan name (src/stores/quota-leases.ts). */
const leaseBlocks: Parser<ReadonlyMap<string, number>> = (raw, name) =>
  new Map(
    list(raw, name).map((entry) => {
      const m = /^([A-Za-z0-9_.-]+):(\d+)$/.exec(entry)
      if (!m || Number(m[2]) < 1) fail(name, `expected plan:block such as pro:500 (a block of at least 1), got ${JSON.stringify(entry)}`)
      return [m![1]!, Number(m![2])] as const
    }),
  )

const MiB = 2 ** 20

/** Every setting, once. The config file uses the same keys, nested as here. */
export const SCHEMA = {
  port: setting(integer(0, 65535), { default: 8080, env: ['PORT', 'ALMANAC_PORT'], flag: '--port', doc: 'Listening port.' }),
  host: setting(text, { default: '0.0.0.0', env: 'ALMANAC_HOST', flag: '--host', doc: 'Listening address.' }),
  workers: setting(integer(1, 256), {
    default: 1,
    env: 'ALMANAC_WORKERS',
    flag: '--workers',
    doc: 'Server processes sharing the port (SO_REUSEPORT); 1 serves in this process.',
  }),
  responseForm: setting(oneOf('enveloped', 'bare'), {
    default: 'enveloped',
    env: 'ALMANAC_RESPONSE_FORM',
    flag: '--response-form',
    doc: '`enveloped` (Form A) or `bare` (Form B); per request: header `X-Response-Form`.',
  }),
  apiKeys: setting(apiKeys, {
    default: [],
    env: 'ALMANAC_API_KEYS',
    doc: 'Comma-separated keys accepted from configuration (beside those in the key store), each `key` or `key:plan`.',
  }),
  adminTokens: setting(adminTokens, {
    default: [],
    shown: 'none (the operator API and console are off)',
    env: 'ALMANAC_ADMIN_TOKENS',
    doc: 'Operator credentials, `name:token` (token of 32+ characters), for `/admin/v1` and `/console`; never a customer key.',
    see: 'docs/admin.md',
  }),
  plans: setting(plans, {
    default: new Map([['default', { name: 'default', credits: 10000, windowSeconds: 3600 }]]),
    shown: '`default:10000/1h`',
    env: 'ALMANAC_PLANS',
    flag: '--plans',
    doc: 'Plans as `name:credits/window` (`free:1000/1d,tiny:5/60s`); `1mo` is the UTC calendar month (`pro:100000/1mo`).',
  }),
  defaultPlan: setting(text, {
    default: 'default',
    env: 'ALMANAC_DEFAULT_PLAN',
    flag: '--default-plan',
    doc: 'Plan of keys and tokens that name none.',
  }),
  jwtSecret: optional(text, { env: 'ALMANAC_JWT_SECRET', doc: 'Accept HS256 JWTs signed with this secret (at least 32 bytes).' }),
  jwtJwks: optional(text, { env: 'ALMANAC_JWT_JWKS', flag: '--jwt-jwks', doc: 'JWKS file: accept RS/PS/ES/EdDSA JWTs.' }),
  jwtLeewaySeconds: setting(integer(0, 600), {
    default: 30,
    shown: '30 s',
    env: 'ALMANAC_JWT_LEEWAY',
    doc: 'Clock leeway for JWT `exp`/`nbf`.',
  }),
  jwtRequireExp: setting(boolean, { default: true, env: 'ALMANAC_JWT_REQUIRE_EXP', doc: 'Refuse tokens without `exp`.' }),
  jwtIssuer: optional(text, { env: 'ALMANAC_JWT_ISSUER', doc: "When set, a JWT's `iss` must equal it." }),
  jwtAudience: optional(text, { env: 'ALMANAC_JWT_AUDIENCE', doc: "When set, a JWT's `aud` must contain it." }),
  stateDir: setting(text, {
    default: '.state',
    shown: '`.state`',
    env: 'ALMANAC_STATE_DIR',
    flag: '--state-dir',
    doc: 'Key database, sqlite quota counters, RDAP cache, QR images.',
  }),
  dataDir: optional(text, {
    shown: '`datasets/out`, or `~/.cache/almanac` for the executable',
    env: 'ALMANAC_DATA_DIR',
    flag: '--data-dir',
    doc: 'Where datasets are read (or extracted).',
  }),
  dataBundlePublicKey: optional(text, {
    shown: 'unset: bundles need no signature',
    env: 'ALMANAC_DATA_BUNDLE_PUBLIC_KEY',
    doc:
      'Ed25519 public key (a PEM file, PEM text, or the 32 bytes in base64): `almanac data activate BUNDLE` refuses a bundle ' +
      'not signed by it.',
    see: 'docs/datasets.md#updating-data-on-an-air-gapped-server',
  }),
  // sha256 runs at ~1-1.8 GB/s (SHA-NI): the ~31 MB of tables, JSON and countries cost ~20-30 ms of start.
  // The next artifact up is the 63 MiB city mmdb, then the ~270 MB Bible and postal databases, which stay
  // in the background so a warm start stays fast.
  dataHashBeforeServeMaxBytes: setting(integer(0, 2 ** 40), {
    default: 32 * MiB,
    shown: '33554432 (32 MiB)',
    env: 'ALMANAC_DATA_HASH_BEFORE_SERVE_MAX_BYTES',
    doc: 'Artifacts up to this size are sha256-checked before their domain serves; larger ones in the background.',
    see: 'docs/datasets.md#readiness-and-missing-datasets',
  }),
  quotaStore: setting(storeSetting(['memory', 'sqlite']), {
    default: 'sqlite',
    env: 'ALMANAC_QUOTA_STORE',
    flag: '--quota-store',
    doc:
      '`sqlite` (the state dir: kept across restarts, shared by processes on one host), `memory` (lost on restart), ' +
      'or `redis://…` (shared by many instances; `redis+cluster://h:p,h:p` a Redis Cluster, ' +
      '`redis+sentinel://h:p,h:p/master` a Sentinel group).',
    see: 'docs/auth-and-quotas.md#quota-stores',
  }),
  keyStore: optional(storeSetting(['sqlite']), {
    shown: "`sqlite`, or the quota store's Redis",
    env: 'ALMANAC_KEY_STORE',
    flag: '--key-store',
    doc:
      'Where API keys live: `sqlite` (the state dir) or `redis://…`, `redis+cluster://…`, `redis+sentinel://…` (shared by many ' +
      'instances; a revoke reaches all within a second).',
  }),
  quotaLeases: setting(leaseBlocks, {
    default: new Map<string, number>(),
    shown: 'none',
    env: 'ALMANAC_QUOTA_LEASES',
    doc:
      'Credit leases on a Redis quota store, per plan as `plan:block` (`pro:500,enterprise:5000`): an instance takes a block ' +
      "of a key's credits at once and spends it without a round trip.",
    see: 'docs/auth-and-quotas.md#credit-leases',
  }),
  quotaFailOpen: setting(boolean, {
    default: false,
    env: 'ALMANAC_QUOTA_FAIL_OPEN',
    doc:
      'When the quota store is down: serve uncounted instead of 503; and while a Redis key store cannot be read, keys ' +
      'looked up in the last minute keep working as last seen.',
  }),
  usageLedger: setting(boolean, {
    default: true,
    env: 'ALMANAC_USAGE_LEDGER',
    flag: '--usage-ledger',
    doc: 'Keep the usage ledger (requests, credits, bytes and latency per key, hour, route and outcome) in the quota store.',
    see: 'docs/usage.md',
  }),
  usageRetentionDays: setting(integer(1, 3660), {
    default: 400,
    shown: '400 days',
    env: 'ALMANAC_USAGE_RETENTION_DAYS',
    doc: 'How long daily usage rows are kept (hourly ones: 35 days).',
    see: 'docs/usage.md',
  }),
  trustedProxies: setting(list, {
    default: [],
    env: 'ALMANAC_TRUSTED_PROXIES',
    flag: '--trusted-proxies',
    doc: 'Addresses/CIDRs whose forwarding header is believed (`/ip/me`, QR link origin).',
  }),
  trustedProxyHeader: setting(oneOf('x-forwarded-for', 'forwarded'), {
    default: 'x-forwarded-for',
    shown: '`x-forwarded-for`',
    env: 'ALMANAC_TRUSTED_PROXY_HEADER',
    flag: '--trusted-proxy-header',
    doc:
      'The one header those proxies set: `x-forwarded-for` (with `X-Forwarded-Proto`/`-Host`) or `forwarded` (RFC 7239); the other is ' +
      "the client's to forge and is ignored.",
  }),
  maxLimit: setting(integer(1, 100000), { default: 1000, env: 'ALMANAC_MAX_LIMIT', doc: 'Largest `limit` on list endpoints.' }),
  bodyLimit: setting(integer(1024, 64 * MiB), {
    default: MiB,
    env: 'ALMANAC_BODY_LIMIT',
    doc:
      "Ceiling on every request body, bytes (413 beyond); each route's own limit (`x-body-limit`, 16 KiB unless it needs more) applies " +
      'under it.',
  }),
  accessLog: setting(boolean, {
    default: true,
    env: 'ALMANAC_ACCESS_LOG',
    flag: '--access-log',
    doc: 'One JSON line per request on stdout.',
  }),
  shutdownGraceSeconds: setting(integer(0, 3600), {
    default: 10,
    env: 'ALMANAC_SHUTDOWN_GRACE',
    doc: 'Seconds in-flight requests get once the listener has closed.',
  }),
  startTogether: setting(boolean, {
    default: true,
    env: 'ALMANAC_START_TOGETHER',
    doc:
      'Requests that arrive in one turn of the event loop start together once it has read them, each stage of their handling run ' +
      'for all of them before the next (one with a body over 16 KiB starts at once): 20-40% less CPU a request under concurrent ' +
      'load. false: each starts as soon as it is read.',
    see: 'docs/architecture.md#who-goes-first',
  }),
  requestsPerTurn: setting(integer(0, 10000), {
    default: 1,
    env: 'ALMANAC_REQUESTS_PER_TURN',
    doc:
      'Requests one caller may start in one turn of the event loop once the turn is busy (0: no limit); more wait, unread, for ' +
      "later turns: one caller's backlog never delays another's request by more than the turn slice.",
    see: 'docs/architecture.md#who-goes-first',
  }),
  turnSliceMicros: setting(integer(0, 1_000_000), {
    default: 1000,
    env: 'ALMANAC_TURN_SLICE_US',
    doc:
      'A turn of the event loop that has run for less than this many microseconds is not busy: a caller past its requests per turn ' +
      'still starts (0: the count alone rules). Waiting costs ~20 µs a request over HTTP; this bounds what another caller waits for ' +
      'by time, and one caller alone with cheap requests never waits.',
    see: 'docs/architecture.md#who-goes-first',
  }),
  requestsWaitingPerCaller: setting(integer(1, 100000), {
    default: 64,
    env: 'ALMANAC_REQUESTS_WAITING_PER_CALLER',
    doc: 'Requests one caller may have waiting for a turn (429 beyond, credit given back).',
  }),
  requestBytesWaitingPerCaller: setting(integer(0, 2 ** 40), {
    default: 4 * MiB,
    shown: '4 MiB',
    env: 'ALMANAC_REQUEST_BYTES_WAITING_PER_CALLER',
    doc:
      "Body bytes one caller's waiting requests may hold, unread ones by their declared size and read large ones waiting for " +
      'their turn (429 beyond, credit given back).',
  }),
  shutdownDelaySeconds: setting(integer(0, 3600), {
    default: 5,
    env: 'ALMANAC_SHUTDOWN_DELAY',
    doc:
      'Seconds after SIGTERM during which `/readyz` answers 503 while the listener still accepts and answers, before it closes; 0 ' +
      'closes at once.',
    see: 'docs/operations.md#shutdown',
  }),
  corsOrigins: setting(origins, {
    default: [],
    shown: '— (off)',
    env: 'ALMANAC_CORS_ORIGINS',
    flag: '--cors-origins',
    doc: 'Origins browsers may call from (`https://app.example.com,…` or `*`); preflights need no key.',
  }),
  hash: hashSettings,
  queries: {
    workers: setting(integer(0, 256), {
      default: 0,
      shown: '0 = cores − 1 (at least 1)',
      env: 'ALMANAC_QUERY_WORKERS',
      doc: 'Query worker threads of the Bible and postal domains (each domain its own, each worker its own read-only connection).',
      see: 'docs/architecture.md#where-heavy-queries-run',
    }),
    queueSize: setting(integer(1, 100000), {
      default: 64,
      env: 'ALMANAC_QUERY_QUEUE',
      doc: "Heavy queries that may wait for a domain's query workers; beyond, a 503 with `Retry-After` that costs no credit.",
    }),
    jobsPerCaller: setting(integer(1, 100000), {
      default: 4,
      env: 'ALMANAC_QUERY_JOBS_PER_CALLER',
      doc: 'Heavy queries one caller may have running or waiting in one domain; beyond, a 503 with `Retry-After` that costs no credit.',
    }),
  },
  postal: postalSettings,
  bible: bibleSettings,
  ip: ipSettings,
  qr: qrSettings,
  email: emailSettings,
  ua: uaSettings,
}

/** Where a store lives, read once from its setting (and the state dir): nothing downstream re-reads the spelling. */
export type StoreLocation = { kind: 'memory' } | { kind: 'sqlite'; dir: string } | { kind: 'redis'; url: string }

export interface Stores {
  quota: StoreLocation
  /** ALMANAC_KEY_STORE; unset: the quota store's Redis when that is Redis, else the state dir's SQLite. */
  keys: Exclude<StoreLocation, { kind: 'memory' }>
  /** ALMANAC_EMAIL_RDAP_CACHE; unset: the quota store's Redis when that is Redis, else the state dir's SQLite. */
  rdapCache: StoreLocation
}

export type Config = ValuesOf<typeof SCHEMA> & {
  /** Derived from quotaStore, keyStore, email.rdapCache and stateDir by `loadConfig`; not a setting of its own. */
  stores: Stores
}

const locate = (spelling: string, dir: string): StoreLocation =>
  spelling === 'memory' ? { kind: 'memory' } : spelling === 'sqlite' ? { kind: 'sqlite', dir } : { kind: 'redis', url: spelling }

/** The stores the settings name, resolved once. */
export function storesOf(config: ValuesOf<typeof SCHEMA>): Stores {
  const quota = locate(config.quotaStore, config.stateDir)
  const shared: Stores['keys'] = quota.kind === 'redis' ? quota : { kind: 'sqlite', dir: config.stateDir }
  return {
    quota,
    keys: config.keyStore === undefined ? shared : (locate(config.keyStore, config.stateDir) as Stores['keys']),
    rdapCache: config.email.rdapCache === undefined ? shared : locate(config.email.rdapCache, config.stateDir),
  }
}

/** Each setting with its dotted path, in declaration order: what the layers are read from and the tables derived from. */
export const SETTINGS = entriesOf(SCHEMA)

const defaults = defaultsOf(SCHEMA)
export const DEFAULTS: Config = { ...defaults, stores: storesOf(defaults) }

const setPath = (obj: any, path: string, value: unknown) => {
  const keys = path.split('.')
  const last = keys.pop()!
  let o = obj
  for (const k of keys) o = o[k] ??= {}
  o[last] = value
}

export interface ConfigSources {
  env?: Record<string, string | undefined>
  /** Flags as `--name value` or `--name=value`; `--config` names the file. */
  argv?: string[]
}

/**
 * `--name value` / `--name=value` pairs; a bare `--flag` is `true`. Commands check their own flags
 * strictly (cli/args.ts); this reads the settings' flags out of the same argv for `loadConfig`.
 */
export function parseFlags(argv: string[]): Map<string, string> {
  const flags = new Map<string, string>()
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (!arg.startsWith('--')) continue
    const eq = arg.indexOf('=')
    if (eq > 0) flags.set(arg.slice(0, eq), arg.slice(eq + 1))
    else if (i + 1 < argv.length && !argv[i + 1]!.startsWith('--')) flags.set(arg, argv[++i]!)
    else flags.set(arg, 'true')
  }
  return flags
}

/** The command-line flags the settings declare (`--port` …) plus `--config`, as util.parseArgs options. */
export function settingOptions(): Record<string, { type: 'string' }> {
  const out: Record<string, { type: 'string' }> = { config: { type: 'string' } }
  for (const s of SETTINGS) if (s.flag) out[s.flag.slice(2)] = { type: 'string' }
  return out
}

/** Flags whose value is true or false: written alone (`--access-log`), they mean true. */
export const SWITCH_FLAGS: ReadonlySet<string> = new Set(SETTINGS.filter((s) => s.parse === boolean && s.flag).map((s) => s.flag!))

/**
 * `ALMANAC_*` variables read outside SETTINGS: by the data build, the worker supervisor, tests and
 * benchmarks. Everything else under the prefix must be a setting, so a typo is an error, not a default.
 */
export const RUNTIME_ENV: readonly string[] = [
  'ALMANAC_CONFIG', // the config file (config.ts)
  'ALMANAC_MIRROR', // data build: the mirror folder
  'ALMANAC_OFFLINE', // data build: never download
  'ALMANAC_UPSTREAM_BASE', // data build and fetch: where upstream URLs are fetched from
  'ALMANAC_DOWNLOAD_CONNECT_TIMEOUT_MS', // data build and fetch: until a server answers, and any silence in a body
  'ALMANAC_DOWNLOAD_TIMEOUT_MS', // data build and fetch: one whole file
  'ALMANAC_DOWNLOAD_TRIES', // data build and fetch: tries per file
  'ALMANAC_WORKER_INDEX', // set by the --workers supervisor
  'ALMANAC_SUPERVISOR_PID', // set by the --workers supervisor
  'ALMANAC_CHROMIUM', // tests: the browser the docs page test drives
]

/** Every known `ALMANAC_*` name: the settings' (a domain adding a setting adds its name) and RUNTIME_ENV. */
export const knownEnvNames = (): Set<string> =>
  new Set([...SETTINGS.flatMap((s) => s.env).filter((n) => n.startsWith('ALMANAC_')), ...RUNTIME_ENV])

/** Unknown `ALMANAC_*` names in `env`, each with the nearest known one when there is one. */
export function unknownEnv(env: Record<string, string | undefined>): { name: string; nearest?: string }[] {
  const known = knownEnvNames()
  return Object.keys(env)
    .filter((n) => n.startsWith('ALMANAC_') && !known.has(n))
    .sort()
    .map((name) => ({ name, nearest: nearest(name, known) }))
}

/** Throws ConfigError listing the unknown `ALMANAC_*` variables (with a did-you-mean). */
export function checkEnvironment(env: Record<string, string | undefined>) {
  const unknown = unknownEnv(env)
  if (!unknown.length) return
  const list = unknown.map((u) => `${u.name}${u.nearest ? ` (did you mean ${u.nearest}?)` : ''}`).join(', ')
  throw new ConfigError(
    `unknown environment variable${unknown.length > 1 ? 's' : ''} ${list}; the settings are listed in README.md (Configuration), or ` +
      `unset ${unknown.length > 1 ? 'them' : 'it'}`,
  )
}

/** Builds the Config; throws ConfigError naming the first bad setting. */
export function loadConfig({ env = process.env, argv = [] }: ConfigSources = {}, overrides: Partial<Config> = {}): Config {
  const config: Config = structuredClone(DEFAULTS)
  const flags = parseFlags(argv)

  const file = flags.get('--config') ?? env.ALMANAC_CONFIG
  if (file) {
    let fromFile: unknown
    try {
      fromFile = JSON.parse(readFileSync(resolve(file), 'utf8'))
    } catch (e) {
      throw new ConfigError(`--config ${file}: ${(e as Error).message}`)
    }
    if (typeof fromFile !== 'object' || fromFile === null || Array.isArray(fromFile))
      throw new ConfigError(`--config ${file}: expected a JSON object`)
    const known = new Set(SETTINGS.map((s) => s.path))
    const walk = (obj: Record<string, unknown>, prefix: string) => {
      for (const [k, v] of Object.entries(obj)) {
        const path = prefix + k
        if (known.has(path)) setPath(config, path, SETTINGS.find((s) => s.path === path)!.parse(v, `${file}: ${path}`))
        else if (v && typeof v === 'object' && !Array.isArray(v) && [...known].some((p) => p.startsWith(path + '.')))
          walk(v as Record<string, unknown>, path + '.')
        else throw new ConfigError(`${file}: unknown setting ${path}${didYouMean(path, known)}`)
      }
    }
    walk(fromFile as Record<string, unknown>, '')
  }

  for (const s of SETTINGS) {
    for (const name of s.env) {
      const raw = env[name]
      if (raw !== undefined && raw !== '') setPath(config, s.path, s.parse(raw, name))
    }
    const flag = s.flag && flags.get(s.flag)
    if (flag) setPath(config, s.path, s.parse(flag, s.flag!))
  }

  Object.assign(config, overrides)
  validate(config)
  config.stores = storesOf(config)
  return config
}

function validate(config: Config) {
  // RFC 7518 §3.2: an HS256 key must be at least as long as the hash output; a shorter one can be guessed.
  const secretBytes = config.jwtSecret === undefined ? 32 : Buffer.byteLength(config.jwtSecret)
  if (secretBytes < 32)
    throw new ConfigError(
      `ALMANAC_JWT_SECRET: ${secretBytes} bytes; HS256 needs at least 32 (RFC 7518 section 3.2), e.g. \`openssl rand -base64 32\``,
    )
  if (!config.plans.has(config.defaultPlan)) {
    throw new ConfigError(
      `ALMANAC_DEFAULT_PLAN: plan ${JSON.stringify(config.defaultPlan)} is not among ALMANAC_PLANS ` +
        `(${[...config.plans.keys()].join(', ')})`,
    )
  }
  for (const plan of config.quotaLeases.keys()) {
    if (!config.plans.has(plan)) throw new ConfigError(`ALMANAC_QUOTA_LEASES: unknown plan ${JSON.stringify(plan)}`)
  }
  for (const { key, plan } of config.apiKeys) {
    if (plan && !config.plans.has(plan))
      throw new ConfigError(`ALMANAC_API_KEYS: key ${key.slice(0, 3)}… names unknown plan ${JSON.stringify(plan)}`)
  }
}
