// Almanac: what the embedding code hands in as DeviceDetector's `matchers` option (matchers.js).
export interface Matcher {
  exec(text: string): RegExpExecArray | null
  test(text: string): boolean
}

export interface Matchers {
  /** helper.getBaseRegExp(pattern): the pattern behind Matomo's base prefix, case-insensitive. */
  baseMatcher(pattern: string): Matcher
  /** helper.matchUserAgent(pattern, ua): the pattern behind its word-start prefix, case-insensitive. */
  userAgentMatcher(pattern: string): Matcher
  /** `new RegExp(source, 'i')` for the engine's own fixed patterns. */
  fixedRegExp(source: string): RegExp
  /** Positions of the entries of an ordered `{regex}` list that may match `text`, ascending. */
  candidateIndexes(list: { regex: string }[], text: string): number[]
  /** Keys of a `{regex}` object (brands) that may match `text`, in `for…in` order. */
  candidateKeys(collection: Record<string, { regex: string }>, text: string): string[]
}

export function setMatchers(given: Matchers): void
