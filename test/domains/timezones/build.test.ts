/** The build's guard: a tzdata release older than TZDATA_MIN is refused with a message saying what to do. */
import { describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { sourceById } from '../../../datasets/sources.ts'
import { TZDATA_MIN } from '../../../src/data/tzdata.ts'
import { buildDatasets } from '../../../src/data/build.ts'
import { compareTzVersions } from '../../../src/domains/timezones/build.ts'
import timezones from '../../../src/domains/timezones/index.ts'
import { tempDirs } from '../../support/temp.ts'

const tempDir = tempDirs('tz-old-')

describe('tzdata release guard', () => {
  test('release names order by year, then letters (z < za)', () => {
    const ordered = ['2025b', '2025z', '2025za', '2026a', '2026f', '2026g', '2027a']
    for (let i = 0; i + 1 < ordered.length; i++) expect(compareTzVersions(ordered[i]!, ordered[i + 1]!)).toBeLessThan(0)
    expect(compareTzVersions('2026f', '2026f')).toBe(0)
    expect(() => compareTzVersions('latest', '2026f')).toThrow(/not a tz release name/)
  })

  test('an older tzdata.zi stops the build, naming both releases and the fix', async () => {
    // The real build runner and builder, with the tzdata source pointed at a file naming an old release.
    const dir = tempDir()
    const old = join(dir, 'tzdata.zi')
    writeFileSync(old, '# version 2025b\nZ Etc/UTC 0 - UTC\n')
    const sources = (id: string) => (id === 'tzdata' ? { ...sourceById(id), system: old } : sourceById(id))
    const failure = await buildDatasets([timezones], { outDir: join(dir, 'out'), sources, log: () => {} }).then(
      () => 'built',
      (e: Error) => e.message,
    )
    expect(failure).toContain('2025b')
    expect(failure).toContain(TZDATA_MIN)
    expect(failure).toContain('apt-get install tzdata')
  })
})
