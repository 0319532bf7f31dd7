/**
 * Vendored code stays vendored: every file under src/vendor/<package> that carries an `Almanac:` change is
 * listed in that package's PATCHES.md, and no vendored file imports anything outside its own folder (what
 * it needs from the project is passed in, e.g. node-device-detector's `collections` and `matchers`).
 */
import { expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

const VENDOR = resolve(import.meta.dir, '../../src/vendor')
const packages = readdirSync(VENDOR, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => join(VENDOR, e.name))

const codeFiles = (dir: string) => [...new Bun.Glob('**/*.{js,ts}').scanSync({ cwd: dir })].sort()

test('src/vendor holds node-device-detector, with its licence and its patch list', () => {
  expect(packages.map((p) => relative(VENDOR, p))).toContain('node-device-detector')
  for (const p of packages) {
    expect(existsSync(join(p, 'LICENSE'))).toBe(true)
    expect(existsSync(join(p, 'PATCHES.md'))).toBe(true)
  }
})

test('every file with an `Almanac:` change is listed in PATCHES.md', () => {
  for (const p of packages) {
    const patches = readFileSync(join(p, 'PATCHES.md'), 'utf8')
    const marked = codeFiles(p).filter((f) => readFileSync(join(p, f), 'utf8').includes('Almanac:'))
    expect(marked.length).toBeGreaterThan(0)
    // A file is listed by its path in backquotes, or by its name inside a listed `{a,b}` group.
    const listed = (f: string) =>
      patches.includes('`' + f + '`') || new RegExp('[{,]' + f.split('/').pop()!.replace(/\.js$/, '') + '[,}]').test(patches)
    expect(marked.filter((f) => !listed(f))).toEqual([])
  }
})

test('no vendored file imports anything outside its own folder', () => {
  const IMPORT = /(?:require\(\s*|from\s+|import\(\s*)['"]([^'"]+)['"]/g
  for (const p of packages) {
    const outside: string[] = []
    for (const f of codeFiles(p)) {
      for (const [, spec] of readFileSync(join(p, f), 'utf8').matchAll(IMPORT)) {
        if (!spec!.startsWith('.')) continue // node: builtins (the engine imports no packages)
        const target = resolve(dirname(join(p, f)), spec!)
        if (relative(p, target).startsWith('..')) outside.push(`${f} → ${spec}`)
      }
    }
    expect(outside).toEqual([])
  }
})
