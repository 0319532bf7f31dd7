/**
 * What the Bible build writes and the service reads, in one place both import (the service never loads
 * the build): the artifact's name and the layout facts of its tables.
 */
export const BIBLE_ARTIFACT = 'bible.sqlite'

/** Verse ids are `translation index << ID_SHIFT | position` (build.ts explains the layout). */
export const ID_SHIFT = 16

/**
 * How deep the stored ranking of a (term, translation) pair goes (`search_term_translations.ranked`,
 * build.ts): ten pages of the default 20; a page past it is ranked live.
 */
export const RANKED_IDS = 200
