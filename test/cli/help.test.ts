/**
 * The executable ships without the README (issue 25): no help text points at README.md as a file beside
 * it; the top-level and serve help point at the running server's /docs, and name the project's repository
 * (package.json has no repository URL and the checkout no remote, so no host is named).
 */
import { expect, test } from 'bun:test'
import { resolve } from 'node:path'

const ROOT = resolve(import.meta.dir, '../..')
const help = (...args: string[]) => {
  const run = Bun.spawnSync({ cmd: [process.execPath, 'src/main.ts', ...args], cwd: ROOT, env: { PATH: process.env.PATH ?? '' } })
  expect(run.exitCode).toBe(0)
  return run.stdout.toString()
}

test('no command help sends the reader to a README.md that is not there; the server help points at /docs', () => {
  const texts = {
    main: help('--help'),
    serve: help('serve', '--help'),
    start: help('start', '--help'),
    data: help('data', '--help'),
    keys: help('keys', '--help'),
    version: help('version', '--help'),
  }
  for (const [name, text] of Object.entries(texts)) {
    expect({ name, empty: text.trim() === '' }).toEqual({ name, empty: false })
    expect({ name, readme: /README\.md/.test(text) }).toEqual({ name, readme: false })
  }
  for (const text of [texts.main, texts.serve]) {
    expect(text).toContain('/docs')
    expect(text.replace(/\s+/g, ' ')).toContain("the project's repository")
  }
})
