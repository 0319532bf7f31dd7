/**
 * Every domain is described in one place (its folder's index.ts), and the central lists are derived from
 * those descriptors (OpenAPI tags, staleness, probes): so each registered domain must declare its tag with
 * a real description, its docs page and its probes, and may only answer paths under its own prefixes.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { Elysia } from 'elysia'
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { openDataDir } from '../../src/data/open.ts'
import { domains } from '../../src/domains/index.ts'
import { openDomains } from '../../src/domains/mount.ts'
import type { MountedDomain } from '../../src/domains/types.ts'
import { declaredRoutes } from '../../src/http/routing/elysia-routes.ts'
import { API_PREFIX } from '../../src/http/edge/paths.ts'
import { compileRouteTable } from '../../src/http/routing/route-table.ts'
import { createLogger } from '../../src/lib/logger.ts'
import { testConfig } from '../support/app.ts'

const ROOT = resolve(import.meta.dir, '../..')
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
const config = testConfig()
const data = openDataDir(config.dataDir)

let mounted: MountedDomain[]
beforeAll(async () => {
  mounted = await openDomains(config, data, domains, () => {})
})
afterAll(async () => {
  for (const m of mounted) if (m.service !== undefined) await m.domain.close?.(m.service)
})

/** A route path (relative to /api/v1) is a domain's when it is one of its prefixes or under one. */
const under = (path: string, prefixes: string[]) => prefixes.some((p) => path === p || path.startsWith(`${p}/`))

for (const domain of domains) {
  test(`${domain.name}: its docs page exists and the README links it`, () => {
    expect(domain.docs).toBeString()
    expect(existsSync(join(ROOT, domain.docs!))).toBe(true)
    expect(readme).toContain(`(${domain.docs})`)
  })

  test(`${domain.name}: its OpenAPI tag is its name, with a description of its own`, () => {
    expect(domain.tag?.name).toBe(domain.name)
    const description = domain.tag!.description
    // One or two sentences saying what the domain answers, not the placeholder the document once fell back to.
    expect(description).not.toMatch(/^The .* domain\.$/)
    expect(description.length).toBeGreaterThan(40)
    expect(description.length).toBeLessThan(300)
  })

  test(`${domain.name}: its descriptor names its probes, and there are some`, async () => {
    expect(domain.probes).toBe(`test/domains/${domain.name}/probes.ts`)
    // Imported here rather than through test/build/probes.ts, whose table refuses to load without them all.
    const { probes } = await import(join(ROOT, domain.probes!))
    expect(probes.length).toBeGreaterThan(0)
  })

  test(`${domain.name}: every source its builders read is one it declares`, () => {
    const declared = new Set((domain.sources ?? []).map((s) => s.id))
    const read = (domain.builders ?? []).flatMap((b) => b.sources)
    expect(read.filter((id) => !declared.has(id))).toEqual([])
  })

  test(`${domain.name}: it builds only datasets it declares, and their staleness is a number of days`, () => {
    for (const builder of domain.builders ?? []) {
      expect(domain.datasets).toContain(builder.id)
      if (builder.staleAfterDays !== undefined) expect(Number.isInteger(builder.staleAfterDays) && builder.staleAfterDays > 0).toBe(true)
    }
  })

  test(`${domain.name}: its routes are under its prefixes, and the route table gives each its tag`, () => {
    const m = mounted.find((x) => x.domain === domain)!
    expect(m.problem).toBeUndefined()
    const plugin = domain.routes({ service: m.service, config, data, log: createLogger() })
    const routes = declaredRoutes(plugin)
    expect(routes.length).toBeGreaterThan(0)
    expect(routes.map((r) => r.path).filter((path) => !under(path, domain.prefixes))).toEqual([])
    // The tag is the descriptor's alone: no route names one of its own.
    expect(plugin.routes.filter((r) => (r.hooks as { detail?: { tags?: unknown } })?.detail?.tags !== undefined)).toEqual([])
    const table = compileRouteTable(declaredRoutes(new Elysia({ prefix: API_PREFIX }).use(plugin)), {
      mounted,
      data,
      bodyLimit: config.bodyLimit,
    })
    expect([...new Set(table.entries.map((e) => e.tag))]).toEqual([domain.tag!.name])
  })
}

test('domain names, prefixes and source ids are unique', () => {
  const names = domains.map((d) => d.name)
  const prefixes = domains.flatMap((d) => d.prefixes)
  const ids = domains.flatMap((d) => (d.sources ?? []).map((s) => s.id))
  expect(new Set(names).size).toBe(names.length)
  expect(new Set(prefixes).size).toBe(prefixes.length)
  expect(new Set(ids).size).toBe(ids.length)
})
