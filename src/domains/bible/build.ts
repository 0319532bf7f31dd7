/**
 * The 34 translations -> `bible.sqlite`: translations, per-translation books and chapters, every verse
 * as clean text, and an FTS5 index over the verses' search form (fold.ts).
 *
 * Verse ids are `translation index << 16 | position`: each translation owns one contiguous id range,
 * in canonical book order (books.ts), so a chapter is an id range, a one-translation search is a rowid
 * range on the index, and the translation of a hit is its id shifted right. The index is contentless
 * (`content=''`): the verses table is its content, matched by rowid, and the text is stored once.
 */
import { Database } from 'bun:sqlite'
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { extractDeb } from '../../data/deb.ts'
import type { BuildContext, BuildResult, DatasetBuilder } from '../../data/types.ts'
import { bookByCode, bookById, bookByOsis, type BookInfo } from './books.ts'
import { foldText } from './fold.ts'
import { stripGbf, stripOsis } from './markup.ts'
import { type NameList, readSwordLocales, swordBookTitle, usfxTitles } from './book-names.ts'
import { readStepBible, readUsfmBooks, readUsfxText, type SourceVerse, usfxText } from './readers.ts'
import { readSwordModule } from './sword.ts'
import { TRANSLATIONS, type TranslationInfo } from './translations.ts'
import { BIBLE_ARTIFACT, encodeTermTranslations, ID_SHIFT, RANKED_IDS, type TermInTranslation } from './artifacts.ts'
import { bm25Rank, corpusOf, idf, varints } from './bm25.ts'

export const VERSIFICATION_SOURCE = 'bible-versification'
export const BOOK_NAMES_SOURCE = 'bible-book-names'

const SCHEMA = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE translations (
  idx INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, name TEXT NOT NULL, language TEXT NOT NULL, language_name TEXT NOT NULL,
  year INTEGER, year_text TEXT NOT NULL, license TEXT NOT NULL, source TEXT NOT NULL, notes TEXT NOT NULL,
  books INTEGER NOT NULL, chapters INTEGER NOT NULL, verses INTEGER NOT NULL, first_id INTEGER NOT NULL, last_id INTEGER NOT NULL
);
CREATE TABLE books (
  translation INTEGER NOT NULL, book INTEGER NOT NULL, local_name TEXT NOT NULL,
  chapters INTEGER NOT NULL, verses INTEGER NOT NULL, first_id INTEGER NOT NULL, last_id INTEGER NOT NULL,
  PRIMARY KEY (translation, book)
) WITHOUT ROWID;
CREATE TABLE chapters (
  translation INTEGER NOT NULL, book INTEGER NOT NULL, chapter INTEGER NOT NULL,
  verses INTEGER NOT NULL, first_id INTEGER NOT NULL, last_id INTEGER NOT NULL,
  PRIMARY KEY (translation, book, chapter)
) WITHOUT ROWID;
CREATE TABLE verses (id INTEGER PRIMARY KEY, book INTEGER NOT NULL, chapter INTEGER NOT NULL, verse INTEGER NOT NULL, text TEXT NOT NULL);
CREATE VIRTUAL TABLE verses_fts USING fts5(text, content='', tokenize='unicode61 remove_diacritics 0');
CREATE TABLE search_terms (term TEXT PRIMARY KEY, docs INTEGER NOT NULL, translations BLOB NOT NULL) WITHOUT ROWID;
`

/**
 * The statistics the search reads, one row per indexed term (`search_terms`): the number of verses holding it
 * (the budget; a prefix's expansion is one index range scan), and for each translation holding it, its verse
 * count and its first RANKED_IDS verses as FTS5's `ORDER BY rank` gives them (artifacts.ts has the layout). A
 * one-word search reads its counts and its page from that row instead of matching and ranking: a rare word
 * costs the rows of its page, and `the` over all 34 translations too, not BM25 over 24,127 KJV verses.
 * fts5vocab could tell the counts at run time, but it counts by reading the term's whole doclist (3 ms for
 * `the`), and it cannot be created on the read-only connection.
 *
 * One pass over fts5vocab's `instance` table: every token FTS5 indexed (its own tokens), in term then verse
 * order. Each verse's size comes from its docsize record and the ranks from bm25.ts, which is FTS5's formula
 * bit for bit; equal ranks keep verse order, as FTS5's sort does (test/domains/bible/fast-paths.test.ts
 * compares terms of every translation with FTS5's own ranking).
 */
function writeTermStatistics(db: Database) {
  const corpus = corpusOf(db)
  const sizes = new Map<number, number>()
  for (const { id, sz } of db.query('SELECT id, sz FROM verses_fts_docsize').iterate() as IterableIterator<{ id: number; sz: Uint8Array }>)
    sizes.set(id, varints(sz)[0]!)
  const insert = db.prepare('INSERT INTO search_terms VALUES (?, ?, ?)')
  const idfs = [0]
  const freqs = [0]
  // One term's verses and the count of its tokens in each, in verse order.
  let term: string | undefined
  const ids: number[] = []
  const counts: number[] = []
  const flush = () => {
    if (term === undefined) return
    idfs[0] = idf(corpus, ids.length)
    const parts: TermInTranslation[] = []
    for (let start = 0; start < ids.length; ) {
      const translation = ids[start]! >> ID_SHIFT
      let end = start
      while (end < ids.length && ids[end]! >> ID_SHIFT === translation) end++
      const ranked = Array.from({ length: end - start }, (_, i) => {
        freqs[0] = counts[start + i]!
        return { id: ids[start + i]!, rank: bm25Rank(idfs, freqs, sizes.get(ids[start + i]!)!, corpus.avgdl) }
      })
      ranked.sort((a, b) => a.rank - b.rank || a.id - b.id)
      const first = translation << ID_SHIFT
      const positions = Buffer.alloc(Math.min(ranked.length, RANKED_IDS) * 2)
      for (let i = 0; i * 2 < positions.length; i++) positions.writeUInt16LE(ranked[i]!.id - first, i * 2)
      parts.push({ translation, docs: end - start, ranked: positions })
      start = end
    }
    insert.run(term, ids.length, encodeTermTranslations(parts))
    ids.length = 0
    counts.length = 0
  }
  db.exec('CREATE VIRTUAL TABLE temp.instances USING fts5vocab(main, verses_fts, instance)')
  for (const { term: t, doc } of db.query('SELECT term, doc FROM temp.instances').iterate() as IterableIterator<{
    term: string
    doc: number
  }>) {
    if (t !== term) {
      flush()
      term = t
    }
    if (ids.at(-1) === doc) counts[counts.length - 1]!++
    else {
      ids.push(doc)
      counts.push(1)
    }
  }
  flush()
  db.exec('DROP TABLE temp.instances')
}

interface Verse {
  book: number
  chapter: number
  verse: number
  text: string
}

export interface BibleBuildOptions {
  /** Path of a translation's source (its mirror file name -> where it was found, in either form). */
  mirror: (file: string) => string
  /** SWORD's canon*.h headers: a folder of them or libsword-dev's Debian package. */
  versification: string
  /** SWORD's locales: a folder of `<lang>-utf8.conf` files or libsword-common's Debian package. */
  locales: string
  out: string
  log?: (line: string) => void
  /** Only these translation ids (tests, benchmarks); default all. */
  only?: string[]
}

/** The first number of `1611/1769`, `1637 (modern spelling)`; null for `unknown`. */
export const yearOf = (text: string) => {
  const m = /\d{3,4}/.exec(text)
  return m ? Number(m[0]) : null
}

/** `Chinese (Traditional)` -> `Chinese`: a language, not its script. */
export const languageNameOf = (t: TranslationInfo) => t.languageName.replace(/ \((Traditional|Simplified)\)$/, '')

/** A scratch folder for the upstream forms that must be unpacked (tarballs, Debian packages). */
function scratch(): string {
  return mkdtempSync(join(tmpdir(), 'almanac-bible-'))
}

function unpackTar(archive: string, into: string): string {
  const r = Bun.spawnSync(['tar', '-xzf', archive, '-C', into])
  if (r.exitCode !== 0) throw new Error(`${archive}: tar failed: ${r.stderr.toString()}`)
  return into
}

/** Paths inside Debian packages that hold what the build reads. */
export const DEB_PATHS = {
  usfm: './usr/share/bibledit/demo/*.usfm',
  versification: './usr/include/sword/canon*.h',
  locales: './usr/share/sword/locales.d/*-utf8.conf',
}

/**
 * A source that is a folder of files, in whichever form it was found: the folder itself (the mirror's
 * versification and locales), a Debian package (upstream) or a tarball (the mirror's USFM and STEPBible
 * files). Returns the folder that holds the files; `into` is a scratch folder the caller removes.
 */
export function folderOf(path: string, into: string, debPattern?: string): string {
  if (statSync(path).isDirectory()) return path
  if (path.endsWith('.deb')) {
    if (!debPattern) throw new Error(`${path}: a Debian package where this source has none`)
    extractDeb(path, into, [debPattern])
    return join(into, dirname(debPattern))
  }
  return unpackTar(path, into)
}

/** Reads one translation's verses and its own book titles (book id -> title) from its upstream file, in source order. */
export async function readTranslation(
  t: TranslationInfo,
  path: string,
  versification: string,
): Promise<{ verses: Verse[]; unknownBooks: Set<string>; titles: Map<number, string> }> {
  const unknownBooks = new Set<string>()
  const verses: Verse[] = []
  const titles = new Map<number, string>()
  const add = (book: number | undefined, name: string, chapter: number, verse: number, text: string) => {
    if (!book) unknownBooks.add(name)
    else verses.push({ book, chapter, verse, text })
  }
  const title = (book: number | undefined, text: string | undefined) => {
    if (book && text && !titles.has(book)) titles.set(book, text)
  }
  if (t.format === 'sword-ztext-zip') {
    const m = await readSwordModule(path, versification)
    const strip = m.conf.get('SourceType')?.toUpperCase() === 'GBF' ? stripGbf : stripOsis
    for (const v of m.verses) {
      // A slot holding only markup (a paragraph or chapter end) is not a verse; one holding only a note
      // ("many authorities insert v. 21") is, with empty text, as the upstream counts it.
      if (v.raw.replace(/<[^>]*>/g, '').trim()) add(bookByOsis(v.osis)?.id, v.osis, v.chapter, v.verse, strip(v.raw))
    }
    for (const [osis, raw] of m.headings) title(bookByOsis(osis)?.id, swordBookTitle(raw))
  } else {
    let read: SourceVerse[]
    if (t.format === 'usfx') {
      const xml = usfxText(path)
      read = readUsfxText(xml)
      for (const [code, text] of usfxTitles(xml)) title(bookByCode(code)?.id, text)
    } else {
      const into = scratch()
      try {
        const dir = folderOf(path, into, t.format === 'usfm' ? DEB_PATHS.usfm : undefined)
        if (t.format === 'usfm') {
          read = []
          for (const book of readUsfmBooks(dir)) {
            read.push(...book.verses)
            title(book.code ? bookByCode(book.code)?.id : undefined, book.title)
          }
        } else read = readStepBible(dir)
      } finally {
        rmSync(into, { recursive: true, force: true })
      }
    }
    for (const v of read) add(bookByCode(v.code)?.id, v.code, v.chapter, v.verse, v.text)
  }
  return { verses, unknownBooks, titles }
}

/**
 * Where a translation's book names come from, best first: its own file's titles (the translations below),
 * then these SWORD locales (default: the translation's language), then the English catalogue name.
 */
const OWN_TITLES = new Set(['cuv', 'cuvs', 'web', 'mg1865', 'gluck8'])
const LOCALES = new Map([
  ['cuv', ['zh-Hant']],
  ['cuvs', ['zh-Hans']],
  ['web', []],
  ['mg1865', []],
  ['gluck8', ['lv']],
  ['blivre', ['pt-BR', 'pt']],
])

function localName(locales: Map<string, NameList>, titles: Map<number, string>, t: TranslationInfo, book: BookInfo): string {
  const own = OWN_TITLES.has(t.id) ? titles.get(book.id) : undefined
  if (own) return own
  for (const key of LOCALES.get(t.id) ?? [t.language]) {
    const list = locales.get(key)
    if (!list) continue
    for (const o of book.osis) {
      const n = list.get(o)
      if (n) return n
    }
  }
  return book.name
}

export async function buildBibleDatabase(o: BibleBuildOptions): Promise<BuildResult> {
  const log = o.log ?? (() => {})
  const into = scratch()
  try {
    const versification = folderOf(o.versification, join(into, 'versification'), DEB_PATHS.versification)
    const locales = readSwordLocales(folderOf(o.locales, join(into, 'locales'), DEB_PATHS.locales), versification)
    return await buildDatabase({ ...o, versification }, locales, log)
  } finally {
    rmSync(into, { recursive: true, force: true })
  }
}

async function buildDatabase(o: BibleBuildOptions, locales: Map<string, NameList>, log: (line: string) => void): Promise<BuildResult> {
  const work = `${o.out}.work`
  for (const p of [o.out, work]) rmSync(p, { force: true })
  const db = new Database(work, { create: true })
  const counts: Record<string, number> = {}
  const notes: string[] = []
  try {
    db.run('PRAGMA journal_mode = OFF')
    db.run('PRAGMA synchronous = OFF')
    db.run('PRAGMA locking_mode = EXCLUSIVE')
    db.run('PRAGMA cache_size = -262144')
    db.exec(SCHEMA)
    const insertVerse = db.prepare('INSERT INTO verses (id, book, chapter, verse, text) VALUES (?,?,?,?,?)')
    const insertFts = db.prepare('INSERT INTO verses_fts (rowid, text) VALUES (?,?)')
    const insertBook = db.prepare('INSERT INTO books VALUES (?,?,?,?,?,?,?)')
    const insertChapter = db.prepare('INSERT INTO chapters VALUES (?,?,?,?,?,?)')
    const insertTranslation = db.prepare('INSERT INTO translations VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)')
    const list = TRANSLATIONS.filter((t) => !o.only || o.only.includes(t.id))
    let total = 0
    db.run('BEGIN')
    for (const [i, t] of list.entries()) {
      const started = performance.now()
      const idx = TRANSLATIONS.indexOf(t) + 1
      const { verses, unknownBooks, titles } = await readTranslation(t, o.mirror(t.file), o.versification)
      if (unknownBooks.size) throw new Error(`${t.id}: books not in the catalogue: ${[...unknownBooks].join(', ')}`)
      // Canonical order: book id, chapter, verse (a stable sort keeps source order among equals).
      verses.sort((a, b) => a.book - b.book || a.chapter - b.chapter || a.verse - b.verse)
      for (let k = 1; k < verses.length; k++) {
        const [a, b] = [verses[k - 1]!, verses[k]!]
        if (a.book === b.book && a.chapter === b.chapter && a.verse === b.verse)
          throw new Error(`${t.id}: verse ${a.book} ${a.chapter}:${a.verse} appears twice`)
      }
      if (verses.length !== t.verses) throw new Error(`${t.id}: read ${verses.length} verses, the upstream states ${t.verses}`)
      if (verses.length >= 1 << ID_SHIFT) throw new Error(`${t.id}: too many verses for the id layout`)
      const base = idx << ID_SHIFT
      let chapters = 0
      let books = 0
      let k = 0
      while (k < verses.length) {
        const book = verses[k]!.book
        const bookStart = k
        let bookChapters = 0
        while (k < verses.length && verses[k]!.book === book) {
          const chapter = verses[k]!.chapter
          const chapterStart = k
          while (k < verses.length && verses[k]!.book === book && verses[k]!.chapter === chapter) {
            const v = verses[k]!
            insertVerse.run(base + k, v.book, v.chapter, v.verse, v.text)
            insertFts.run(base + k, foldText(v.text))
            k++
          }
          insertChapter.run(idx, book, chapter, k - chapterStart, base + chapterStart, base + k - 1)
          bookChapters++
        }
        insertBook.run(
          idx,
          book,
          localName(locales, titles, t, bookById(book)!),
          bookChapters,
          k - bookStart,
          base + bookStart,
          base + k - 1,
        )
        chapters += bookChapters
        books++
      }
      insertTranslation.run(
        idx,
        t.id,
        t.name,
        t.language,
        languageNameOf(t),
        yearOf(t.yearText),
        t.yearText,
        t.license,
        t.source,
        t.notes,
        books,
        chapters,
        verses.length,
        base,
        base + verses.length - 1,
      )
      if (books !== t.books || chapters !== t.chapters)
        notes.push(`${t.id}: ${books} books and ${chapters} chapters, the upstream states ${t.books} and ${t.chapters}`)
      counts[t.id] = verses.length
      total += verses.length
      log(
        `${t.id}: ${verses.length} verses, ${books} books (${i + 1}/${list.length}) ` +
          `in ${((performance.now() - started) / 1000).toFixed(1)} s`,
      )
    }
    db.prepare('INSERT INTO meta VALUES (?,?)').run('verses', String(total))
    db.run('COMMIT')
    const step = (label: string, sql: string) => {
      const t = performance.now()
      db.exec(sql)
      log(`${label} in ${((performance.now() - t) / 1000).toFixed(1)} s`)
    }
    step('index merge', "INSERT INTO verses_fts (verses_fts) VALUES ('optimize')")
    const started = performance.now()
    db.run('BEGIN')
    writeTermStatistics(db)
    db.run('COMMIT')
    log(`term statistics in ${((performance.now() - started) / 1000).toFixed(1)} s`)
    for (const n of notes) log(n)
    step('compaction', `VACUUM INTO '${o.out.replace(/'/g, "''")}'`)
    // One version for the dataset (its 36 sources each keep theirs in the manifest): the translation
    // count and the newest upstream date among them.
    const newest = list
      .map((t) => t.date)
      .sort()
      .at(-1)
    return { counts: { verses: total, translations: list.length, ...counts }, version: `${list.length}-translations-${newest}`, notes }
  } finally {
    db.close()
    for (const suffix of ['', '-journal', '-wal', '-shm']) if (existsSync(work + suffix)) rmSync(work + suffix, { force: true })
  }
}

/** The Bible dataset's builder; `only` (tests) builds just those translations. */
export function bibleBuilderOf(only?: string[]): DatasetBuilder {
  const list = TRANSLATIONS.filter((t) => !only || only.includes(t.id))
  return {
    id: 'bible',
    sources: [...list.map((t) => `bible-${t.id}`), VERSIFICATION_SOURCE, BOOK_NAMES_SOURCE],
    artifacts: [BIBLE_ARTIFACT],
    revision: 10,
    async build(ctx: BuildContext) {
      const paths = new Map<string, string>()
      for (const t of list) paths.set(t.file, (await ctx.source(`bible-${t.id}`)).path)
      const versification = (await ctx.source(VERSIFICATION_SOURCE)).path
      const locales = (await ctx.source(BOOK_NAMES_SOURCE)).path
      return buildBibleDatabase({ mirror: (f) => paths.get(f)!, versification, locales, out: ctx.out(BIBLE_ARTIFACT), log: ctx.log, only })
    },
  }
}

export const bibleBuilder = bibleBuilderOf()
