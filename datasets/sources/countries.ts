/** Upstream sources of the countries domain (none yet). */
import type { Source } from '../../src/data/types.ts'

export const countriesSources: Source[] = []
