/**
 * Elysia decides what a hook's context carries by reading the hook's source text, and the executable is
 * minified: once that turned every route of the binary into a 500. This runs the shared layers from a
 * minified bundle (as build/compile.ts minifies, but without compiling: seconds, not a minute) and from
 * source, and requires the same answers.
 */
import { expect, test } from 'bun:test'
import { join } from 'node:path'
import { MINIFY } from '../../build/compile.ts'
import { tempDirs } from '../support/temp.ts'

const tempDir = tempDirs('almanac-minified-')
const FIXTURE = join(import.meta.dir, 'fixtures/shared-layers.ts')

const run = (file: string) => {
  const child = Bun.spawnSync(['bun', file], { cwd: join(import.meta.dir, '../..') })
  if (child.exitCode !== 0) throw new Error(`bun ${file} failed: ${child.stderr.toString()}`)
  return JSON.parse(child.stdout.toString())
}

test('the shared layers answer the same from a minified bundle as from source', async () => {
  const outdir = tempDir()
  const built = await Bun.build({ entrypoints: [FIXTURE], outdir, target: 'bun', minify: MINIFY, throw: false })
  expect(built.logs.map(String)).toEqual([])
  const fromSource = run(FIXTURE)
  const minified = run(join(outdir, 'shared-layers.js'))
  expect(minified).toEqual(fromSource)
  // And the answers are the right ones, not merely the same.
  expect(fromSource.map((r: { status: number }) => r.status)).toEqual([200, 200, 200, 200, 422, 401, 404, 405, 200, 400])
  expect(fromSource[1].body).toEqual({ name: 'earth', order: 3, orbit: { days: 365, moons: 1 } })
  expect(fromSource[2].body).toEqual({ orbit: { moons: 1 } })
  // 50 credits: six spent before (the 401 and the 405 spend nothing), two by the bulk of two.
  expect(fromSource[8].headers['x-quota-remaining']).toBe('42')
  // The caller's request id is echoed and named in problems (the 404 is the seventh request).
  expect(fromSource.map((r: { headers: Record<string, string> }) => r.headers['x-request-id'])).toEqual(
    fromSource.map((_: unknown, i: number) => `fixture-${i}`),
  )
  expect(fromSource[6].body.error.request_id).toBe('fixture-6')
}, 60_000)
