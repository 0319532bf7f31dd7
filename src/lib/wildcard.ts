/**
 * Glob-style matching where `*` stands for any run of characters (none included) and everything else is
 * literal. Written out rather than compiled to a RegExp: `^a.*.*.*…Z$` backtracks exponentially in the
 * number of stars (30 stars took 11 s), this greedy two-pointer walk takes at most text × pattern steps.
 */
export function wildcardMatch(pattern: string, text: string, star = '*'): boolean {
  let p = 0
  let t = 0
  // Where the last star was, and how much of the text it has swallowed so far.
  let starAt = -1
  let resumeAt = 0
  while (t < text.length) {
    if (p < pattern.length && pattern[p] === star) {
      starAt = p++
      resumeAt = t
    } else if (p < pattern.length && pattern[p] === text[t]) {
      p++
      t++
    } else if (starAt >= 0) {
      // Let the last star swallow one more character and retry the rest of the pattern from there.
      p = starAt + 1
      t = ++resumeAt
    } else return false
  }
  while (p < pattern.length && pattern[p] === star) p++
  return p === pattern.length
}
