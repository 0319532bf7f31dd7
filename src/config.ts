/**
 * One typed configuration, layered: defaults < config file (`--config path.json`) < `ALMANAC_*`
 * environment < command-line flags. Every setting is declared once in SCHEMA (lib/settings.ts): its
 * parser, default, names in each layer and one line on what it does. The Config type, DEFAULTS, the
 * flags, the README table (`bun scripts/settings-table.ts`) and `almanac serve --help` are derived from
 * it, and a bad value anywhere is reported with the name the operator used.
 */
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { didYouMean, nearest } from './lib/did-you-mean.ts'
import { ConfigError, defaultsOf, entriesOf, optional, setting, type Parser, type ValuesOf } from './lib/settings.ts'

export { ConfigError }

export type ResponseForm = 'enveloped' | 'bare'

export interface Plan {
  name: string
  credits: number
  windowSeconds: number
}

const fail = (name: string, why: string): never => {
  throw new ConfigError(`${name}: ${why}`)
}

const integer =
  (min: number, max: number): Parser<number> =>
  (raw, name) => {
    const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^-?\d+$/.test(raw.trim()) ? Number(raw) : NaN
    if (!Number.isSafeInteger(n) || n < min || n > max) fail(name, `expected an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`)
    return n
  }

/** 0 (meaning "work it out") or an integer from min to max. */
const zeroOrAtLeast =
  (min: number, max: number): Parser<number> =>
  (raw, name) => {
    const n = integer(0, max)(raw, name)
    if (n !== 0 && n < min) fail(name, `expected 0 (automatic) or an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`)
    return n
  }

const boolean: Parser<boolean> = (raw, name) => {
  if (typeof raw === 'boolean') return raw
  const s = String(raw).trim().toLowerCase()
  if (['1', 'true', 'yes', 'on'].includes(s)) return true
  if (['0', 'false', 'no', 'off'].includes(s)) return false
  return fail(name, `expected true or false, got ${JSON.stringify(raw)}`)
}

const text: Parser<string> = (raw, name) => {
  if (typeof raw !== 'string' || raw.trim() === '') fail(name, 'expected a non-empty string')
  return (raw as string).trim()
}

const oneOf =
  <const V extends string>(...values: V[]): Parser<V> =>
  (raw, name) => {
    const s = String(raw).trim().toLowerCase()
    if (!(values as string[]).includes(s)) fail(name, `expected one of ${values.join(', ')}, got ${JSON.stringify(raw)}`)
    return s as V
  }

const list: Parser<string[]> = (raw, name) => {
  if (Array.isArray(raw)) return raw.map((v, i) => text(v, `${name}[${i}]`))
  if (typeof raw !== 'string') return fail(name, 'expected a comma-separated list')
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
}

const apiKeys: Parser<{ key: string; plan?: string }[]> = (raw, name) =>
  list(raw, name).map((entry) => {
    const [key, plan, ...rest] = entry.split(':')
    if (!key || rest.length) fail(name, `expected key or key:plan, got ${JSON.stringify(entry)}`)
    if (key!.length < 8) fail(name, `key ${JSON.stringify(key!.slice(0, 3) + '…')} is shorter than 8 characters`)
    return plan ? { key: key!, plan } : { key: key! }
  })

/** `*`, or origins as browsers send them (`https://app.example.com`, scheme://host[:port], no path). */
const origins: Parser<string[]> = (raw, name) => {
  const values = list(raw, name)
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

/** Names a plan may not have: what a plain object already answers (`__proto__`, `constructor`, …). */
const RESERVED_PLAN_NAMES = new Set(Object.getOwnPropertyNames(Object.prototype))

/**
 * `free:1000/1d,tiny:5/60s` -> plans; each window is a count and a unit (s, m, h, d). A Map: plan names come
 * from tokens and keys, and a plain object would answer `constructor`.
 */
const plans: Parser<ReadonlyMap<string, Plan>> = (raw, name) => {
  const out = new Map<string, Plan>()
  for (const entry of list(raw, name)) {
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
const qrStore: Parser<string> = (raw, name) => {
  const s = text(raw, name)
  if (s === 'local' || /^local:\/./.test(s)) return s
  if (/^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/[^\s]*)?$/.test(s)) return s
  return fail(name, `expected local, local:/absolute/path or s3://bucket/prefix, got ${JSON.stringify(s)}`)
}

/** An absolute http(s) origin without path, query or fragment (a trailing slash is dropped). */
const origin: Parser<string> = (raw, name) => {
  const s = text(raw, name).replace(/\/+$/, '')
  let url: URL | undefined
  try {
    url = new URL(s)
  } catch {}
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.pathname !== '/' || url.search || url.hash)
    fail(name, `expected an http(s) origin such as https://api.example.com, got ${JSON.stringify(raw)}`)
  return url!.origin
}

const secret =
  (minLength: number): Parser<string> =>
  (raw, name) => {
    const s = text(raw, name)
    if (s.length < minLength) fail(name, `expected at least ${minLength} characters`)
    return s
  }

/** The one place a store's spelling is read: the settings keep it as written, `storesOf` turns it into a StoreLocation. */
const isRedisUrl = (s: string) => /^rediss?:\/\//.test(s)

/** `memory`, `sqlite` or a `redis://` URL; `kinds` are those this store may be. */
const storeSetting =
  (kinds: readonly ('memory' | 'sqlite')[]): Parser<string> =>
  (raw, name) => {
    const s = text(raw, name)
    if ((kinds as string[]).includes(s) || isRedisUrl(s)) return s
    return fail(name, `expected ${kinds.join(', ')} or a redis:// URL, got ${JSON.stringify(s)}`)
  }

/** An http(s) URL, kept with a trailing slash so `{base}domain/{name}` joins cleanly. */
const httpUrl: Parser<string> = (raw, name) => {
  const s = text(raw, name)
  let url: URL
  try {
    url = new URL(s)
  } catch {
    return fail(name, `expected an http(s) URL, got ${JSON.stringify(s)}`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') fail(name, `expected an http(s) URL, got ${JSON.stringify(s)}`)
  return s.endsWith('/') ? s : s + '/'
}

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
  plans: setting(plans, {
    default: new Map([['default', { name: 'default', credits: 10000, windowSeconds: 3600 }]]),
    shown: '`default:10000/1h`',
    env: 'ALMANAC_PLANS',
    flag: '--plans',
    doc: 'Plans as `name:credits/window` (`free:1000/1d,tiny:5/60s`).',
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
    default: 'memory',
    env: 'ALMANAC_QUOTA_STORE',
    flag: '--quota-store',
    doc: '`memory`, `sqlite`, or `redis://…` (shared by many instances).',
  }),
  keyStore: optional(storeSetting(['sqlite']), {
    shown: "`sqlite`, or the quota store's Redis",
    env: 'ALMANAC_KEY_STORE',
    flag: '--key-store',
    doc: 'Where API keys live: `sqlite` (the state dir) or `redis://…` (shared by many instances; a revoke reaches all within a second).',
  }),
  quotaFailOpen: setting(boolean, {
    default: false,
    env: 'ALMANAC_QUOTA_FAIL_OPEN',
    doc: 'When the quota store is down: serve uncounted instead of 503.',
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
    doc: "The one header those proxies set: `x-forwarded-for` (with `X-Forwarded-Proto`/`-Host`) or `forwarded` (RFC 7239); the other is the client's to forge and is ignored.",
  }),
  maxLimit: setting(integer(1, 100000), { default: 1000, env: 'ALMANAC_MAX_LIMIT', doc: 'Largest `limit` on list endpoints.' }),
  bodyLimit: setting(integer(1024, 64 * MiB), {
    default: MiB,
    env: 'ALMANAC_BODY_LIMIT',
    doc: "Ceiling on every request body, bytes (413 beyond); each route's own limit (`x-body-limit`, 16 KiB unless it needs more) applies under it.",
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
  requestsPerTurn: setting(integer(0, 10000), {
    default: 1,
    env: 'ALMANAC_REQUESTS_PER_TURN',
    doc: "Requests one caller may start in one turn of the event loop (0: no limit); more wait, unread, for later turns: one caller's backlog never delays another's request.",
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
    doc: "Declared body bytes one caller's waiting requests may hold (429 beyond, credit given back).",
  }),
  shutdownDelaySeconds: setting(integer(0, 3600), {
    default: 5,
    env: 'ALMANAC_SHUTDOWN_DELAY',
    doc: 'Seconds after SIGTERM during which `/readyz` answers 503 while the listener still accepts and answers, before it closes; 0 closes at once.',
    see: 'docs/operations.md#shutdown',
  }),
  corsOrigins: setting(origins, {
    default: [],
    shown: '— (off)',
    env: 'ALMANAC_CORS_ORIGINS',
    flag: '--cors-origins',
    doc: 'Origins browsers may call from (`https://app.example.com,…` or `*`); preflights need no key.',
  }),
  hash: {
    workers: setting(integer(0, 256), { default: 0, shown: '0 = cores', env: 'ALMANAC_HASH_WORKERS', doc: 'KDF worker threads.' }),
    queueSize: setting(integer(1, 100000), {
      default: 64,
      env: 'ALMANAC_HASH_QUEUE',
      doc: 'KDF jobs allowed to wait for a worker (503 beyond).',
    }),
    bcryptMaxRounds: setting(integer(4, 31), {
      default: 15,
      env: 'ALMANAC_HASH_BCRYPT_MAX_ROUNDS',
      doc: 'Ceiling on bcrypt rounds (422 naming it).',
    }),
    scryptMaxMemoryBytes: setting(integer(1024, 2 ** 40), {
      default: 128 * MiB * 8,
      shown: '1 GiB',
      env: 'ALMANAC_HASH_SCRYPT_MAX_MEMORY',
      doc: "Ceiling on scrypt's memory, 128·r·(n + p) bytes (422 naming it).",
    }),
    scryptMaxParallelism: setting(integer(1, 2 ** 30 - 1), {
      default: 16,
      env: 'ALMANAC_HASH_SCRYPT_MAX_PARALLELISM',
      doc: "Ceiling on scrypt's p: each lane repeats the whole n·r work, so p multiplies the time.",
    }),
    argon2MaxMemoryKiB: setting(integer(8, 2 ** 32 - 1), {
      default: 262144,
      shown: '262144 KiB',
      env: 'ALMANAC_HASH_ARGON2_MAX_MEMORY',
      doc: "Ceiling on argon2id's memory_cost, KiB.",
    }),
    argon2MaxTimeCost: setting(integer(1, 2 ** 32 - 1), {
      default: 10,
      env: 'ALMANAC_HASH_ARGON2_MAX_TIME',
      doc: "Ceiling on argon2id's time_cost.",
    }),
    argon2MaxParallelism: setting(integer(1, 255), {
      default: 8,
      env: 'ALMANAC_HASH_ARGON2_MAX_PARALLELISM',
      doc: "Ceiling on argon2id's parallelism.",
    }),
    // n·r·p: the default scrypt (16384·8·1) is 2^17 and takes ~50 ms; 2^23 is ~3 s of one core.
    scryptMaxWork: setting(integer(1, 2 ** 40), {
      default: 2 ** 23,
      shown: '2^23',
      env: 'ALMANAC_HASH_SCRYPT_MAX_WORK',
      doc: "Ceiling on scrypt's n·r·p, which the time grows with (422 naming it).",
    }),
    // time_cost · memory_cost (KiB): the default argon2id is 196,608; 2^20 is ~1.5 s of one core.
    argon2MaxWork: setting(integer(1, 2 ** 40), {
      default: 2 ** 20,
      shown: '2^20',
      env: 'ALMANAC_HASH_ARGON2_MAX_WORK',
      doc: "Ceiling on argon2id's time_cost·memory_cost; parallelism splits memory into lanes, adding no work (422 naming it).",
    }),
    jobsPerCaller: setting(integer(1, 100000), {
      default: 4,
      env: 'ALMANAC_HASH_JOBS_PER_CALLER',
      doc: 'KDF jobs one caller may have running or waiting (503 beyond, for that caller).',
    }),
    memoryBudgetBytes: setting(zeroOrAtLeast(2 ** 20, 2 ** 50), {
      default: 0,
      shown: '0 = ¼ of min(RAM, cgroup limit) ÷ `workers`',
      env: 'ALMANAC_HASH_MEMORY_BUDGET',
      doc: 'Bytes all running KDF jobs may allocate (scrypt 128·r·(n+2+p), argon2id memory_cost KiB); one caller may hold half. Beyond it jobs wait in the queue (503 when full); a job over half is a 422 naming it.',
    }),
  },
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
  postal: {
    // ~25 ms of the 2-core build machine at most (src/domains/postal/service.ts, docs/postal.md).
    workBudget: setting(integer(1000, 1_000_000_000), {
      default: 50_000,
      env: 'ALMANAC_POSTAL_WORK_BUDGET',
      doc: 'Work one postal search, nearby or within may do, in rows read (~0.25–0.5 µs each); beyond it a 422 says what to narrow.',
      see: 'docs/postal.md',
    }),
  },
  ip: {
    cityMmdb: optional(text, { env: 'ALMANAC_IP_CITY_MMDB', doc: 'Your own MaxMind City database; it takes precedence.' }),
    asnMmdb: optional(text, { env: 'ALMANAC_IP_ASN_MMDB', doc: 'Your own MaxMind ASN database; it takes precedence.' }),
    ispMmdb: optional(text, { env: 'ALMANAC_IP_ISP_MMDB', doc: 'Your own MaxMind ISP database; it takes precedence.' }),
    anonymousIpMmdb: optional(text, {
      env: 'ALMANAC_IP_ANONYMOUS_IP_MMDB',
      doc: 'Your own MaxMind Anonymous IP database; it takes precedence.',
    }),
    connectionTypeMmdb: optional(text, {
      env: 'ALMANAC_IP_CONNECTION_TYPE_MMDB',
      doc: 'Your own MaxMind Connection Type database; it takes precedence.',
    }),
    torListFiles: setting(list, {
      default: [],
      env: 'ALMANAC_IP_TOR_LISTS',
      doc: 'Extra Tor list files (address or CIDR per line), reloaded on SIGHUP.',
    }),
    vpnListFiles: setting(list, {
      default: [],
      env: 'ALMANAC_IP_VPN_LISTS',
      doc: 'Extra VPN list files (address or CIDR per line), reloaded on SIGHUP.',
    }),
    proxyListFiles: setting(list, {
      default: [],
      env: 'ALMANAC_IP_PROXY_LISTS',
      doc: 'Extra proxy list files (address or CIDR per line), reloaded on SIGHUP.',
    }),
    hostingListFiles: setting(list, {
      default: [],
      env: 'ALMANAC_IP_HOSTING_LISTS',
      doc: 'Extra hosting list files (address or CIDR per line), reloaded on SIGHUP.',
    }),
  },
  qr: {
    store: setting(qrStore, {
      default: 'local',
      env: 'ALMANAC_QR_STORE',
      doc: 'Where png/svg QR images go: `local` (`<state dir>/qr`), `local:/path`, or `s3://bucket/prefix`.',
    }),
    signingKey: optional(secret(32), {
      shown: 'generated, kept in `<state dir>/qr-signing-key`',
      env: 'ALMANAC_QR_SIGNING_KEY',
      doc: 'HMAC key (32+ characters) of local download links; share it between instances.',
    }),
    publicUrl: optional(origin, {
      shown: "the request's host",
      env: 'ALMANAC_PUBLIC_URL',
      doc: 'Origin of absolute QR download links (`https://api.example.com`); forwarded host/proto only from `ALMANAC_TRUSTED_PROXIES`.',
    }),
    storeMaxBytes: setting(integer(1024, 2 ** 50), {
      default: 2 ** 30,
      shown: '1 GiB',
      env: 'ALMANAC_QR_STORE_MAX_BYTES',
      doc: 'Ceiling on the bytes the local store holds; a write beyond it is a 503.',
    }),
    storeMaxBytesPerKey: optional(integer(1024, 2 ** 50), {
      shown: '1/16 of the ceiling',
      env: 'ALMANAC_QR_STORE_MAX_BYTES_PER_KEY',
      doc: 'Bytes of live png/svg images one key may hold in the QR store (local or S3) until their links expire; 429 beyond.',
      see: 'docs/qr.md',
    }),
    sweepSeconds: setting(integer(1, 86400), {
      default: 600,
      shown: '600 s',
      env: 'ALMANAC_QR_SWEEP_INTERVAL',
      doc: 'How often expired local images are deleted.',
    }),
    s3Endpoint: optional(origin, { env: 'S3_ENDPOINT', doc: "The S3 store's endpoint (Bun's built-in client)." }),
    s3PublicEndpoint: optional(origin, {
      shown: '`S3_ENDPOINT`',
      env: 'ALMANAC_QR_S3_PUBLIC_ENDPOINT',
      doc: "Origin clients download S3 QR images from, when the server reaches S3 at an address they cannot (compose's `http://s3:9000`): links are presigned for it, uploads still use `S3_ENDPOINT`.",
      see: 'docs/qr.md',
    }),
    s3Region: optional(text, { env: 'S3_REGION', doc: "The S3 store's region." }),
    s3AccessKeyId: optional(text, { env: 'S3_ACCESS_KEY_ID', doc: "The S3 store's access key id." }),
    s3SecretAccessKey: optional(text, { env: 'S3_SECRET_ACCESS_KEY', doc: "The S3 store's secret access key." }),
    s3VirtualHostedStyle: setting(boolean, {
      default: false,
      env: 'S3_VIRTUAL_HOSTED_STYLE',
      doc: 'Bucket in the host name (`bucket.endpoint`) instead of the path.',
    }),
    s3TimeoutSeconds: setting(integer(1, 300), {
      default: 10,
      shown: '10 s',
      env: 'ALMANAC_QR_S3_TIMEOUT',
      doc: 'Seconds an S3 upload may take before the request is answered 503.',
    }),
  },
  email: {
    dnsServers: setting(list, {
      default: [],
      shown: "system's",
      env: 'ALMANAC_EMAIL_DNS_SERVERS',
      doc: 'DNS servers (`host[:port]`) for MX checks.',
    }),
    dnsTimeoutMs: setting(integer(50, 60000), {
      default: 2000,
      env: 'ALMANAC_EMAIL_DNS_TIMEOUT_MS',
      doc: "Deadline for one domain's whole MX check (MX, then A/AAAA), in milliseconds.",
    }),
    rdapUrl: optional(httpUrl, {
      env: 'ALMANAC_EMAIL_RDAP_URL',
      doc: 'One RDAP base for every domain (trusted as configured; redirects off it: https to public addresses only, 3 at most).',
    }),
    rdapBootstrap: optional(text, {
      shown: 'the built `email-rdap` dataset',
      env: 'ALMANAC_EMAIL_RDAP_BOOTSTRAP',
      doc: 'An IANA `dns.json` used instead of the built bootstrap.',
    }),
    rdapTimeoutMs: setting(integer(50, 60000), {
      default: 3000,
      env: 'ALMANAC_EMAIL_RDAP_TIMEOUT_MS',
      doc: 'Deadline for one RDAP lookup, in milliseconds.',
    }),
    rdapCache: optional(storeSetting(['memory', 'sqlite']), {
      shown: "the quota store's Redis when that is Redis, else `sqlite`",
      env: 'ALMANAC_EMAIL_RDAP_CACHE',
      doc: 'Where RDAP answers are kept for 7 days: `memory` (this process), `sqlite` (the state dir) or `redis://…` (shared by many instances).',
    }),
    offline: setting(boolean, {
      default: false,
      env: 'ALMANAC_EMAIL_OFFLINE',
      doc: 'No DNS or RDAP at request time (air-gapped servers): those email checks answer "unknown".',
    }),
    dnsSlots: setting(integer(1, 100000), {
      default: 512,
      env: 'ALMANAC_EMAIL_DNS_SLOTS',
      doc: 'MX lookups under way at once; beyond, the check is unknown (`dns_busy`).',
    }),
    dnsSlotsPerCaller: optional(integer(1, 100000), {
      shown: 'an eighth (≥ 4)',
      env: 'ALMANAC_EMAIL_DNS_SLOTS_PER_CALLER',
      doc: 'MX lookups one caller (quota subject) may have under way; beyond, `dns_busy`.',
    }),
    rdapSlots: setting(integer(1, 100000), {
      default: 128,
      env: 'ALMANAC_EMAIL_RDAP_SLOTS',
      doc: 'RDAP lookups under way at once; beyond, `rdap_busy`.',
    }),
    rdapSlotsPerCaller: optional(integer(1, 100000), {
      shown: 'an eighth (≥ 4)',
      env: 'ALMANAC_EMAIL_RDAP_SLOTS_PER_CALLER',
      doc: 'RDAP lookups one caller may have under way; beyond, `rdap_busy`.',
    }),
    allowListFiles: setting(list, {
      default: [],
      env: 'ALMANAC_EMAIL_ALLOW_LISTS',
      doc: 'Operator allow-list files of email domains (one per line), reloaded on SIGHUP.',
    }),
    denyListFiles: setting(list, {
      default: [],
      env: 'ALMANAC_EMAIL_DENY_LISTS',
      doc: 'Operator deny-list files of email domains (one per line), reloaded on SIGHUP.',
    }),
  },
  ua: {
    regexesDir: optional(text, {
      shown: '`<data dir>/ua-regexes` when present',
      env: 'ALMANAC_UA_REGEXES',
      doc: 'A newer Matomo device-detector checkout (or its `regexes/` of YAML; the older node-device-detector package layout is read too) served instead of the built detection data.',
      see: 'docs/ua.md',
    }),
    cacheEntries: setting(integer(0, 10_000_000), {
      default: 50_000,
      env: 'ALMANAC_UA_CACHE_ENTRIES',
      doc: 'UA parse results kept per cache generation (two generations); 0 turns the cache off.',
    }),
    cacheBytes: setting(integer(0, 2 ** 34), {
      default: 32 * MiB,
      env: 'ALMANAC_UA_CACHE_BYTES',
      doc: 'Bytes of UA cache keys (user agents and hints) per generation.',
    }),
  },
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
      `ALMANAC_DEFAULT_PLAN: plan ${JSON.stringify(config.defaultPlan)} is not among ALMANAC_PLANS (${[...config.plans.keys()].join(', ')})`,
    )
  }
  for (const { key, plan } of config.apiKeys) {
    if (plan && !config.plans.has(plan))
      throw new ConfigError(`ALMANAC_API_KEYS: key ${key.slice(0, 3)}… names unknown plan ${JSON.stringify(plan)}`)
  }
}
