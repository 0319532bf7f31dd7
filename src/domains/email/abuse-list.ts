/**
 * The abuse list as the builder makes it from The Block List Project's phishing and scam lists (at the
 * pinned commit of `sources.ts`): one sorted, de-duplicated, lower-case name a line, comments dropped. The
 * mirror's `email/abuse-domains-blocklistproject-*.txt` is this merge made by the mirror, and the tests
 * check the two agree byte for byte.
 */
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'

/** Lists (one name a line after `#` comment lines) -> their union, sorted by code point, one name a line. */
export function mergeBlocklists(texts: string[]): string {
  const names = new Set<string>()
  for (const text of texts)
    for (const line of text.split('\n')) {
      const name = line.trim().toLowerCase()
      if (name && !name.startsWith('#')) names.add(name)
    }
  return [...names]
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .map((n) => `${n}\n`)
    .join('')
}

/**
 * The lists in a folder: the upstream files as published, or the mirror's gzipped copies of them. Each
 * must be one of the pinned files (by the sha256 of its content) and every pinned file must be there.
 */
export function readBlocklists(dir: string, pins: string[]): string[] {
  const found = new Map<string, string>()
  for (const file of readdirSync(dir).sort()) {
    const raw = readFileSync(join(dir, file))
    const bytes = file.endsWith('.gz') ? gunzipSync(raw) : raw
    const sha = createHash('sha256').update(bytes).digest('hex')
    if (!pins.includes(sha)) throw new Error(`${join(dir, file)}: sha256 ${sha} (of its content) is none of the pinned lists`)
    found.set(sha, bytes.toString('utf8'))
  }
  const absent = pins.filter((p) => !found.has(p))
  if (absent.length) throw new Error(`${dir}: the pinned list with sha256 ${absent.join(', ')} is missing`)
  return pins.map((p) => found.get(p)!)
}
