/** The dataset mirror the tests read directly: `ALMANAC_MIRROR`, else `../shared/mirror` beside the checkout (as `.ci/run` sets it). */
import { resolve } from 'node:path'

export const MIRROR = process.env.ALMANAC_MIRROR || resolve(import.meta.dir, '../../../shared/mirror')
