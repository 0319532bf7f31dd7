/** NOTICE.md is generated from the domains' sources (each domain's sources.ts) and must be regenerated when one changes. */
import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { sources } from '../../datasets/sources.ts'
import { bundledPackages, NOTICE_PATH, renderNotice } from '../../scripts/notice.ts'

test("NOTICE.md is up to date with the domains' sources (regenerate with `bun run notice`)", async () => {
  expect(readFileSync(NOTICE_PATH, 'utf8')).toBe(await renderNotice())
})

test('NOTICE.md carries every source with its licence and attribution line', async () => {
  const notice = await renderNotice()
  for (const s of sources) {
    expect(notice).toContain(`### ${s.id} — ${s.version} (${s.date})`)
    expect(notice).toContain(`- Licence: ${s.license}`)
    expect(notice).toContain(`- Attribution: ${s.attribution}`)
  }
})

test('NOTICE.md lists every package the bundler puts into the executable, with its licence text', async () => {
  const notice = readFileSync(NOTICE_PATH, 'utf8')
  const packages = await bundledPackages()
  // Elysia's own dependencies come along although package.json does not name them.
  expect(packages.map((p) => p.name)).toContain('memoirist')
  for (const p of packages) {
    expect(notice).toContain(`- npm \`${p.name}\` ${p.version}: ${p.license}`)
    expect(p.texts.length + (p.license === 'see the package' ? 0 : 1)).toBeGreaterThan(0)
    for (const t of p.texts) expect(notice).toContain(t.text)
  }
  // Swagger UI's own NOTICE and the licence headers of the bundle the docs page serves.
  expect(notice).toContain('Copyright 2020-2021 SmartBear Software Inc.')
  expect(notice).toContain('`swagger-ui-bundle.js.LICENSE.txt`')
})

test("no dependency runs an install script: package.json trusts none (Bun would otherwise run @scarf/scarf's analytics)", () => {
  const pkg = JSON.parse(readFileSync(`${import.meta.dir}/../../package.json`, 'utf8'))
  expect(pkg.trustedDependencies).toEqual([])
  const untrusted = Bun.spawnSync(['bun', 'pm', 'untrusted'], { cwd: `${import.meta.dir}/../..` })
  expect(untrusted.stdout.toString()).toContain('@scarf/scarf')
})

test('mmdb-lib is only a test oracle and benchmark baseline: a devDependency, never bundled', async () => {
  const pkg = JSON.parse(readFileSync(`${import.meta.dir}/../../package.json`, 'utf8'))
  expect(pkg.dependencies['mmdb-lib']).toBeUndefined()
  expect(pkg.devDependencies['mmdb-lib']).toBeString()
  expect((await bundledPackages()).map((p) => p.name)).not.toContain('mmdb-lib')
})

test('node-device-detector is only a test oracle and benchmark baseline: a devDependency, never bundled', async () => {
  const pkg = JSON.parse(readFileSync(`${import.meta.dir}/../../package.json`, 'utf8'))
  expect(pkg.dependencies['node-device-detector']).toBeUndefined()
  expect(pkg.devDependencies['node-device-detector']).toBeString()
  expect((await bundledPackages()).map((p) => p.name)).not.toContain('node-device-detector')
})

test('code copied into the tree is credited with its licence (the vendored node-device-detector engine)', () => {
  const notice = readFileSync(NOTICE_PATH, 'utf8')
  expect(notice).toContain('### Vendored in `src/vendor/node-device-detector`')
  expect(notice).toContain('node-device-detector 2.2.7')
})
