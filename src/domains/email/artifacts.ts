/**
 * What the email lists build writes and the service reads, in one place both import (the service never
 * loads the build): the artifact's name and how a name is keyed in it (lookups normalize the same way).
 */
import { domainToASCII } from 'node:url'

export const LISTS_ARTIFACT = 'email-lists.tables'

/** A list entry -> lower-case A-label name, or null when it is not a domain name. */
export function normalizeListEntry(raw: string): string | null {
  let name = raw.trim().toLowerCase()
  if (!name || name.startsWith('#')) return null
  if (name.endsWith('.')) name = name.slice(0, -1)
  if (/[^\x00-\x7f]/.test(name)) name = domainToASCII(name)
  if (!name || name.length > 253 || !name.includes('.')) return null
  for (const label of name.split('.')) {
    if (!label.length || label.length > 63 || label.startsWith('-') || label.endsWith('-')) return null
    // Underscores appear in real host names even though they are not LDH; they never match a valid mailbox domain.
    if (!/^[a-z0-9_-]+$/.test(label)) return null
  }
  return name
}
