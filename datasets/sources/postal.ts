/** Upstream sources of the postal domain (none yet). */
import type { Source } from '../../src/data/types.ts'

export const postalSources: Source[] = []
