/**
 * `almanac keys create | list | revoke`: API keys in the key store ALMANAC_KEY_STORE names (the state
 * dir's SQLite, or Redis). A new key is printed once, alone on stdout, so `KEY=$(almanac keys create …)`
 * works; only its SHA-256 is kept. A running server sees new and revoked keys at once with SQLite (it
 * looks each key up per request), within a second with Redis (see keys-redis.ts).
 */
import { ConfigError, loadConfig, settingOptions, type Config } from '../config.ts'
import { domains } from '../domains/index.ts'
import { redactUrl } from '../stores/redis.ts'
import { createKeyStore } from '../stores/index.ts'
import { KeyStoreError, type KeyStore, type StoredKey } from '../stores/keys.ts'
import { StateError } from '../stores/sqlite.ts'
import { didYouMean } from '../lib/did-you-mean.ts'
import { parseCommand, UsageError } from './args.ts'

export const KEYS_USAGE = `usage:
  almanac keys create --name NAME [--plan PLAN] [--scopes ip,ua,…] [--expires DATE] [--json]
      issue a key (printed once); without --plan the key follows ALMANAC_DEFAULT_PLAN; --scopes limits it
      to those domains; --expires (2027-01-01 or an ISO 8601 time) refuses it from that moment (UTC)
  almanac keys list [--json]
      every key's id, name, plan, scopes, expiry, creation and revocation time (never the key)
  almanac keys revoke <id | name>
      refuse the key from now on (a name matches the active key of that name)
Keys live in ALMANAC_KEY_STORE (--key-store): sqlite, in ALMANAC_STATE_DIR/keys.sqlite (--state-dir), or a
redis:// URL (the default when ALMANAC_QUOTA_STORE is Redis); plans are ALMANAC_PLANS (--plans).`

const DATE = /^\d{4}-\d{2}-\d{2}$/
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/

/** `--expires`: a date (its midnight UTC) or an ISO 8601 time with a zone, in the future; else why not. */
export function parseExpiry(raw: string, now = Date.now()): { at: string } | { error: string } {
  const text = DATE.test(raw) ? `${raw}T00:00:00Z` : raw
  const ms = DATE.test(raw) || DATE_TIME.test(raw) ? Date.parse(text) : NaN
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

const table = (rows: StoredKey[]): string => {
  const cells = [
    ['ID', 'NAME', 'PLAN', 'SCOPES', 'EXPIRES', 'CREATED', 'REVOKED'],
    ...rows.map((k) => [
      k.id,
      k.name,
      k.plan ?? '(default)',
      k.scopes?.join(',') ?? '(all)',
      k.expires ?? '-',
      k.created,
      k.revoked ?? '-',
    ]),
  ]
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)))
  return cells
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')
}

/** The store in words, without a password. */
const where = (config: Pick<Config, 'stores'>) => {
  const store = config.stores.keys
  return store.kind === 'sqlite' ? `${store.dir}/keys.sqlite` : redactUrl(store.url)
}

/** Runs the subcommand; returns the process exit code. */
export async function keysCommand(
  args: string[],
  env: Record<string, string | undefined> = process.env,
  log: (line: string) => void = (l) => console.error(l),
): Promise<number> {
  const [sub, ...rest] = args
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    console.log(KEYS_USAGE)
    return 0
  }
  if (!['create', 'list', 'revoke'].includes(sub))
    throw new UsageError(`unknown keys command ${JSON.stringify(sub)}${didYouMean(sub, ['create', 'list', 'revoke'])}\n${KEYS_USAGE}`)
  // `--json` never takes a value: `keys revoke --json NAME` revokes NAME. The settings' flags are
  // accepted too (--state-dir, --plans, --config …), as the server takes them.
  const parsed = parseCommand(
    rest,
    {
      ...settingOptions(),
      json: { type: 'boolean' },
      ...(sub === 'create'
        ? { name: { type: 'string' }, plan: { type: 'string' }, scopes: { type: 'string' }, expires: { type: 'string' } }
        : {}),
    },
    sub === 'revoke',
  )
  if (parsed.help) {
    console.log(KEYS_USAGE)
    return 0
  }
  const flags = new Map(Object.entries(parsed.values).filter(([, v]) => typeof v === 'string') as [string, string][])
  const positional = parsed.positionals
  const json = parsed.values.json === true
  let store: KeyStore | undefined
  try {
    const config = loadConfig({ env, argv: rest })
    if (sub === 'create') {
      const name = flags.get('name')
      if (!name) {
        log(`almanac: keys create needs --name NAME\n${KEYS_USAGE}`)
        return 2
      }
      const plan = flags.get('plan') ?? null
      if (plan !== null && !config.plans.has(plan)) {
        log(
          `almanac: --plan ${JSON.stringify(plan)} is not among the configured plans (${[...config.plans.keys()].join(', ')}); set ` +
            `ALMANAC_PLANS as the server does`,
        )
        return 2
      }
      const scopes = flags.has('scopes') ? parseScopes(flags.get('scopes')!) : { scopes: null }
      const expires = flags.has('expires') ? parseExpiry(flags.get('expires')!) : { at: null }
      for (const bad of [scopes, expires])
        if ('error' in bad) {
          log(`almanac: ${bad.error}`)
          return 2
        }
      store = createKeyStore(config)
      const { key, record } = await store.create({
        name,
        plan,
        scopes: 'scopes' in scopes ? scopes.scopes : null,
        expires: 'at' in expires ? expires.at : null,
      })
      if (json) console.log(JSON.stringify({ ...record, key }, null, 2))
      else {
        console.log(key)
        log(
          `created ${record.id} (${record.name}, plan ${record.plan ?? `${config.defaultPlan} (default)`}${
            record.scopes ? `, ` + `scopes ${record.scopes.join(',')}` : ''
          }${record.expires ? `, expires ${record.expires}` : ''}) in ${where(config)}; the ` + `key above is shown only this once`,
        )
      }
      return 0
    }
    if (sub === 'list') {
      store = createKeyStore(config)
      const keys = await store.list()
      console.log(json ? JSON.stringify(keys, null, 2) : keys.length ? table(keys) : 'no keys')
      return 0
    }
    const target = positional[0]
    if (!target) {
      log(`almanac: keys revoke needs an id or a name\n${KEYS_USAGE}`)
      return 2
    }
    store = createKeyStore(config)
    const revoked = await store.revoke(target)
    if (json) console.log(JSON.stringify(revoked, null, 2))
    else log(`revoked ${revoked.id} (${revoked.name}) at ${revoked.revoked}`)
    return 0
  } catch (e) {
    if (e instanceof ConfigError) {
      log(`almanac: configuration error: ${e.message}`)
      return 2
    }
    if (e instanceof KeyStoreError || e instanceof StateError || /^Redis at /.test((e as Error)?.message ?? '')) {
      log(`almanac: ${(e as Error).message}`)
      return 1
    }
    throw e
  } finally {
    store?.close()
  }
}
