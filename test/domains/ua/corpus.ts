/**
 * Real user agents from outside this project, for the oracle test and the benchmark: the test files of
 * Debian's uap-core (ua-parser's corpus; `apt-get install uap-core`) and the npm package user-agents
 * (real browser UAs weighted by traffic). Distinct, non-empty, at most 2,048 characters, in file order.
 */
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'

const UAP_CORE = '/usr/share/uap-core/tests'
const USER_AGENTS = resolve(import.meta.dir, '../../../node_modules/user-agents/dist/user-agents.json')

/** `user_agent_string: '…'` lines of uap-core's YAML (single-quoted, '' for a quote, or double-quoted). */
function uapCore(files = ['test_ua.yaml', 'test_os.yaml', 'test_device.yaml']): string[] {
  const out: string[] = []
  for (const file of files) {
    const path = `${UAP_CORE}/${file}`
    if (!existsSync(path)) throw new Error(`${path} is missing: install the Debian package uap-core`)
    for (const m of readFileSync(path, 'utf8').matchAll(/user_agent_string: *(['"])(.*)\1\s*$/gm))
      out.push(m[1] === "'" ? m[2]!.replace(/''/g, "'") : JSON.parse(`"${m[2]}"`))
  }
  return out
}

function userAgents(): string[] {
  return (JSON.parse(readFileSync(USER_AGENTS, 'utf8')) as { userAgent: string }[]).map((u) => u.userAgent)
}

/** What POST /ua accepts: not blank, at most 2,048 characters. */
const usable = (ua: string) => ua.trim() !== '' && ua.length <= 2048

/** uap-core's user-agent test file alone (what bench/peers.ts sends), distinct, in file order. */
export const uapCoreTestAgents = () => [...new Set(uapCore(['test_ua.yaml']))].filter(usable)

export function realUserAgents(): string[] {
  return [...new Set([...uapCore(), ...userAgents()])].filter(usable)
}

/** Every `step`-th entry: a spread sample that stays the same from run to run. */
export const every = <T>(items: T[], step: number) => items.filter((_, i) => i % step === 0)

/**
 * The Matomo fixture sample of the acceptance data, read in place (never copied): ALMANAC_ACCEPTANCE_DATA,
 * or `shared/acceptance-data` beside the checkout or beside any folder above it (a git worktree sits deeper).
 */
export const FIXTURES = (() => {
  if (process.env.ALMANAC_ACCEPTANCE_DATA) return resolve(process.env.ALMANAC_ACCEPTANCE_DATA, 'ua-fixtures.json')
  const checkout = resolve(import.meta.dir, '../../..')
  for (let dir = resolve(checkout, '..'); ; dir = dirname(dir)) {
    const path = join(dir, 'shared/acceptance-data/ua-fixtures.json')
    if (existsSync(path) || dir === dirname(dir)) return path
  }
})()
