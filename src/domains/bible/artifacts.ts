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
