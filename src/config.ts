/**
 * One typed configuration, layered: defaults < config file (`--config path.json`) < `ALMANAC_*`
 * environment < command-line flags. Every setting is declared once in SETTINGS with its names in each
 * layer and its parser, so a bad value anywhere is reported with the name the operator used.
 */
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { didYouMean, nearest } from './lib/did-you-mean.ts'

export type ResponseForm = 'enveloped' | 'bare'

export interface Plan {
  name: string
  credits: number
  windowSeconds: number
}

export interface Config {
  port: number
  host: string
  /** Processes sharing the port (SO_REUSEPORT); 1 serves in this process. */
  workers: number
  responseForm: ResponseForm
  /** Keys accepted from configuration, in addition to those in the state database. */
  apiKeys: { key: string; plan?: string }[]
  /** By name. A Map: plan names come from tokens and keys, and a plain object would answer `constructor`. */
  plans: ReadonlyMap<string, Plan>
  defaultPlan: string
  jwtSecret?: string
  jwtJwks?: string
  /** Clock leeway for JWT `exp`/`nbf`, in seconds. */
  jwtLeewaySeconds: number
  /** Refuse tokens without an `exp` claim (default true). */
  jwtRequireExp: boolean
  /** When set, a JWT's `iss` must equal it. */
  jwtIssuer?: string
  /** When set, a JWT's `aud` must contain it. */
  jwtAudience?: string
  stateDir: string
  /** Where built datasets are read from; unset means `datasets/out` or the executable's cache. */
  dataDir?: string
  /** Artifacts up to this size are hashed before their domain serves; larger ones in the background. */
  dataHashBeforeServeMaxBytes: number
  /** `memory`, `sqlite`, or a `redis://` URL. */
  quotaStore: string
  /**
   * Where API keys live: `sqlite` (the state dir) or a `redis://` URL; unset: the quota store's Redis when
   * that is Redis, else `sqlite` (`keyStoreOf` resolves it).
   */
  keyStore?: string
  /** When the quota store is down: false answers 503, true lets requests through uncounted. */
  quotaFailOpen: boolean
  /** CIDRs or addresses whose forwarding header is believed. */
  trustedProxies: string[]
  /**
   * The one forwarding header the trusted proxies set: `x-forwarded-for` (with X-Forwarded-Proto/-Host) or
   * `forwarded` (RFC 7239). The other is the client's to forge and is ignored.
   */
  trustedProxyHeader: 'x-forwarded-for' | 'forwarded'
  /** Largest `limit` accepted on list endpoints. */
  maxLimit: number
  /** Largest request body, in bytes. */
  bodyLimit: number
  accessLog: boolean
  /** Seconds in-flight requests get to finish after SIGTERM. */
  shutdownGraceSeconds: number
  /** Requests one caller may start in one turn of the event loop; more wait for the next turns (0: no limit). */
  requestsPerTurn: number
  /** Requests one caller may have waiting for a turn, and the body bytes they may hold; more are a 429. */
  requestsWaitingPerCaller: number
  requestBytesWaitingPerCaller: number
  /**
   * Seconds between SIGTERM and closing the listener: /readyz answers 503 at once while new connections are
   * still accepted and answered, so a load balancer stops sending before the port goes away.
   */
  shutdownDelaySeconds: number
  /** Origins browsers may call the API from (`*` for any); empty: no CORS headers at all. */
  corsOrigins: string[]
  hash: {
    /** KDF worker threads; 0 means one per core. */
    workers: number
    /** KDF jobs allowed to wait for a worker before 503. */
    queueSize: number
    bcryptMaxRounds: number
    /** Ceiling on scrypt's memory, 128·r·(n + p) bytes. */
    scryptMaxMemoryBytes: number
    /** Ceiling on scrypt's p: each lane repeats the whole n·r work, so p multiplies the time. */
    scryptMaxParallelism: number
    argon2MaxMemoryKiB: number
    argon2MaxTimeCost: number
    argon2MaxParallelism: number
    /** Ceiling on scrypt's n·r·p, which the time grows with (each of the p lanes does 2·n block mixes of r). */
    scryptMaxWork: number
    /** Ceiling on argon2id's time_cost·memory_cost; parallelism splits memory_cost into lanes, adding no work. */
    argon2MaxWork: number
    /** KDF jobs one caller may have running or waiting at once; more is a 503 for that caller only. */
    jobsPerCaller: number
    /**
     * Bytes all running KDF jobs of one server process may allocate (scrypt 128·r·(n + 2 + p), argon2id
     * memory_cost KiB); a caller may hold half. 0: a quarter of the machine's (or cgroup's) memory / workers.
     */
    memoryBudgetBytes: number
  }
  queries: {
    /** Query worker threads of each domain that has them (Bible search, postal search/nearby/within); 0: cores - 1, at least 1. */
    workers: number
    /** Heavy queries that may wait for a domain's query workers; 503 beyond. */
    queueSize: number
    /** Heavy queries one caller may have running or waiting in one domain; 503 beyond. */
    jobsPerCaller: number
  }
  postal: {
    /** Units of work (about one row read each) one postal search, nearby or within may spend; 422 beyond. */
    workBudget: number
  }
  ip: {
    cityMmdb?: string
    asnMmdb?: string
    ispMmdb?: string
    anonymousIpMmdb?: string
    connectionTypeMmdb?: string
    /** Extra list files (one address or CIDR a line), reloaded on SIGHUP. */
    torListFiles: string[]
    vpnListFiles: string[]
    proxyListFiles: string[]
    hostingListFiles: string[]
  }
  qr: {
    /** `local` (a folder under stateDir), `local:/path`, or `s3://bucket/prefix`. */
    store: string
    /** HMAC key of local download links; unset: generated once and kept in `<stateDir>/qr-signing-key`. */
    signingKey?: string
    /** Origin of absolute download URLs (`https://api.example.com`); unset: the request's own host. */
    publicUrl?: string
    /** Ceiling on the bytes the local store holds; a write beyond it is a 503. */
    storeMaxBytes: number
    /** Bytes one caller's live images may take (429 beyond); unset: storeMaxBytes / 16 (`qrShareOf`). */
    storeMaxBytesPerKey?: number
    /** Seconds between sweeps of expired local objects. */
    sweepSeconds: number
    s3Endpoint?: string
    /**
     * Where clients reach the S3 store, when that is not S3_ENDPOINT (a compose network's `http://s3:9000`):
     * links are presigned for this origin; uploads still go to S3_ENDPOINT.
     */
    s3PublicEndpoint?: string
    s3Region?: string
    s3AccessKeyId?: string
    s3SecretAccessKey?: string
    /** Bucket in the host name (`bucket.endpoint`) instead of the path. */
    s3VirtualHostedStyle: boolean
    /** Seconds an S3 upload may take before the request is answered 503. */
    s3TimeoutSeconds: number
  }
  email: {
    /** DNS servers as host or host:port; empty means the system's (/etc/resolv.conf). */
    dnsServers: string[]
    /** Deadline for one domain's whole MX check (MX, then A/AAAA), in milliseconds. */
    dnsTimeoutMs: number
    /** One RDAP base URL for every domain (`GET {base}domain/{name}`); unset uses the bootstrap. */
    rdapUrl?: string
    /** An IANA RDAP bootstrap file (dns.json) to use instead of the built one (the email-rdap dataset). */
    rdapBootstrap?: string
    /** Deadline for one RDAP lookup, in milliseconds. */
    rdapTimeoutMs: number
    /** No DNS or RDAP at request time (air-gapped servers): those checks answer "unknown". */
    offline: boolean
    /** DNS (MX) lookups under way at once, and per caller (unset: an eighth, at least 4); beyond, `dns_busy`. */
    dnsSlots: number
    dnsSlotsPerCaller?: number
    /** RDAP lookups under way at once, and per caller (unset: an eighth, at least 4); beyond, `rdap_busy`. */
    rdapSlots: number
    rdapSlotsPerCaller?: number
    /** Operator list files (one domain a line), reloaded on SIGHUP. */
    allowListFiles: string[]
    denyListFiles: string[]
  }
  ua: {
    /** A newer Matomo device-detector checkout (or its `regexes/` folder of YAML) served instead of the built data. */
    regexesDir?: string
    /** Parse results kept per cache generation (two generations); 0 turns the cache off. */
    cacheEntries: number
    /** Bytes of cache keys (user agents and hints) per generation. */
    cacheBytes: number
  }
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ConfigError'
  }
}

type Parser = (raw: unknown, name: string) => unknown

const fail = (name: string, why: string): never => {
  throw new ConfigError(`${name}: ${why}`)
}

const integer =
  (min: number, max: number): Parser =>
  (raw, name) => {
    const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^-?\d+$/.test(raw.trim()) ? Number(raw) : NaN
    if (!Number.isSafeInteger(n) || n < min || n > max) fail(name, `expected an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`)
    return n
  }

/** 0 (meaning "work it out") or an integer from min to max. */
const zeroOrAtLeast =
  (min: number, max: number): Parser =>
  (raw, name) => {
    const n = integer(0, max)(raw, name) as number
    if (n !== 0 && n < min) fail(name, `expected 0 (automatic) or an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`)
    return n
  }

const boolean: Parser = (raw, name) => {
  if (typeof raw === 'boolean') return raw
  const s = String(raw).trim().toLowerCase()
  if (['1', 'true', 'yes', 'on'].includes(s)) return true
  if (['0', 'false', 'no', 'off'].includes(s)) return false
  return fail(name, `expected true or false, got ${JSON.stringify(raw)}`)
}

const text: Parser = (raw, name) => {
  if (typeof raw !== 'string' || raw.trim() === '') fail(name, 'expected a non-empty string')
  return (raw as string).trim()
}

const oneOf =
  (...values: string[]): Parser =>
  (raw, name) => {
    const s = String(raw).trim().toLowerCase()
    if (!values.includes(s)) fail(name, `expected one of ${values.join(', ')}, got ${JSON.stringify(raw)}`)
    return s
  }

const list: Parser = (raw, name) => {
  if (Array.isArray(raw)) return raw.map((v, i) => text(v, `${name}[${i}]`))
  if (typeof raw !== 'string') return fail(name, 'expected a comma-separated list')
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
}

const apiKeys: Parser = (raw, name) =>
  (list(raw, name) as string[]).map((entry) => {
    const [key, plan, ...rest] = entry.split(':')
    if (!key || rest.length) fail(name, `expected key or key:plan, got ${JSON.stringify(entry)}`)
    if (key!.length < 8) fail(name, `key ${JSON.stringify(key!.slice(0, 3) + '…')} is shorter than 8 characters`)
    return plan ? { key, plan } : { key }
  })

/** `*`, or origins as browsers send them (`https://app.example.com`, scheme://host[:port], no path). */
const origins: Parser = (raw, name) => {
  const values = list(raw, name) as string[]
  for (const o of values) {
    if (o === '*') continue
    let url: URL | undefined
    try {
      url = new URL(o)
    } catch {}
    if (!url || url.origin !== o || url.origin === 'null')
      fail(
        name,
        `expected * or origins such as https://app.example.com (scheme, host and port only, no trailing slash), got ${JSON.stringify(o)}`,
      )
  }
  return values
}

const WINDOW_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 }

/** `free:1000/1d,tiny:5/60s` -> plans; each window is a count and a unit (s, m, h, d). */
/** Names a plan may not have: what a plain object already answers (`__proto__`, `constructor`, …). */
const RESERVED_PLAN_NAMES = new Set(Object.getOwnPropertyNames(Object.prototype))

const plans: Parser = (raw, name) => {
  const out = new Map<string, Plan>()
  for (const entry of list(raw, name) as string[]) {
    const m = /^([A-Za-z0-9_.-]+):(\d+)\/(\d*)([smhd])$/.exec(entry)
    if (!m) fail(name, `expected name:credits/window such as free:1000/1d, got ${JSON.stringify(entry)}`)
    const [, plan, credits, count, unit] = m!
    const windowSeconds = Number(count || 1) * WINDOW_UNITS[unit!]!
    if (Number(credits) < 1 || windowSeconds < 1) fail(name, `plan ${plan} needs at least 1 credit and a window of at least 1s`)
    if (RESERVED_PLAN_NAMES.has(plan!)) fail(name, `plan name ${plan} is reserved; choose another`)
    out.set(plan!, { name: plan!, credits: Number(credits), windowSeconds })
  }
  return out
}

/** `local`, `local:/absolute/path` or `s3://bucket[/prefix]`. */
const qrStore: Parser = (raw, name) => {
  const s = text(raw, name) as string
  if (s === 'local' || /^local:\/./.test(s)) return s
  if (/^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/[^\s]*)?$/.test(s)) return s
  return fail(name, `expected local, local:/absolute/path or s3://bucket/prefix, got ${JSON.stringify(s)}`)
}

/** An absolute http(s) origin without path, query or fragment (a trailing slash is dropped). */
const origin: Parser = (raw, name) => {
  const s = (text(raw, name) as string).replace(/\/+$/, '')
  let url: URL | undefined
  try {
    url = new URL(s)
  } catch {}
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.pathname !== '/' || url.search || url.hash)
    fail(name, `expected an http(s) origin such as https://api.example.com, got ${JSON.stringify(raw)}`)
  return url!.origin
}

const secret =
  (minLength: number): Parser =>
  (raw, name) => {
    const s = text(raw, name) as string
    if (s.length < minLength) fail(name, `expected at least ${minLength} characters`)
    return s
  }

const quotaStore: Parser = (raw, name) => {
  const s = text(raw, name) as string
  if (s === 'memory' || s === 'sqlite' || /^rediss?:\/\//.test(s)) return s
  return fail(name, `expected memory, sqlite or a redis:// URL, got ${JSON.stringify(s)}`)
}

const keyStore: Parser = (raw, name) => {
  const s = text(raw, name) as string
  if (s === 'sqlite' || /^rediss?:\/\//.test(s)) return s
  return fail(name, `expected sqlite or a redis:// URL, got ${JSON.stringify(s)}`)
}

/** The key store in effect: ALMANAC_KEY_STORE, else the quota store's Redis when it is one, else sqlite. */
export const keyStoreOf = (config: Pick<Config, 'keyStore' | 'quotaStore'>): string =>
  config.keyStore ?? (/^rediss?:\/\//.test(config.quotaStore) ? config.quotaStore : 'sqlite')

/** An http(s) URL, kept with a trailing slash so `{base}domain/{name}` joins cleanly. */
const httpUrl: Parser = (raw, name) => {
  const s = text(raw, name) as string
  let url: URL
  try {
    url = new URL(s)
  } catch {
    return fail(name, `expected an http(s) URL, got ${JSON.stringify(s)}`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') fail(name, `expected an http(s) URL, got ${JSON.stringify(s)}`)
  return s.endsWith('/') ? s : s + '/'
}

interface Setting {
  /** Dotted path in Config and in the config file. */
  path: string
  env?: string[]
  flag?: string
  parse: Parser
}

const S = (path: string, parse: Parser, env?: string | string[], flag?: string): Setting => ({
  path,
  parse,
  env: env === undefined ? undefined : Array.isArray(env) ? env : [env],
  flag,
})

const SETTINGS: Setting[] = [
  S('port', integer(0, 65535), ['PORT', 'ALMANAC_PORT'], '--port'),
  S('host', text, 'ALMANAC_HOST', '--host'),
  S('workers', integer(1, 256), 'ALMANAC_WORKERS', '--workers'),
  S('responseForm', oneOf('enveloped', 'bare'), 'ALMANAC_RESPONSE_FORM', '--response-form'),
  S('apiKeys', apiKeys, 'ALMANAC_API_KEYS'),
  S('plans', plans, 'ALMANAC_PLANS', '--plans'),
  S('defaultPlan', text, 'ALMANAC_DEFAULT_PLAN', '--default-plan'),
  S('jwtSecret', text, 'ALMANAC_JWT_SECRET'),
  S('jwtJwks', text, 'ALMANAC_JWT_JWKS', '--jwt-jwks'),
  S('jwtLeewaySeconds', integer(0, 600), 'ALMANAC_JWT_LEEWAY'),
  S('jwtRequireExp', boolean, 'ALMANAC_JWT_REQUIRE_EXP'),
  S('jwtIssuer', text, 'ALMANAC_JWT_ISSUER'),
  S('jwtAudience', text, 'ALMANAC_JWT_AUDIENCE'),
  S('stateDir', text, 'ALMANAC_STATE_DIR', '--state-dir'),
  S('dataDir', text, 'ALMANAC_DATA_DIR', '--data-dir'),
  S('dataHashBeforeServeMaxBytes', integer(0, 2 ** 40), 'ALMANAC_DATA_HASH_BEFORE_SERVE_MAX_BYTES'),
  S('quotaStore', quotaStore, 'ALMANAC_QUOTA_STORE', '--quota-store'),
  S('keyStore', keyStore, 'ALMANAC_KEY_STORE', '--key-store'),
  S('quotaFailOpen', boolean, 'ALMANAC_QUOTA_FAIL_OPEN'),
  S('trustedProxies', list, 'ALMANAC_TRUSTED_PROXIES', '--trusted-proxies'),
  S('trustedProxyHeader', oneOf('x-forwarded-for', 'forwarded'), 'ALMANAC_TRUSTED_PROXY_HEADER', '--trusted-proxy-header'),
  S('maxLimit', integer(1, 100000), 'ALMANAC_MAX_LIMIT'),
  S('bodyLimit', integer(1024, 64 * 1024 * 1024), 'ALMANAC_BODY_LIMIT'),
  S('accessLog', boolean, 'ALMANAC_ACCESS_LOG', '--access-log'),
  S('shutdownGraceSeconds', integer(0, 3600), 'ALMANAC_SHUTDOWN_GRACE'),
  S('requestsPerTurn', integer(0, 10000), 'ALMANAC_REQUESTS_PER_TURN'),
  S('requestsWaitingPerCaller', integer(1, 100000), 'ALMANAC_REQUESTS_WAITING_PER_CALLER'),
  S('requestBytesWaitingPerCaller', integer(0, 2 ** 40), 'ALMANAC_REQUEST_BYTES_WAITING_PER_CALLER'),
  S('shutdownDelaySeconds', integer(0, 3600), 'ALMANAC_SHUTDOWN_DELAY'),
  S('corsOrigins', origins, 'ALMANAC_CORS_ORIGINS', '--cors-origins'),
  S('hash.workers', integer(0, 256), 'ALMANAC_HASH_WORKERS'),
  S('hash.queueSize', integer(1, 100000), 'ALMANAC_HASH_QUEUE'),
  S('hash.bcryptMaxRounds', integer(4, 31), 'ALMANAC_HASH_BCRYPT_MAX_ROUNDS'),
  S('hash.scryptMaxMemoryBytes', integer(1024, 2 ** 40), 'ALMANAC_HASH_SCRYPT_MAX_MEMORY'),
  S('hash.scryptMaxParallelism', integer(1, 2 ** 30 - 1), 'ALMANAC_HASH_SCRYPT_MAX_PARALLELISM'),
  S('hash.argon2MaxMemoryKiB', integer(8, 2 ** 32 - 1), 'ALMANAC_HASH_ARGON2_MAX_MEMORY'),
  S('hash.argon2MaxTimeCost', integer(1, 2 ** 32 - 1), 'ALMANAC_HASH_ARGON2_MAX_TIME'),
  S('hash.argon2MaxParallelism', integer(1, 255), 'ALMANAC_HASH_ARGON2_MAX_PARALLELISM'),
  S('hash.scryptMaxWork', integer(1, 2 ** 40), 'ALMANAC_HASH_SCRYPT_MAX_WORK'),
  S('hash.argon2MaxWork', integer(1, 2 ** 40), 'ALMANAC_HASH_ARGON2_MAX_WORK'),
  S('hash.jobsPerCaller', integer(1, 100000), 'ALMANAC_HASH_JOBS_PER_CALLER'),
  S('hash.memoryBudgetBytes', zeroOrAtLeast(2 ** 20, 2 ** 50), 'ALMANAC_HASH_MEMORY_BUDGET'),
  S('ip.cityMmdb', text, 'ALMANAC_IP_CITY_MMDB'),
  S('ip.asnMmdb', text, 'ALMANAC_IP_ASN_MMDB'),
  S('ip.ispMmdb', text, 'ALMANAC_IP_ISP_MMDB'),
  S('ip.anonymousIpMmdb', text, 'ALMANAC_IP_ANONYMOUS_IP_MMDB'),
  S('ip.connectionTypeMmdb', text, 'ALMANAC_IP_CONNECTION_TYPE_MMDB'),
  S('ip.torListFiles', list, 'ALMANAC_IP_TOR_LISTS'),
  S('ip.vpnListFiles', list, 'ALMANAC_IP_VPN_LISTS'),
  S('ip.proxyListFiles', list, 'ALMANAC_IP_PROXY_LISTS'),
  S('ip.hostingListFiles', list, 'ALMANAC_IP_HOSTING_LISTS'),
  S('qr.store', qrStore, 'ALMANAC_QR_STORE'),
  S('qr.signingKey', secret(32), 'ALMANAC_QR_SIGNING_KEY'),
  S('qr.publicUrl', origin, 'ALMANAC_PUBLIC_URL'),
  S('qr.storeMaxBytes', integer(1024, 2 ** 50), 'ALMANAC_QR_STORE_MAX_BYTES'),
  S('qr.storeMaxBytesPerKey', integer(1024, 2 ** 50), 'ALMANAC_QR_STORE_MAX_BYTES_PER_KEY'),
  S('qr.sweepSeconds', integer(1, 86400), 'ALMANAC_QR_SWEEP_INTERVAL'),
  S('qr.s3Endpoint', origin, 'S3_ENDPOINT'),
  S('qr.s3PublicEndpoint', origin, 'ALMANAC_QR_S3_PUBLIC_ENDPOINT'),
  S('qr.s3Region', text, 'S3_REGION'),
  S('qr.s3AccessKeyId', text, 'S3_ACCESS_KEY_ID'),
  S('qr.s3SecretAccessKey', text, 'S3_SECRET_ACCESS_KEY'),
  S('qr.s3VirtualHostedStyle', boolean, 'S3_VIRTUAL_HOSTED_STYLE'),
  S('qr.s3TimeoutSeconds', integer(1, 300), 'ALMANAC_QR_S3_TIMEOUT'),
  S('email.dnsServers', list, 'ALMANAC_EMAIL_DNS_SERVERS'),
  S('email.dnsTimeoutMs', integer(50, 60000), 'ALMANAC_EMAIL_DNS_TIMEOUT_MS'),
  S('email.rdapUrl', httpUrl, 'ALMANAC_EMAIL_RDAP_URL'),
  S('email.rdapBootstrap', text, 'ALMANAC_EMAIL_RDAP_BOOTSTRAP'),
  S('email.rdapTimeoutMs', integer(50, 60000), 'ALMANAC_EMAIL_RDAP_TIMEOUT_MS'),
  S('email.offline', boolean, 'ALMANAC_EMAIL_OFFLINE'),
  S('email.dnsSlots', integer(1, 100000), 'ALMANAC_EMAIL_DNS_SLOTS'),
  S('email.dnsSlotsPerCaller', integer(1, 100000), 'ALMANAC_EMAIL_DNS_SLOTS_PER_CALLER'),
  S('email.rdapSlots', integer(1, 100000), 'ALMANAC_EMAIL_RDAP_SLOTS'),
  S('email.rdapSlotsPerCaller', integer(1, 100000), 'ALMANAC_EMAIL_RDAP_SLOTS_PER_CALLER'),
  S('email.allowListFiles', list, 'ALMANAC_EMAIL_ALLOW_LISTS'),
  S('email.denyListFiles', list, 'ALMANAC_EMAIL_DENY_LISTS'),
  S('queries.workers', integer(0, 256), 'ALMANAC_QUERY_WORKERS'),
  S('queries.queueSize', integer(1, 100000), 'ALMANAC_QUERY_QUEUE'),
  S('queries.jobsPerCaller', integer(1, 100000), 'ALMANAC_QUERY_JOBS_PER_CALLER'),
  S('postal.workBudget', integer(1000, 1_000_000_000), 'ALMANAC_POSTAL_WORK_BUDGET'),
  S('ua.regexesDir', text, 'ALMANAC_UA_REGEXES'),
  S('ua.cacheEntries', integer(0, 10_000_000), 'ALMANAC_UA_CACHE_ENTRIES'),
  S('ua.cacheBytes', integer(0, 2 ** 34), 'ALMANAC_UA_CACHE_BYTES'),
]

export const DEFAULTS: Config = {
  port: 8080,
  host: '0.0.0.0',
  workers: 1,
  responseForm: 'enveloped',
  apiKeys: [],
  plans: new Map([['default', { name: 'default', credits: 10000, windowSeconds: 3600 }]]),
  defaultPlan: 'default',
  jwtLeewaySeconds: 30,
  jwtRequireExp: true,
  stateDir: '.state',
  // sha256 runs at ~1-1.8 GB/s (SHA-NI): the ~31 MB of tables, JSON and countries cost ~20-30 ms of start.
  // The next artifact up is the 63 MiB city mmdb, then the ~270 MB Bible and postal databases, which stay
  // in the background so a warm start stays fast.
  dataHashBeforeServeMaxBytes: 32 * 2 ** 20,
  quotaStore: 'memory',
  quotaFailOpen: false,
  trustedProxies: [],
  trustedProxyHeader: 'x-forwarded-for',
  maxLimit: 1000,
  bodyLimit: 1024 * 1024,
  accessLog: true,
  shutdownGraceSeconds: 10,
  requestsPerTurn: 1,
  requestsWaitingPerCaller: 64,
  requestBytesWaitingPerCaller: 4 * 2 ** 20,
  shutdownDelaySeconds: 5,
  corsOrigins: [],
  hash: {
    workers: 0,
    queueSize: 64,
    bcryptMaxRounds: 15,
    scryptMaxMemoryBytes: 128 * 2 ** 20 * 8,
    scryptMaxParallelism: 16,
    argon2MaxMemoryKiB: 262144,
    argon2MaxTimeCost: 10,
    argon2MaxParallelism: 8,
    // n·r·p: the default scrypt (16384·8·1) is 2^17 and takes ~50 ms; 2^23 is ~3 s of one core.
    scryptMaxWork: 2 ** 23,
    // time_cost · memory_cost (KiB): the default argon2id is 196,608; 2^20 is ~1.5 s of one core.
    argon2MaxWork: 2 ** 20,
    jobsPerCaller: 4,
    memoryBudgetBytes: 0,
  },
  queries: { workers: 0, queueSize: 64, jobsPerCaller: 4 },
  // ~25 ms of the 2-core build machine at most (src/domains/postal/service.ts, docs/postal.md).
  postal: { workBudget: 50_000 },
  ip: { torListFiles: [], vpnListFiles: [], proxyListFiles: [], hostingListFiles: [] },
  qr: { store: 'local', storeMaxBytes: 2 ** 30, sweepSeconds: 600, s3VirtualHostedStyle: false, s3TimeoutSeconds: 10 },
  email: {
    dnsServers: [],
    dnsTimeoutMs: 2000,
    rdapTimeoutMs: 3000,
    offline: false,
    dnsSlots: 512,
    rdapSlots: 128,
    allowListFiles: [],
    denyListFiles: [],
  },
  ua: { cacheEntries: 50_000, cacheBytes: 32 * 2 ** 20 },
}

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
  new Set([...SETTINGS.flatMap((s) => s.env ?? []).filter((n) => n.startsWith('ALMANAC_')), ...RUNTIME_ENV])

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
    `unknown environment variable${unknown.length > 1 ? 's' : ''} ${list}; the settings are listed in README.md (Configuration), or unset ${unknown.length > 1 ? 'them' : 'it'}`,
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
    for (const name of s.env ?? []) {
      const raw = env[name]
      if (raw !== undefined && raw !== '') setPath(config, s.path, s.parse(raw, name))
    }
    const flag = s.flag && flags.get(s.flag)
    if (flag) setPath(config, s.path, s.parse(flag, s.flag!))
  }

  Object.assign(config, overrides)
  validate(config)
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
      `ALMANAC_DEFAULT_PLAN: plan ${JSON.stringify(config.defaultPlan)} is not among ALMANAC_PLANS (${[...config.plans.keys()].join(', ')})`,
    )
  }
  for (const { key, plan } of config.apiKeys) {
    if (plan && !config.plans.has(plan))
      throw new ConfigError(`ALMANAC_API_KEYS: key ${key.slice(0, 3)}… names unknown plan ${JSON.stringify(plan)}`)
  }
}
