/** NOTICE.md is generated from the domains' sources (each domain's sources.ts) and must be regenerated when one changes. */
import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { sources } from '../../datasets/sources.ts'
import { NOTICE_PATH, renderNotice } from '../../scripts/notice.ts'

test('NOTICE.md is up to date with the domains\' sources (regenerate with `bun run notice`)', () => {
  expect(readFileSync(NOTICE_PATH, 'utf8')).toBe(renderNotice())
})

test('NOTICE.md carries every source with its licence and attribution line', () => {
  const notice = renderNotice()
  for (const s of sources) {
    expect(notice).toContain(`### ${s.id} — ${s.version} (${s.date})`)
    expect(notice).toContain(`- Licence: ${s.license}`)
    expect(notice).toContain(`- Attribution: ${s.attribution}`)
  }
})
