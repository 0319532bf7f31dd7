/**
 * "Did you mean": the nearest known name to a mistyped one, for the CLI's unknown flags and settings and the
 * API's unknown body members and query parameters (one rule for both, so a typo reads the same everywhere).
 */

/** Edit distance, for "did you mean"; names are short (< 64 characters), so the quadratic table is tiny. */
export function distance(a: string, b: string): number {
  if (a.length > 64 || b.length > 64) return Math.abs(a.length - b.length) + 64
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    prev = row
  }
  return prev[b.length]!
}

/** The closest candidate within a few edits, or undefined. */
export function nearest(name: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined
  let bestDistance = Infinity
  for (const c of candidates) {
    const d = distance(name.toLowerCase(), c.toLowerCase())
    if (d < bestDistance) [best, bestDistance] = [c, d]
  }
  return bestDistance <= Math.max(2, Math.floor(name.length / 3)) ? best : undefined
}

export const didYouMean = (name: string, candidates: Iterable<string>) => {
  const n = nearest(name, candidates)
  return n ? ` (did you mean ${n}?)` : ''
}

/**
 * Why a name that is not one of `known` is refused (an API body member, a query parameter): the nearest
 * known name when one is close, else the names there are. The last dotted segment of `field` is the name.
 */
export function unknownName(field: string, known: readonly string[], what: 'member' | 'query parameter' = 'member'): string {
  if (!known.length)
    return `unknown ${what}: ${what === 'member' ? 'this object takes no members' : 'this route takes no query parameters'}`
  const near = nearest(field.slice(field.lastIndexOf('.') + 1), known)
  return near ? `unknown ${what} (did you mean ${near}?)` : `unknown ${what}; known: ${known.join(', ')}`
}
