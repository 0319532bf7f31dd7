/** What `almanac --help` and `almanac <command> --help` print. */
import { SETTINGS, settingOptions } from '../config.ts'
import { helpLines } from '../lib/settings.ts'
import { CUSTOMERS_USAGE } from './customers.ts'
import { DATA_USAGE } from './data.ts'
import { KEYS_USAGE } from './keys.ts'
import { STATE_USAGE } from './state.ts'
import { USAGE_REPORT_USAGE } from './usage-report.ts'
import { VERSION_USAGE } from './version.ts'

export const MAIN_USAGE = `almanac: a self-hosted utility data API

usage: almanac <command> [options]

commands:
  serve      start the HTTP server on the built datasets
  start      build the datasets that can be built here, then serve (source tree; what failed is reported)
  data       build | fetch | verify | extract | pack | activate | rollback | status datasets
  keys       create | list | update | rotate | revoke API keys; audit: who changed keys and customers
  customers  create | list | update customers (accounts): their keys share one quota and plan
  usage      the usage ledger for billing: per key, period and route (--format table|csv|json)
  state      backup --to DIR | restore --from DIR: the state directory (keys, quotas, usage), also while serving;
             migrate-redis --from URL --to URL: the shared state from one Redis into a cluster or Sentinel group
  version    the app's and each dataset's version (--json)
  help       this text; \`almanac help <command>\` or \`almanac <command> --help\` for one command

Settings come from ALMANAC_* environment variables, a JSON file (--config) and flags; \`almanac serve --help\`
lists the flags. A running server documents its API at /docs (and /openapi.json); the settings table and
the operator's guide are in the README and docs/ of the project's repository.`

const flagList = () =>
  Object.keys(settingOptions())
    .map((f) => `--${f}`)
    .join(' ')

export const SERVE_USAGE = `usage: almanac serve [--port N] [--host ADDR] [--config FILE.json] [flags]

Serves /api/v1 on the built datasets (datasets/out, ALMANAC_DATA_DIR, or those inside the executable).
A domain whose datasets are missing answers 503 naming them; /readyz says which.
flags: ${flagList()} (each also an ALMANAC_* variable; the README of the
project's repository has the table). Once listening, the server documents its API at /docs.

settings (config file key: environment variables (flag); the file nests keys at the dots):
${helpLines(SETTINGS)}`

export const START_USAGE = `usage: almanac start [serve flags]

First run from a checkout: \`almanac data build\` (from ALMANAC_MIRROR, npm packages, system files and
upstream URLs), then \`almanac serve\`. Datasets that cannot be built are reported and their domains answer
503; everything else is served. In the executable, the same as serve.`

const TOPICS = new Map<string, () => string>([
  ['serve', () => SERVE_USAGE],
  ['start', () => START_USAGE],
  ['data', () => DATA_USAGE],
  ['keys', () => KEYS_USAGE],
  ['customers', () => CUSTOMERS_USAGE],
  ['usage', () => USAGE_REPORT_USAGE],
  ['state', () => STATE_USAGE],
  ['version', () => VERSION_USAGE],
  ['help', () => MAIN_USAGE],
])

export const usageOf = (topic: string): string | undefined => TOPICS.get(topic)?.()
