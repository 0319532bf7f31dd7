/** Every domain is described in one place (its folder's index.ts); what the descriptor names must exist. */
import { expect, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { domains } from '../../src/domains/index.ts'

const ROOT = resolve(import.meta.dir, '../..')
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')

for (const domain of domains) {
  test(`${domain.name}: its docs page exists and the README links it`, () => {
    expect(domain.docs).toBeString()
    expect(existsSync(join(ROOT, domain.docs!))).toBe(true)
    expect(readme).toContain(`(${domain.docs})`)
  })

  test(`${domain.name}: every source its builders read is one it declares`, () => {
    const declared = new Set((domain.sources ?? []).map((s) => s.id))
    const read = (domain.builders ?? []).flatMap((b) => b.sources)
    expect(read.filter((id) => !declared.has(id))).toEqual([])
  })
}

test('domain names and source ids are unique', () => {
  const names = domains.map((d) => d.name)
  const ids = domains.flatMap((d) => (d.sources ?? []).map((s) => s.id))
  expect(new Set(names).size).toBe(names.length)
  expect(new Set(ids).size).toBe(ids.length)
})
