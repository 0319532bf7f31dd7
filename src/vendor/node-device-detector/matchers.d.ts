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
  /** An ordered `{regex}` list: the positions of its entries that may match a text, and each entry's Matcher. */
  listIndex(list: { regex: string }[]): ListIndex
  /** A `{regex}` object (brands) as the list of its keys in `for…in` order (`keys`), indexed as listIndex does. */
  keyIndex(collection: Record<string, { regex: string }>): ListIndex
}

export interface ListIndex {
  /** Positions of the entries that may match `text`, ascending. */
  candidates(text: string): number[]
  /** Each entry's Matcher, by position. */
  readonly matchers: Matcher[]
  /** keyIndex: the object's keys by position. */
  readonly keys: string[]
}

export function setMatchers(given: Matchers): void
