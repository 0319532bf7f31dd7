/**
 * The typed client example (examples/client): its types are what openapi-typescript makes of today's
 * document, the example compiles against freshly generated types without casts, and it works against a
 * real server on loopback in both response forms.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { Reader } from 'mmdb-lib'
import createClient from 'openapi-fetch'
import { openDataDir } from '../../src/data/open.ts'
import { CITY_ARTIFACT } from '../../src/domains/ip/artifacts.ts'
import { domains } from '../../src/domains/index.ts'
import { almanac, cities, country, timezone, whyInvalid, type Almanac } from '../../examples/client/client.ts'
import type { paths } from '../../examples/client/almanac-api.ts'
import { clientTypes, DEFAULT_OUT } from '../../examples/client/generate.ts'
import { TEST_KEY } from '../support/app.ts'
import { tempDirs } from '../support/temp.ts'
import { liveServer, type LiveServer } from './helpers.ts'

const ROOT = resolve(import.meta.dir, '../..')
const tempDir = tempDirs('almanac-client-')

/** Formatting aside (a formatter may rewrap or requote the committed file): the same tokens. */
const tokens = (source: string) => source.replace(/["']/g, '"').replace(/[\s;,]+/g, '')

let fresh: string
beforeAll(async () => {
  fresh = await clientTypes()
}, 60_000)

describe('generated types', () => {
  test('the committed almanac-api.ts is what the document generates today', async () => {
    const committed = await Bun.file(DEFAULT_OUT).text()
    expect(
      tokens(committed) === tokens(fresh),
      'examples/client/almanac-api.ts is out of date: run `bun examples/client/generate.ts`',
    ).toBe(true)
    for (const path of ['/api/v1/timezones/{tz_name}', '/api/v1/countries/{code}', '/api/v1/ip/bulk']) expect(fresh).toContain(`"${path}"`)
    expect(fresh).not.toContain('/api/v1/timezones/*')
  })

  test('the example type-checks against freshly generated types (tsc, strict, no casts)', async () => {
    const dir = tempDir()
    writeFileSync(join(dir, 'almanac-api.ts'), fresh)
    copyFileSync(join(ROOT, 'examples/client/client.ts'), join(dir, 'client.ts'))
    const source = await Bun.file(join(dir, 'client.ts')).text()
    expect(source).not.toMatch(/\bas (unknown|any)\b|<any>|@ts-(ignore|expect-error)/)
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ESNext',
          module: 'Preserve',
          moduleResolution: 'bundler',
          lib: ['ESNext', 'DOM'],
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          allowImportingTsExtensions: true,
          typeRoots: [join(ROOT, 'node_modules/@types')],
          types: ['bun'],
          paths: { 'openapi-fetch': [join(ROOT, 'node_modules/openapi-fetch')] },
        },
        files: ['client.ts'],
      }),
    )
    const tsc = Bun.spawnSync([join(ROOT, 'node_modules/.bin/tsc'), '-p', join(dir, 'tsconfig.json')], { cwd: dir })
    expect(tsc.stdout.toString() + tsc.stderr.toString()).toBe('')
    expect(tsc.exitCode).toBe(0)
  }, 60_000)
})

describe('the example against a live server', () => {
  let server: LiveServer
  let client: Almanac
  beforeAll(async () => {
    server = await liveServer({ domains })
    client = almanac(server.url, TEST_KEY)
  })
  afterAll(() => server.stop())

  test('single resources, a slash in a path parameter, bulk items with errors, typed problems', async () => {
    const fr = await country(client, 'fra')
    expect('alpha2' in fr ? fr.alpha2 : fr.alpha_2).toBe('FR')
    expect((await timezone(client, 'America/Argentina/Buenos_Aires')).timezone).toBe('America/Argentina/Buenos_Aires')
    const found = await cities(client, ['81.2.69.142', 'not an address'])
    // The city as MaxMind's reference decoder reads it from the same built database.
    const expected = new Reader<any>(readFileSync(openDataDir().path(CITY_ARTIFACT))).get('81.2.69.142')?.city?.names?.en
    expect(expected).toBeString()
    expect(found[0]).toBe(expected)
    expect(found[1]).toContain('not an IPv4 or IPv6 address')
    expect(await whyInvalid(client, '999.1.1.1')).toEqual([expect.stringMatching(/^body ip: /)])
    expect(await whyInvalid(client, '8.8.8.8')).toEqual([])
    await expect(country(client, 'QQ')).rejects.toThrow(/^404 /)
  })

  test('the same calls in Form A', async () => {
    const enveloped = createClient<paths>({ baseUrl: server.url, headers: { 'X-API-Key': TEST_KEY, 'X-Response-Form': 'enveloped' } })
    const fr = await country(enveloped, 'FR')
    expect('alpha_2' in fr && fr.subdivisions.length).toBeGreaterThan(10)
    expect((await timezone(enveloped, 'Asia/Kolkata')).utc_offset).toBe('+05:30')
    expect((await cities(enveloped, ['nope']))[0]).toContain('nope')
    expect(await whyInvalid(enveloped, '::1::2')).toEqual([expect.stringMatching(/^body ip: /)])
  })
})
