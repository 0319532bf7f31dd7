/** The build's guard: a tzdata release older than TZDATA_MIN is refused with a message saying what to do. */
import { describe, expect, test } from 'bun:test'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TZDATA_MIN } from '../../../datasets/sources/timezones.ts'
import type { BuildContext } from '../../../src/data/types.ts'
import { compareTzVersions, timezonesBuilder } from '../../../src/domains/timezones/build.ts'

describe('tzdata release guard', () => {
  test('release names order by year, then letters (z < za)', () => {
    const ordered = ['2025b', '2025z', '2025za', '2026a', '2026f', '2026g', '2027a']
    for (let i = 0; i + 1 < ordered.length; i++) expect(compareTzVersions(ordered[i]!, ordered[i + 1]!)).toBeLessThan(0)
    expect(compareTzVersions('2026f', '2026f')).toBe(0)
    expect(() => compareTzVersions('latest', '2026f')).toThrow(/not a tz release name/)
  })

  test('an older tzdata.zi stops the build, naming both releases and the fix', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tz-old-'))
    writeFileSync(join(dir, 'tzdata.zi'), '# version 2025b\nZ Etc/UTC 0 - UTC\n')
    const ctx = {
      source: async () => ({ path: join(dir, 'tzdata.zi') }),
      out: (name: string) => join(dir, name),
      progress: () => ({ tick() {}, done() {} }),
      log() {},
    } as unknown as BuildContext
    const failure = await timezonesBuilder.build(ctx).then(() => undefined, (e: Error) => e.message)
    expect(failure).toContain('2025b')
    expect(failure).toContain(TZDATA_MIN)
    expect(failure).toContain('apt-get install tzdata')
  })
})
