/**
 * The CLI as a newcomer meets it, through the real `bun src/main.ts`: help everywhere (exit 0, nothing
 * started or extracted), strict flags and ALMANAC_* names with a did-you-mean (exit 2), and `data
 * verify` naming the files it checked by their real paths.
 */
import { describe, expect, test } from 'bun:test'
import { cpSync, mkdirSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { distance, nearest } from '../../src/lib/did-you-mean.ts'
import { knownEnvNames, RUNTIME_ENV, unknownEnv } from '../../src/config.ts'
import { tempDirs } from '../support/temp.ts'

const ROOT = resolve(import.meta.dir, '../..')
const tempDir = tempDirs('almanac-cli-')

/** The environment without any ALMANAC_* a developer may have exported, plus `extra`. */
const cleanEnv = (extra: Record<string, string> = {}) => ({
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ALMANAC_'))),
  ...extra,
})

async function cli(args: string[], extra: Record<string, string> = {}, timeoutMs = 20_000) {
  const proc = Bun.spawn(['bun', 'src/main.ts', ...args], {
    cwd: ROOT,
    env: cleanEnv(extra),
    stdout: 'pipe',
    stderr: 'pipe',
    timeout: timeoutMs,
  })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { stdout, stderr, code }
}

describe('help', () => {
  for (const args of [[], ['--help'], ['-h'], ['help'], ['help', '--help'], ['help', '-h'], ['help', 'help']]) {
    test(`almanac ${args.join(' ') || '(nothing)'} prints the usage and exits 0`, async () => {
      const { stdout, code } = await cli(args)
      expect(code).toBe(0)
      expect(stdout).toContain('usage: almanac <command>')
      for (const command of ['serve', 'start', 'data', 'keys', 'version']) expect(stdout).toContain(`  ${command} `)
    })
  }

  // A server that started would keep the process alive past the spawn timeout (killed: exit code not 0).
  for (const [args, expected] of [
    [['serve', '--help'], 'usage: almanac serve'],
    [['serve', '-h', '--port', '0'], 'usage: almanac serve'],
    [['start', '--help'], 'usage: almanac start'],
    [['help', 'serve'], 'usage: almanac serve'],
    [['data', '--help'], 'almanac data fetch --to DIR'],
    [['data', 'build', '--help'], 'almanac data build'],
    [['data', 'extract', '--help'], 'almanac data extract'],
    [['keys', '--help'], 'almanac keys create'],
    [['keys', 'create', '--help'], 'almanac keys create'],
    [['version', '--help'], 'usage: almanac version'],
  ] as [string[], string][]) {
    test(`almanac ${args.join(' ')} prints usage, runs nothing, exits 0`, async () => {
      const { stdout, stderr, code } = await cli(args, {}, 10_000)
      expect(code).toBe(0)
      expect(stdout).toContain(expected)
      expect(stderr).not.toContain('listening')
      expect(stderr).not.toContain('building')
    })
  }
})

describe('unknown flags, commands and settings are errors with a did-you-mean', () => {
  test('--prot 9000 does not serve on 8080', async () => {
    const { stderr, code } = await cli(['serve', '--prot', '9000'])
    expect(code).toBe(2)
    expect(stderr).toContain('unknown option --prot (did you mean --port?)')
    expect(stderr).not.toContain('listening')
  })

  test('a flag of another command, a misspelt command and subcommand', async () => {
    expect(await cli(['version', '--jsn'])).toMatchObject({ code: 2, stderr: expect.stringContaining('did you mean --json?') })
    expect(await cli(['servee'])).toMatchObject({ code: 2, stderr: expect.stringContaining('did you mean serve?') })
    expect(await cli(['data', 'biuld'])).toMatchObject({ code: 2, stderr: expect.stringContaining('did you mean build?') })
    // Issue 45: a subcommand and a command one letter short, and help on a misspelt command.
    expect(await cli(['keys', 'rotat'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('unknown keys command "rotat" (did you mean rotate?)'),
    })
    expect(await cli(['key'])).toMatchObject({ code: 2, stderr: expect.stringContaining('unknown command "key" (did you mean keys?)') })
    expect(await cli(['state', 'backp'])).toMatchObject({ code: 2, stderr: expect.stringContaining('(did you mean backup?)') })
    expect(await cli(['help', 'kyes'])).toMatchObject({ code: 2, stderr: 'almanac: no command "kyes" (did you mean keys?)\n' })
    expect(await cli(['data', 'fetch'])).toMatchObject({ code: 2, stderr: expect.stringContaining('needs --to DIR') })
    expect(await cli(['serve', '--port'])).toMatchObject({ code: 2, stderr: expect.stringContaining('--port') })
  })

  test('an unknown ALMANAC_* variable stops serve and keys, naming the nearest setting', async () => {
    const served = await cli(['serve', '--port', '0'], { ALMANAC_PROT: '9000' })
    expect(served.code).toBe(2)
    expect(served.stderr).toContain('unknown environment variable ALMANAC_PROT (did you mean ALMANAC_PORT?)')
    const keys = await cli(['keys', 'list'], { ALMANAC_STATE_DIRR: tempDir() })
    expect(keys.code).toBe(2)
    expect(keys.stderr).toContain('ALMANAC_STATE_DIRR (did you mean ALMANAC_STATE_DIR?)')
  })

  test('the known names are the settings plus the run-time list; other prefixes are not ours', () => {
    const known = knownEnvNames()
    for (const name of ['ALMANAC_PORT', 'ALMANAC_QUOTA_STORE', 'ALMANAC_IP_TOR_LISTS', 'ALMANAC_CORS_ORIGINS', ...RUNTIME_ENV])
      expect(known.has(name)).toBe(true)
    expect(known.has('PORT')).toBe(false)
    expect(
      unknownEnv({
        ALMANAC_MIRROR: '/m',
        ALMANAC_WORKER_INDEX: '1',
        S3_BUCKET: 'x',
        PORT: '1',
        ALMANAC_HOTS: 'x',
        ALMANAC_ZZZZZZZZZZZZZZZZ: '1',
      }),
    ).toEqual([
      { name: 'ALMANAC_HOTS', nearest: 'ALMANAC_HOST' },
      { name: 'ALMANAC_ZZZZZZZZZZZZZZZZ', nearest: undefined },
    ])
  })

  test('did-you-mean is an edit distance with a cut-off', () => {
    expect(distance('prot', 'port')).toBe(2)
    expect(distance('kitten', 'sitting')).toBe(3)
    expect(nearest('--prot', ['--port', '--host'])).toBe('--port')
    expect(nearest('--completely-else', ['--port', '--host'])).toBeUndefined()
  })
})

test('data verify names each artifact by its real path', async () => {
  const dir = tempDir()
  const out = join(dir, 'out')
  mkdirSync(out)
  const manifest = {
    generated: '',
    datasets: {
      sample: {
        id: 'sample',
        artifacts: [
          { name: 'a.bin', bytes: 1, sha256: '0'.repeat(64) },
          { name: 'b.bin', bytes: 1, sha256: '0'.repeat(64) },
        ],
      },
    },
  }
  writeFileSync(join(out, 'manifest.json'), JSON.stringify(manifest))
  writeFileSync(join(out, 'a.bin'), 'x')
  // Given as a relative path: reported absolute.
  cpSync(out, join(dir, 'copy'), { recursive: true })
  const proc = Bun.spawn(['bun', join(ROOT, 'src/main.ts'), 'data', 'verify', '--data-dir', 'copy'], {
    cwd: dir,
    env: cleanEnv(),
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited])
  expect(code).toBe(1)
  expect(stderr).toContain(`sample: ${join(dir, 'copy', 'a.bin')} does not match its sha256 in manifest.json`)
  expect(stderr).toContain(`sample: ${join(dir, 'copy', 'b.bin')} is missing`)
  expect(stderr).toContain(`${join(dir, 'copy')}: 2 problem(s)`)
})
