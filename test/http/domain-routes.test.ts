/**
 * The route table (route-table.ts) works out each route's owner and definitions date once; what may change
 * after that, a domain disabled by the background integrity check, must still be seen on the next request.
 */
import { describe, expect, test } from 'bun:test'
import type { DataDir } from '../../src/data/types.ts'
import { disable, type Domain, type MountedDomain } from '../../src/domains/types.ts'
import { checkOpen } from '../../src/http/routing/domain-routes.ts'
import { compileRouteTable } from '../../src/http/routing/route-table.ts'

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
