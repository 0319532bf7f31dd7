/**
 * One request per domain whose answer is known from outside this project, sent to the compiled
 * executable. Each domain's descriptor names the module holding its own (`probes`, by convention
 * `test/domains/<name>/probes.ts`, exporting `probes`); a domain that names none, or names a module that is
 * missing or empty, fails here and in `test/domains/descriptors.test.ts`: never silently none. Answers are
 * asked for in Form B (`X-Response-Form: bare`).
 */
import { resolve } from 'node:path'
import { domains } from '../../src/domains/index.ts'
import type { Domain } from '../../src/domains/types.ts'

export interface Probe {
  method: 'GET' | 'POST'
  path: string
  body?: unknown
  /** Throws (via expect) when the answer is wrong. */
  check(body: any): void | Promise<void>
}

const ROOT = resolve(import.meta.dir, '../..')

/** The probes the domain's descriptor names; throws when it names none or the module has none. */
async function probesOf(domain: Domain): Promise<Probe[]> {
  if (!domain.probes) throw new Error(`the ${domain.name} domain's descriptor names no probes module (\`probes\` in its index.ts)`)
  const { probes } = (await import(resolve(ROOT, domain.probes))) as { probes?: Probe[] }
  if (!probes?.length) throw new Error(`${domain.probes} exports no probes for the ${domain.name} domain`)
  return probes
}

export const PROBES: Record<string, Probe[]> = Object.fromEntries(
  await Promise.all(domains.map(async (d) => [d.name, await probesOf(d)] as const)),
)
