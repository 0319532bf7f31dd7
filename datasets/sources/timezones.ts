/** Upstream sources of the timezones domain (none yet). */
import type { Source } from '../../src/data/types.ts'

export const timezonesSources: Source[] = []
