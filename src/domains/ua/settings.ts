/**
 * User-agent settings: a newer detection data folder and the parse cache (docs/ua.md).
 * Declared once here and named by the descriptor (`settings` in index.ts); src/config.ts composes them under
 * `ua.*` (env names, defaults, the README table and `serve --help` come from these declarations).
 * Imports nothing of the domain: config reads it, and config sits below the domains.
 */
import { integer, text } from '../../lib/parsers.ts'
import { optional, setting } from '../../lib/settings.ts'

const MiB = 2 ** 20

export const uaSettings = {
  regexesDir: optional(text, {
    shown: '`<data dir>/ua-regexes` when present',
    env: 'ALMANAC_UA_REGEXES',
    doc:
      'A newer Matomo device-detector checkout (or its `regexes/` of YAML; the older node-device-detector package layout is read too) ' +
      'served instead of the built detection data.',
    see: 'docs/ua.md',
  }),
  cacheEntries: setting(integer(0, 10_000_000), {
    default: 50_000,
    env: 'ALMANAC_UA_CACHE_ENTRIES',
    doc: 'UA parse results kept per cache generation (two generations), each from its second asking; 0 turns the cache off.',
  }),
  cacheBytes: setting(integer(0, 2 ** 34), {
    default: 32 * MiB,
    env: 'ALMANAC_UA_CACHE_BYTES',
    doc: 'Bytes of UA cache keys (user agents and hints) per generation.',
  }),
}
