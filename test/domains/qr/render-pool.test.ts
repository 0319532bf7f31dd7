/**
 * The render worker inside a compiled executable: a minimal program (fixtures/compile-probe.ts) that uses
 * the pool as the server does, built as build/compile.ts builds (root = the repository, every *worker.ts
 * an extra entry point) and run from another directory, finds the worker module and gets the image the
 * loop would make (the same content-addressed name).
 */
import { expect, test } from 'bun:test'
import { join } from 'node:path'
import { makeImage } from '../../../src/domains/qr/image.ts'
import { runCompiledProbe } from '../../support/compile-probe.ts'
import { tempDirs } from '../../support/temp.ts'

const tempDir = tempDirs('almanac-qr-compile-')

test('the pool finds render-worker among the compiled entry points, and makes the loop’s image', async () => {
  const printed = await runCompiledProbe(join(import.meta.dir, 'fixtures/compile-probe.ts'), 'src/domains/qr/render-worker.ts', tempDir())
  const loop = makeImage('compiled '.repeat(200), 'text', {
    format: 'svg',
    size: 400,
    fg_color: '#000000',
    bg_color: '#FFFFFF',
    error_correction: 'M',
    margin: 4,
  })
  expect(JSON.parse(printed)).toEqual({ version: loop.version, name: loop.name, bytes: loop.bytes.length, made: 1 })
}, 60_000)
