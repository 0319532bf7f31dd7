/**
 * The built Bible database for the tests, opened as the service opens it (read-only, immutable), and a
 * translation's verses read from it directly, in Bible order.
 */
import { join } from 'node:path'
import { SOURCE_OUT_DIR } from '../../../src/data/open.ts'
import { openReadonlySqlite } from '../../../src/data/sqlite.ts'
import { BIBLE_ARTIFACT } from '../../../src/domains/bible/artifacts.ts'

export const bibleDb = openReadonlySqlite(join(SOURCE_OUT_DIR, BIBLE_ARTIFACT))

export type VerseRow = { book: number; chapter: number; verse: number; text: string }

const range = bibleDb.query('SELECT first_id, last_id FROM translations WHERE id = ?')
const verses = bibleDb.query('SELECT book, chapter, verse, text FROM verses WHERE id BETWEEN ? AND ? ORDER BY id')

/** Every verse of translation `id` (not cached: all 34 at once would hold the whole Bible table in the heap). */
export function versesOf(id: string): VerseRow[] {
  const t = range.get(id) as { first_id: number; last_id: number } | null
  if (!t) throw new Error(`no translation ${id} in ${BIBLE_ARTIFACT}`)
  return verses.all(t.first_id, t.last_id) as VerseRow[]
}
