/** Upstream sources of the hash domain (none yet). */
import type { Source } from '../../data/types.ts'

export const hashSources: Source[] = []
