/**
 * What the Bible build writes and the service reads, in one place both import (the service never loads
 * the build): the artifact's name and the layout facts of its tables.
 */
export const BIBLE_ARTIFACT = 'bible.sqlite'

/** Verse ids are `translation index << ID_SHIFT | position` (build.ts explains the layout). */
export const ID_SHIFT = 16

/**
 * A term in at least this many verses (of all translations) has its verse count per translation in
 * `search_term_translations`; a rarer one costs little wherever it is searched (budget.ts).
 */
export const COMMON_TERM_DOCS = 1000

/**
 * A (term, translation) pair in at least this many verses has its first RANKED_IDS verses in BM25 order
 * stored in `search_ranked` (build.ts): ranking that many matches live costs ~0.4 ms, ranking `the` in
 * the KJV (24,127 matches) 15–50 ms, and FTS5 ranks every match before it returns the first.
 */
export const RANKED_MIN_DOCS = 500
/** How deep the stored ranking goes: ten pages of the default 20; a page past it is ranked live. */
export const RANKED_IDS = 200

/**
 * One page of a translation's search hits with their verses (`?1` the MATCH text, `?2`–`?3` the
 * translation's id range, `?4` limit, `?5` offset): the service runs it, the build stores its first
 * RANKED_IDS in `search_ranked`, so both orders (and FTS5's order of equal scores) are the same.
 */
export const searchPageSql = (order: 'f.rank' | 'f.rowid') =>
  `SELECT v.id, v.book, v.chapter, v.verse, v.text FROM verses_fts f JOIN verses v ON v.id = f.rowid WHERE verses_fts MATCH ? AND ` +
  `f.rowid BETWEEN ? AND ? ORDER BY ${order} LIMIT ? OFFSET ?`
