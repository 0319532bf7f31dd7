/**
 * Readiness and the meta route over a data directory built by the test's own builder: a domain whose
 * dataset is absent is disabled with a startup line and answers 503 naming the dataset; /readyz is 200
 * only when every domain is open; /api/v1/meta/datasets shows versions, licences and credit lines.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Elysia } from 'elysia'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../src/config.ts'
import { buildDatasets } from '../../src/data/build.ts'
import { openDataDir } from '../../src/data/open.ts'
import type { DatasetBuilder, Source } from '../../src/data/types.ts'
import { defineDomain } from '../../src/domains/types.ts'
import { openDomains } from '../../src/domains/mount.ts'
import { one } from '../../src/http/reply/reply.ts'
import pkg from '../../package.json' with { type: 'json' }
import { testApp, type TestApp } from '../support/app.ts'

const tmp = mkdtempSync(join(tmpdir(), 'almanac-ready-'))
const out = join(tmp, 'out')

const source: Source = {
  id: 'fruit-list',
  version: '3.1',
  date: '2026-03-04',
  mirror: 'fruit.txt',
  license: 'ODbL-1.0',
  attribution: '© Fruit contributors, available under the ODbL',
  duties: 'Share-alike for derived databases.',
}

const fruitBuilder: DatasetBuilder = {
  id: 'fruit',
  sources: ['fruit-list'],
  artifacts: ['fruit.json'],
  revision: 1,
  async build(ctx) {
    const names = readFileSync((await ctx.source('fruit-list')).path, 'utf8')
      .split('\n')
      .filter(Boolean)
    writeFileSync(ctx.out('fruit.json'), JSON.stringify(names))
    return { counts: { fruit: names.length } }
  },
}

/** Serves the built artifact; `datasets` names what it needs. */
const fruitDomain = (name: string, datasets: string[]) =>
  defineDomain({
    name,
    prefixes: [`/${name}`],
    datasets,
    builders: [fruitBuilder],
    open: ({ data }) => JSON.parse(readFileSync(data.path('fruit.json'), 'utf8')) as string[],
    routes: ({ service }) => new Elysia({ prefix: `/${name}` }).get('/first', () => one({ name: (service as string[])[0] })),
  })

const fresh = fruitDomain('fruit', ['fruit'])
const absent = fruitDomain('veg', ['vegetables'])
const broken = defineDomain({
  name: 'broken',
  prefixes: ['/broken'],
  datasets: ['fruit'],
  open: () => {
    throw new Error('fruit.json has no header row')
  },
  routes: () => new Elysia(),
})

let app: TestApp
beforeAll(async () => {
  mkdirSync(join(tmp, 'mirror'), { recursive: true })
  writeFileSync(join(tmp, 'mirror/fruit.txt'), 'fig\npear\n')
  await buildDatasets([fresh], { outDir: out, mirror: join(tmp, 'mirror'), sources: () => source, log: () => {}, offline: true })
  app = await testApp({ env: { ALMANAC_DATA_DIR: out }, domains: [fresh, absent, broken] })
})
afterAll(async () => {
  await app?.close()
  rmSync(tmp, { recursive: true, force: true })
})

describe('readiness', () => {
  test('a domain whose dataset is absent is disabled with a startup line naming it', async () => {
    const lines: string[] = []
    const config = loadConfig({ env: {} })
    const mounted = await openDomains(config, openDataDir(out), [fresh, absent, broken], (l) => lines.push(l))
    expect(mounted.map((m) => [m.domain.name, !m.problem])).toEqual([
      ['fruit', true],
      ['veg', false],
      ['broken', false],
    ])
    // Logged as errors (a domain that cannot answer is a failure, not news), each line stamped with its time.
    const logged = lines.map((l) => JSON.parse(l))
    expect(logged.every((l) => !Number.isNaN(Date.parse(l.time)))).toBe(true)
    expect(logged.map(({ time, ...rest }) => rest)).toEqual([
      {
        level: 'error',
        domain: 'veg',
        msg: 'The veg domain is disabled: dataset vegetables is not built (run `almanac data build --only veg`).',
      },
      { level: 'error', domain: 'broken', msg: 'The broken domain is disabled: fruit.json has no header row' },
    ])
  })

  test('/readyz is 503 while any domain is disabled, and lists each problem', async () => {
    const { status, body } = await app.json('GET', '/readyz', { key: null })
    expect(status).toBe(503)
    expect(body.status).toBe('not_ready')
    expect(body.domains).toEqual([
      { domain: 'fruit', ready: true },
      { domain: 'veg', ready: false },
      { domain: 'broken', ready: false },
    ])
    expect(body.problems.map((p: { domain: string }) => p.domain)).toEqual(['veg', 'broken'])
  })

  test('/readyz is 200 when every domain is open', async () => {
    const ready = await testApp({ env: { ALMANAC_DATA_DIR: out }, domains: [fresh] })
    try {
      const { status, body } = await ready.json('GET', '/readyz', { key: null })
      expect(status).toBe(200)
      expect(body).toEqual({
        status: 'ready',
        domains: [{ domain: 'fruit', ready: true }],
        datasets: [{ dataset: 'fruit', age_days: expect.any(Number), stale: false, stale_after_days: null }],
      })
    } finally {
      await ready.close()
    }
  })

  test('the open domain answers from its dataset; the disabled one answers 503 naming the missing dataset', async () => {
    expect((await app.json('GET', '/api/v1/fruit/first', { form: 'bare' })).body).toEqual({ name: 'fig' })
    const { status, body, headers } = await app.json('GET', '/api/v1/veg/first', { form: 'bare' })
    expect(status).toBe(503)
    expect(headers.get('content-type')).toContain('json')
    expect(body.status).toBe(503)
    expect(body.detail).toContain('dataset vegetables is not built')
    expect(body.datasets).toEqual(['vegetables'])
  })

  test('the disabled domain still asks for credentials first', async () => {
    expect((await app.json('GET', '/api/v1/veg/first', { key: null })).status).toBe(401)
  })
})

describe('GET /api/v1/meta/datasets', () => {
  test('lists each dataset with version, dates, counts, licence and the credit line (Form B)', async () => {
    const { status, body } = await app.json('GET', '/api/v1/meta/datasets', { form: 'bare' })
    expect(status).toBe(200)
    expect(body.app_version).toBe(pkg.version)
    expect(body.count).toBe(2)
    const [fruit, veg] = body.results
    expect(fruit).toMatchObject({
      id: 'fruit',
      domain: 'fruit',
      status: 'open',
      version: '3.1',
      date: '2026-03-04',
      license: 'ODbL-1.0',
      attribution: ['© Fruit contributors, available under the ODbL'],
      counts: { fruit: 2 },
      sources: [
        {
          id: 'fruit-list',
          version: '3.1',
          date: '2026-03-04',
          license: 'ODbL-1.0',
          attribution: '© Fruit contributors, available under the ODbL',
          duties: 'Share-alike for derived databases.',
        },
      ],
    })
    expect(fruit.built).toBe(JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')).datasets.fruit.built)
    expect(veg).toMatchObject({ id: 'vegetables', domain: 'veg', status: 'missing', version: null, license: null, attribution: [] })
    expect(veg.problem).toContain('dataset vegetables is not built')
  })

  test('Form A wraps the list; fields trims each item', async () => {
    const { status, body } = await app.json('GET', '/api/v1/meta/datasets?fields=id,status', { form: 'enveloped' })
    expect(status).toBe(200)
    expect(body).toEqual({
      status: 'ok',
      data: [
        { id: 'fruit', status: 'open' },
        { id: 'vegetables', status: 'missing' },
      ],
      error: null,
      total: 2,
      app_version: pkg.version,
    })
  })

  test('one dataset by id; an unknown id is a 404 naming the known ones', async () => {
    expect((await app.json('GET', '/api/v1/meta/datasets/fruit', { form: 'bare' })).body.version).toBe('3.1')
    const { status, body } = await app.json('GET', '/api/v1/meta/datasets/nuts', { form: 'bare' })
    expect(status).toBe(404)
    expect(body.detail).toContain('No dataset "nuts"; known: fruit, vegetables.')
  })

  test('needs credentials like every /api/v1 route', async () => {
    expect((await app.json('GET', '/api/v1/meta/datasets', { key: null })).status).toBe(401)
  })
})
