/**
 * `almanac keys create | list | revoke`: API keys in the key database under the state dir
 * (`ALMANAC_STATE_DIR`). A new key is printed once, alone on stdout, so `KEY=$(almanac keys create …)`
 * works; only its SHA-256 is kept. A running server sees new and revoked keys at once (it looks each
 * key up per request).
 */
import { ConfigError, loadConfig, settingOptions } from '../config.ts'
import { didYouMean, parseCommand, UsageError } from './args.ts'
import { KeyStoreError, openKeyStore, type StoredKey } from '../stores/keys.ts'
import { StateError } from '../stores/sqlite.ts'

export const KEYS_USAGE = `usage:
  almanac keys create --name NAME [--plan PLAN] [--json]
      issue a key (printed once); without --plan the key follows ALMANAC_DEFAULT_PLAN
  almanac keys list [--json]
      every key's id, name, plan, creation and revocation time (never the key)
  almanac keys revoke <id | name>
      refuse the key from now on (a name matches the active key of that name)
Keys live in ALMANAC_STATE_DIR/keys.sqlite (--state-dir); plans are ALMANAC_PLANS (--plans).`

const table = (rows: StoredKey[]): string => {
  const cells = [
    ['ID', 'NAME', 'PLAN', 'CREATED', 'REVOKED'],
    ...rows.map((k) => [k.id, k.name, k.plan ?? '(default)', k.created, k.revoked ?? '-']),
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
    { ...settingOptions(), json: { type: 'boolean' }, ...(sub === 'create' ? { name: { type: 'string' }, plan: { type: 'string' } } : {}) },
    sub === 'revoke',
  )
  if (parsed.help) {
    console.log(KEYS_USAGE)
    return 0
  }
  const flags = new Map(Object.entries(parsed.values).filter(([, v]) => typeof v === 'string') as [string, string][])
  const positional = parsed.positionals
  const json = parsed.values.json === true
  let store
  try {
    const config = loadConfig({ env, argv: rest.filter((a) => a !== '--json') })
    if (sub === 'create') {
      const name = flags.get('name')
      if (!name || name === 'true') {
        log(`almanac: keys create needs --name NAME\n${KEYS_USAGE}`)
        return 2
      }
      const plan = flags.get('plan') ?? null
      if (plan !== null && !config.plans.has(plan)) {
        log(
          `almanac: --plan ${JSON.stringify(plan)} is not among the configured plans (${[...config.plans.keys()].join(', ')}); set ALMANAC_PLANS as the server does`,
        )
        return 2
      }
      store = openKeyStore(config.stateDir)
      const { key, record } = store.create(name, plan)
      if (json) console.log(JSON.stringify({ ...record, key }, null, 2))
      else {
        console.log(key)
        log(
          `created ${record.id} (${record.name}, plan ${record.plan ?? `${config.defaultPlan} (default)`}); the key above is shown only this once`,
        )
      }
      return 0
    }
    if (sub === 'list') {
      store = openKeyStore(config.stateDir)
      const keys = store.list()
      console.log(json ? JSON.stringify(keys, null, 2) : keys.length ? table(keys) : 'no keys')
      return 0
    }
    const target = positional[0]
    if (!target) {
      log(`almanac: keys revoke needs an id or a name\n${KEYS_USAGE}`)
      return 2
    }
    store = openKeyStore(config.stateDir)
    const revoked = store.revoke(target)
    if (json) console.log(JSON.stringify(revoked, null, 2))
    else log(`revoked ${revoked.id} (${revoked.name}) at ${revoked.revoked}`)
    return 0
  } catch (e) {
    if (e instanceof ConfigError) {
      log(`almanac: configuration error: ${e.message}`)
      return 2
    }
    if (e instanceof KeyStoreError || e instanceof StateError) {
      log(`almanac: ${e.message}`)
      return 1
    }
    throw e
  } finally {
    store?.close()
  }
}
