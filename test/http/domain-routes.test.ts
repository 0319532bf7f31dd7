/**
 * Which domain owns a route pattern is found once per pattern (domain-routes.ts); what may change after
 * that, a domain disabled by the background integrity check, must still be seen on the next request.
 */
import { describe, expect, test } from 'bun:test'
import type { DataDir } from '../../src/data/types.ts'
import type { Domain, MountedDomain } from '../../src/domains/types.ts'
import { definitionsOf, disabledAfterStart } from '../../src/http/domain-routes.ts'

const domain = (name: string, prefixes: string[], date?: string) =>
  ({ name, prefixes, datasets: [name], definitionsUpdated: date ? () => date : undefined }) as unknown as Domain

describe('route owners, found once per pattern', () => {
  test('a domain disabled after its routes answered once is a 503 on the same route the next time', () => {
    const fruit: MountedDomain = { domain: domain('fruit', ['/fruit']) }
    const veg: MountedDomain = { domain: domain('veg', ['/veg']) }
    const check = disabledAfterStart([fruit, veg])
    expect(() => check('/api/v1/fruit/:id')).not.toThrow()
    expect(() => check('/api/v1/fruitcake')).not.toThrow()
    fruit.problem = 'The fruit domain is disabled: fruit.json changed on disk'
    expect(() => check('/api/v1/fruit/:id')).toThrow('fruit.json changed on disk')
    expect(() => check('/api/v1/fruit')).toThrow('fruit.json changed on disk')
    // Neither a look-alike prefix nor another domain's route.
    expect(() => check('/api/v1/fruitcake')).not.toThrow()
    expect(() => check('/api/v1/veg/:id')).not.toThrow()
  })

  test('definitions dates by route pattern equal the scan by path, asked twice', () => {
    const mounted: MountedDomain[] = [{ domain: domain('fruit', ['/fruit'], '2026-01-02') }, { domain: domain('veg', ['/veg']) }]
    const definitions = definitionsOf({} as DataDir, mounted)
    for (const route of ['/api/v1/fruit', '/api/v1/fruit/:id', '/api/v1/fruitcake', '/api/v1/veg/:id', '/healthz'])
      for (let i = 0; i < 2; i++) expect(definitions.ofRoute(route)).toEqual(definitions(route))
    expect(definitions.ofRoute('/api/v1/fruit/:id')).toBe('2026-01-02')
    expect(definitions.ofRoute('/api/v1/fruitcake')).toBeUndefined()
  })
})
