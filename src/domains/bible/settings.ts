/**
 * Bible settings: the search result cache (docs/bible.md). Declared once here and named by the descriptor
 * (`settings` in index.ts); src/config.ts composes them under `bible.*`. Imports nothing of the domain:
 * config reads it, and config sits below the domains.
 */
import { integer } from '../../lib/parsers.ts'
import { setting } from '../../lib/settings.ts'

const MiB = 2 ** 20

export const bibleSettings = {
  searchCacheBytes: setting(integer(0, 2 ** 34), {
    default: 16 * MiB,
    env: 'ALMANAC_BIBLE_SEARCH_CACHE_BYTES',
    doc: 'Bytes of search answers kept (estimated; two generations, each answer at most half); 0 turns the cache off.',
    see: 'docs/bible.md',
  }),
}
