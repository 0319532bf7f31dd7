/**
 * The route table (route-table.ts) works out each route's facts, owner and definitions date once, and each
 * request resolves against it once; what may change after that, a domain disabled by the background
 * integrity check, must still be seen on the next request. Pure: in the fast lane (test/unit.ts).
 */
import { describe, expect, test } from 'bun:test'
import type { DataDir } from '../../src/data/types.ts'
import { disable, type Domain, type MountedDomain } from '../../src/domains/types.ts'
import { t } from 'elysia'
import { checkOpen } from '../../src/http/routing/domain-routes.ts'
import { costOf, FACTS_KEY, routeDetail } from '../../src/http/routing/route-facts.ts'
import { compileRouteTable, DEFAULT_BODY_LIMIT } from '../../src/http/routing/route-table.ts'

const domain = (name: string, prefixes: string[], date?: string) =>
  ({ name, prefixes, datasets: [name], definitionsUpdated: date ? () => date : undefined }) as unknown as Domain

const data = { manifest: { datasets: {} } } as unknown as DataDir
const routes = ['/api/v1/fruit', '/api/v1/fruit/:id', '/api/v1/veg/:id', '/api/v1/meta/datasets'].map((path) => ({ method: 'GET', path }))

describe('route owners, found once per route', () => {
  test('a domain disabled after its routes answered once is a 503 on the same route the next time', () => {
    const fruit: MountedDomain = { state: 'open', service: null, domain: domain('fruit', ['/fruit']) }
    const veg: MountedDomain = { state: 'open', service: null, domain: domain('veg', ['/veg']) }
    const table = compileRouteTable(routes, { mounted: [fruit, veg], data, bodyLimit: 1 << 20 })
    const owner = (path: string) => table.resolve('GET', path).owner
    expect(() => checkOpen(owner('/api/v1/fruit/1'))).not.toThrow()
    disable(fruit, 'The fruit domain is disabled: fruit.json changed on disk')
    expect(() => checkOpen(owner('/api/v1/fruit/1'))).toThrow('fruit.json changed on disk')
    expect(() => checkOpen(owner('/api/v1/fruit'))).toThrow('fruit.json changed on disk')
    // A path of the domain that no route answers is still its (its 503 beats a 404).
    expect(() => checkOpen(owner('/api/v1/fruit/1/2/3'))).toThrow('fruit.json changed on disk')
    // Neither a look-alike prefix nor another domain's route.
    expect(owner('/api/v1/fruitcake')).toBeUndefined()
    expect(() => checkOpen(owner('/api/v1/veg/1'))).not.toThrow()
  })

  test('definitions dates follow the owner, for routes and for paths no route answers', () => {
    const mounted: MountedDomain[] = [
      { state: 'open', service: null, domain: domain('fruit', ['/fruit'], '2026-01-02') },
      { state: 'open', service: null, domain: domain('veg', ['/veg']) },
    ]
    const table = compileRouteTable(routes, { mounted, data, bodyLimit: 1 << 20 })
    for (let i = 0; i < 2; i++) {
      expect(table.resolve('GET', '/api/v1/fruit/7').definitionsUpdated).toBe('2026-01-02')
      expect(table.resolve('GET', '/api/v1/fruit/7').route?.definitionsUpdated).toBe('2026-01-02')
      expect(table.resolve('POST', '/api/v1/fruit/7').definitionsUpdated).toBe('2026-01-02')
      expect(table.resolve('GET', '/api/v1/fruit/7/x/y').definitionsUpdated).toBe('2026-01-02')
      expect(table.resolve('GET', '/api/v1/fruitcake').definitionsUpdated).toBeUndefined()
      expect(table.resolve('GET', '/api/v1/veg/1').definitionsUpdated).toBeUndefined()
      expect(table.resolve('GET', '/api/v1/meta/datasets').definitionsUpdated).toBeUndefined()
    }
  })

  test('a resolution names the route, the methods of its path and its metrics label', () => {
    const table = compileRouteTable([...routes, { method: 'POST', path: '/api/v1/fruit/' }], {
      mounted: [{ state: 'open', service: null, domain: domain('fruit', ['/fruit']) }],
      data,
      bodyLimit: 1 << 20,
    })
    const get = table.resolve('GET', '/api/v1/fruit/')
    expect([get.route?.pattern, get.route?.method, get.allow, get.label]).toEqual([
      '/api/v1/fruit',
      'GET',
      ['GET', 'POST'],
      '/api/v1/fruit',
    ])
    const put = table.resolve('PUT', '/api/v1/fruit')
    expect([put.route, put.allow, put.label]).toEqual([null, ['GET', 'POST'], '/api/v1/fruit'])
    const none = table.resolve('GET', '/nowhere')
    expect([none.route, none.allow, none.label, none.owner]).toEqual([null, [], '(unmatched)', undefined])
    // The same answer for the same method and path shape, asked again.
    expect(table.resolve('PUT', '/api/v1/fruit')).toBe(put)
  })
})

describe('route facts, declared beside the handler and compiled once', () => {
  const Planet = t.Object({ name: t.String(), moons: t.Integer() })
  const PlanetBare = t.Object({ planet: t.String() })
  const Failed = t.Object({ name: t.Unknown(), error: t.String() })

  test('routeDetail keeps the summary for the document and the facts for the table', () => {
    const detail = routeDetail({ summary: 'Planets', cost: { field: 'names', max: 5 }, bodyLimit: 64 * 1024, cache: 'reference' })
    expect(detail.summary).toBe('Planets')
    expect(detail[FACTS_KEY]).toEqual({ cost: { field: 'names', max: 5 }, bodyLimit: 64 * 1024, cache: 'reference' })
  })

  test("each entry's limits, cache rule and field names come from its facts, its owner and the app's ceiling", () => {
    const fruit: MountedDomain = { state: 'open', service: null, domain: domain('fruit', ['/fruit']) }
    const withData = {
      manifest: { datasets: { fruit: { artifacts: [{ name: 'fruit.json', sha256: 'ab'.repeat(32) }] } } },
    } as unknown as DataDir
    const table = compileRouteTable(
      [
        { method: 'GET', path: '/api/v1/fruit/', facts: { cache: 'reference', response: { enveloped: Planet, bare: PlanetBare } } },
        {
          method: 'POST',
          path: '/api/v1/fruit/bulk',
          body: t.Object({ names: t.Array(t.String()) }),
          facts: { bodyLimit: 1 << 30, cost: { field: 'names', max: 5 }, response: { enveloped: t.Union([Planet, Failed]) } },
        },
      ],
      { mounted: [fruit], data: withData, bodyLimit: 1 << 20 },
    )
    const [list, bulk] = table.entries
    expect(list!.cache?.control).toBe('private, max-age=3600')
    expect(list!.cache?.contentTag).toMatch(/^[0-9a-z]+$/)
    expect(list!.fields).toEqual({ enveloped: ['name', 'moons'], bare: ['planet'] })
    expect([list!.json, list!.bodyLimit]).toEqual([false, DEFAULT_BODY_LIMIT])
    // A declared limit over ALMANAC_BODY_LIMIT is cut to it; a union's members all count for `fields`.
    expect([bulk!.json, bulk!.bodyLimit, bulk!.cache]).toEqual([true, 1 << 20, undefined])
    expect(bulk!.fields).toEqual({ enveloped: ['name', 'moons', 'error'], bare: ['name', 'moons', 'error'] })
    expect([costOf(bulk!.facts.cost, { names: ['a', 'b', 'c'] }), costOf(bulk!.facts.cost, { names: new Array(6).fill('a') })]).toEqual([
      3, 1,
    ])
    expect(table.resolve('POST', '/api/v1/fruit/bulk').route).toBe(bulk!)
    expect(table.entry('GET', '/api/v1/fruit/')).toBe(list!)
  })

  test('a method no route uses is resolved, and not kept', () => {
    const table = compileRouteTable(routes, { mounted: [], data, bodyLimit: 1 << 20 })
    const odd = table.resolve('PROPFIND', '/api/v1/fruit/1')
    expect([odd.route, odd.allow]).toEqual([null, ['GET']])
    expect(table.resolve('PROPFIND', '/api/v1/fruit/1')).not.toBe(odd)
    expect(table.resolve('GET', '/api/v1/fruit/1')).toBe(table.resolve('GET', '/api/v1/fruit/2'))
  })
})
