/**
 * One formatter and linter for the tree (biome.json: 140 columns, single quotes, no semicolons; the
 * recommended rules, unused imports and variables as errors). `bun run format` rewrites, `bun run lint`
 * is this check. The vendored node-device-detector engine (src/vendor/node-device-detector) keeps its upstream form.
 */
import { expect, test } from 'bun:test'
import { resolve } from 'node:path'

test('the tree is formatted and lint-clean (bun run format fixes the formatting)', () => {
  const run = Bun.spawnSync([resolve(import.meta.dir, '../node_modules/.bin/biome'), 'check', '.'], { cwd: resolve(import.meta.dir, '..') })
  expect({ exit: run.exitCode, output: run.exitCode ? `${run.stdout}${run.stderr}`.slice(0, 4000) : '' }).toEqual({ exit: 0, output: '' })
})
