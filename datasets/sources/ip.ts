/** Upstream sources of the ip domain (none yet). */
import type { Source } from '../../src/data/types.ts'

export const ipSources: Source[] = []
