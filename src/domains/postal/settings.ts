/**
 * Postal settings: the work one search may do (docs/postal.md).
 * Declared once here and named by the descriptor (`settings` in index.ts); src/config.ts composes them under
 * `postal.*` (env names, defaults, the README table and `serve --help` come from these declarations).
 * Imports nothing of the domain: config reads it, and config sits below the domains.
 */
import { integer } from '../../lib/parsers.ts'
import { setting } from '../../lib/settings.ts'

export const postalSettings = {
  // ~25 ms of the 2-core build machine at most (src/domains/postal/service.ts, docs/postal.md).
  workBudget: setting(integer(1000, 1_000_000_000), {
    default: 50_000,
    env: 'ALMANAC_POSTAL_WORK_BUDGET',
    doc: 'Work one postal search, nearby or within may do, in rows read (~0.25–0.5 µs each); beyond it a 422 says what to narrow.',
    see: 'docs/postal.md',
  }),
}
