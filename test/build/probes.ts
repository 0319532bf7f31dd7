/**
 * One request per domain whose answer is known from outside this project, sent to the compiled
 * executable. Each domain keeps its own in `test/domains/<name>/probes.ts` (exporting `probes`); a landed
 * domain (one that mounts routes) must have at least one. Answers are asked for in Form B
 * (`X-Response-Form: bare`).
 */
import { domains } from '../../src/domains/index.ts'

export interface Probe {
  method: 'GET' | 'POST'
  path: string
  body?: unknown
  /** Throws (via expect) when the answer is wrong. */
  check(body: any): void | Promise<void>
}

async function probesOf(domain: string): Promise<Probe[]> {
  const file = `${import.meta.dir}/../domains/${domain}/probes.ts`
  if (!(await Bun.file(file).exists())) return []
  return ((await import(file)) as { probes: Probe[] }).probes
}

export const PROBES: Record<string, Probe[]> = Object.fromEntries(
  await Promise.all(domains.map(async (d) => [d.name, await probesOf(d.name)] as const)),
)
