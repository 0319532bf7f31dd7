/**
 * The Bible service: every question the eleven endpoints ask, over the read-only `bible.sqlite`.
 * Translations (34 rows) and their books (~2,400 rows) are held in memory; chapters and verses are read
 * by primary key or id range, search goes through the FTS5 index (query.ts makes the MATCH text).
 */
import type { Database, Statement } from 'bun:sqlite'
import { createHash, randomInt } from 'node:crypto'
import { GenerationalCache } from '../../lib/cache.ts'
import { invalid, notFound } from '../../lib/errors.ts'
import type { Page, Paged } from '../../lib/page.ts'
import { bookById, findBook, type BookInfo, type Testament } from './books.ts'
import { ID_SHIFT, RANKED_IDS } from './artifacts.ts'
import { inlineOr, type QueryPool } from '../../lib/query-pool.ts'
import { bm25Rank, corpusOf, frequencies, idf, varints, type Corpus } from './bm25.ts'
import { SEARCH_BUDGET_MS, SearchCosts, type SearchPrice, type WordCost } from './budget.ts'
import { parseQuery, type Term } from './query.ts'
import { snippet } from './snippet.ts'

export interface Translation {
  idx: number
  id: string
  name: string
  language: string
  languageName: string
  year: number | null
  yearText: string
  license: string
  source: string
  books: number
  chapters: number
  verses: number
  firstId: number
  lastId: number
}

export interface TranslationBook {
  book: BookInfo
  localName: string
  chapters: number
  verses: number
  firstId: number
  lastId: number
}

export interface VerseText {
  verse: number
  text: string
}

/** Verses of one chapter of one translation (a whole chapter, or the verses a reference selects). */
export interface Passage {
  translation: Translation
  book: TranslationBook
  chapter: number
  verses: VerseText[]
  reference: string
}

export interface SearchHit {
  translation: string
  reference: string
  book: string
  chapter: number
  verse: number
  text: string
  snippet: string
}

export interface SearchGroup {
  translation: string
  name: string
  count: number
}

export type SearchSort = 'relevance' | 'canonical'

export interface SearchResult {
  total: number
  groups: SearchGroup[]
  hits: SearchHit[]
  estimatedMs: number
}

interface VerseRow {
  id: number
  book: number
  chapter: number
  verse: number
  text: string
}

/** A match with its BM25 rank as FTS5 gives it (lower first). */
type RankedRow = VerseRow & { rank: number }

export interface DailyFilters {
  translation?: string
  language?: string
  testament?: string
  book?: string
}

/**
 * One page of a translation's search hits with their verses (`?1` the MATCH text, `?2`–`?3` the
 * translation's id range, `?4` limit, `?5` offset), in BM25 order or Bible order.
 */
export const searchPageSql = (order: 'f.rank' | 'f.rowid') =>
  `SELECT v.id, v.book, v.chapter, v.verse, v.text FROM verses_fts f JOIN verses v ON v.id = f.rowid WHERE verses_fts MATCH ? AND ` +
  `f.rowid BETWEEN ? AND ? ORDER BY ${order} LIMIT ? OFFSET ?`

/** A relevance search of several terms whose rarest is in at most this many verses (of the translation asked, or all) is read at once. */
const FEW_MATCHES = 64
/**
 * The most matches of one group ranked here (bm25.ts) rather than by FTS5, whatever the price says: each is
 * read whole (its text) into one array before the page is cut from it.
 */
const SCORED_MAX = 2000

/** Most search answers kept, whatever their bytes (the byte budget is the bound that matters). */
const SEARCH_CACHE_ENTRIES = 65_536

/** An estimate of a kept search answer's heap bytes: its strings as UTF-16 and ~200 bytes per object. */
function weighResult(key: string, r: SearchResult): number {
  let chars = key.length
  for (const h of r.hits) chars += h.text.length + h.snippet.length + h.reference.length + 16
  return chars * 2 + (r.hits.length + r.groups.length) * 200 + 200
}

/** Most parts in a `verse_ref` list (each part a verse or a range). */
export const REF_MAX_PARTS = 20

export interface BibleServiceOptions {
  /** The clock of the daily verse (tests pass a fixed one). */
  now?: () => Date
  /** The estimated milliseconds one search may take (budget.ts); benchmarks pass Infinity to price everything. */
  searchBudgetMs?: number
  /** Bytes of search answers kept (`ALMANAC_BIBLE_SEARCH_CACHE_BYTES`); 0 or absent: none. */
  searchCacheBytes?: number
}

/** The service over an open bible database (the domain's only way to make one). */
export function openBibleService(db: Database, options: BibleServiceOptions = {}): BibleService {
  return new BibleService(db, options)
}

export class BibleService {
  readonly translations: Translation[]
  private readonly byId = new Map<string, Translation>()
  private readonly books = new Map<number, TranslationBook[]>()
  private readonly chapterStmt: Statement
  private readonly rangeStmt: Statement
  private readonly verseStmt: Statement
  private readonly chaptersStmt: Statement
  private readonly partStmt: Statement
  /** One page of a translation's hits with their verses, by sort order (FTS5 rank, or rowid: Bible order). */
  private readonly searchStmts: Record<SearchSort, Statement>
  private readonly countAllStmt: Statement
  private readonly countOneStmt: Statement
  /** Every match of a query with its rank and verse, in id order (`searchFew`): in all translations, in one id range. */
  private readonly rankAllStmt: Statement
  private readonly rankRangeStmt: Statement
  /** The same, with each row's size (its FTS5 docsize record) instead of its rank, for bm25.ts. */
  private readonly sizedAllStmt: Statement
  private readonly sizedRangeStmt: Statement
  /** The index's row count and mean row size: what bm25.ts needs besides the row. */
  private readonly corpus: Corpus
  private readonly costs: SearchCosts
  private languageList: ReturnType<BibleService['listLanguages']> | undefined

  private readonly now: () => Date
  private readonly searchBudgetMs: number
  /**
   * Answers of searches by their question, for this database only (a data swap opens a new service).
   * Weighed by their text (UTF-16) plus a little per hit: a page of 20 KJV hits is ~12 KB.
   */
  private readonly searchCache: GenerationalCache<string, SearchResult> | undefined

  constructor(db: Database, options: BibleServiceOptions) {
    this.now = options.now ?? (() => new Date())
    this.searchBudgetMs = options.searchBudgetMs ?? SEARCH_BUDGET_MS
    if (options.searchCacheBytes)
      this.searchCache = new GenerationalCache(SEARCH_CACHE_ENTRIES, options.searchCacheBytes, (key, r) => weighResult(key, r))
    const rows = db.query('SELECT * FROM translations ORDER BY idx').all() as any[]
    this.translations = rows.map((r) => ({
      idx: r.idx,
      id: r.id,
      name: r.name,
      language: r.language,
      languageName: r.language_name,
      year: r.year,
      yearText: r.year_text,
      license: r.license,
      source: r.source,
      books: r.books,
      chapters: r.chapters,
      verses: r.verses,
      firstId: r.first_id,
      lastId: r.last_id,
    }))
    for (const t of this.translations) {
      this.byId.set(t.id, t)
      this.books.set(t.idx, [])
    }
    for (const r of db.query('SELECT * FROM books ORDER BY translation, book').all() as any[]) {
      this.books.get(r.translation)?.push({
        book: bookById(r.book)!,
        localName: r.local_name,
        chapters: r.chapters,
        verses: r.verses,
        firstId: r.first_id,
        lastId: r.last_id,
      })
    }
    this.chapterStmt = db.query('SELECT verses, first_id, last_id FROM chapters WHERE translation = ? AND book = ? AND chapter = ?')
    this.chaptersStmt = db.query('SELECT chapter, verses FROM chapters WHERE translation = ? AND book = ? ORDER BY chapter')
    this.rangeStmt = db.query('SELECT verse, text FROM verses WHERE id BETWEEN ? AND ? ORDER BY id')
    this.verseStmt = db.query('SELECT id, book, chapter, verse, text FROM verses WHERE id = ?')
    this.partStmt = db.query('SELECT verse, text FROM verses WHERE id BETWEEN ? AND ? AND verse BETWEEN ? AND ? ORDER BY id')
    this.searchStmts = { relevance: db.query(searchPageSql('f.rank')), canonical: db.query(searchPageSql('f.rowid')) }
    this.countAllStmt = db.query(`SELECT rowid >> ${ID_SHIFT} AS t, count(*) AS n FROM verses_fts WHERE verses_fts MATCH ? GROUP BY t`)
    this.countOneStmt = db.query('SELECT count(*) AS n FROM verses_fts WHERE verses_fts MATCH ? AND rowid BETWEEN ? AND ?')
    // The verse comes in the same statement: at most FEW_MATCHES rows, and one statement is ~3 µs less than a lookup per hit.
    const rankSql =
      'SELECT v.id, v.book, v.chapter, v.verse, v.text, f.rank FROM verses_fts f JOIN verses v ON v.id = f.rowid WHERE verses_fts MATCH ?'
    this.rankAllStmt = db.query(rankSql)
    this.rankRangeStmt = db.query(`${rankSql} AND f.rowid BETWEEN ? AND ?`)
    const sizedSql =
      'SELECT v.id, v.book, v.chapter, v.verse, v.text, d.sz FROM verses_fts f JOIN verses v ON v.id = f.rowid ' +
      'JOIN verses_fts_docsize d ON d.id = f.rowid WHERE verses_fts MATCH ?'
    this.sizedAllStmt = db.query(sizedSql)
    this.sizedRangeStmt = db.query(`${sizedSql} AND f.rowid BETWEEN ? AND ?`)
    this.corpus = corpusOf(db)
    this.costs = new SearchCosts(db)
  }

  /** Languages with their translation counts (made once: the data never changes while open). */
  languages() {
    return (this.languageList ??= this.listLanguages())
  }

  private listLanguages() {
    const out = new Map<string, { code: string; name: string; translations: number }>()
    for (const t of this.translations) {
      const l = out.get(t.language)
      if (l) l.translations++
      else out.set(t.language, { code: t.language, name: t.languageName, translations: 1 })
    }
    return [...out.values()].sort((a, b) => a.code.localeCompare(b.code))
  }

  listTranslations(language: string | undefined, page: Page): Paged<Translation> {
    const code = language?.trim().toLowerCase()
    const all = code ? this.translations.filter((t) => t.language === code) : this.translations
    return { total: all.length, items: all.slice(page.offset, page.offset + page.limit) }
  }

  /** A translation by id (any case); a 404 naming it otherwise. */
  translation(id: string, field = 'translation'): Translation {
    const t = this.byId.get(id.trim().toLowerCase())
    if (!t) {
      throw notFound(
        `Unknown translation ${JSON.stringify(id)}: GET /api/v1/bible/translations lists the ${this.translations.length} translations.`,
        { reason: 'unknown_translation', [field]: id },
      )
    }
    return t
  }

  booksOf(translationId: string): { translation: Translation; books: TranslationBook[] } {
    const translation = this.translation(translationId)
    return { translation, books: this.books.get(translation.idx)! }
  }

  /** A book of a translation from any accepted spelling; 404 for an unknown book or one the translation lacks. */
  book(translationId: string, spelling: string): { translation: Translation; book: TranslationBook } {
    const translation = this.translation(translationId)
    const info = findBook(spelling)
    if (!info)
      throw notFound(
        `Unknown book ${JSON.stringify(spelling)}: use a USFX code (JHN), an English name with hyphens (1-john) or a common abbreviation ` +
          `(jn).`,
        { reason: 'unknown_book', book: spelling },
      )
    const book = this.books.get(translation.idx)!.find((b) => b.book.id === info.id)
    if (!book)
      throw notFound(`${info.name} (${info.abbr}) is not in ${translation.id} (${translation.name}).`, {
        reason: 'book_not_in_translation',
        book: info.abbr,
        translation: translation.id,
      })
    return { translation, book }
  }

  chapters(translationId: string, spelling: string) {
    const { translation, book } = this.book(translationId, spelling)
    return { translation, book, chapters: this.chaptersStmt.all(translation.idx, book.book.id) as { chapter: number; verses: number }[] }
  }

  private chapterRow(translation: Translation, book: TranslationBook, chapter: number) {
    const row = this.chapterStmt.get(translation.idx, book.book.id, chapter) as { verses: number; first_id: number; last_id: number } | null
    if (!row) {
      throw notFound(
        `Chapter ${chapter} is out of range: ${book.book.name} has ${book.chapters} chapter${book.chapters === 1 ? '' : 's'} ` +
          `in ${translation.id}.`,
        {
          reason: 'chapter_out_of_range',
          chapter,
          chapters: book.chapters,
        },
      )
    }
    return row
  }

  chapter(translationId: string, spelling: string, chapter: number): Passage {
    const { translation, book } = this.book(translationId, spelling)
    const row = this.chapterRow(translation, book, chapter)
    const verses = this.rangeStmt.all(row.first_id, row.last_id) as VerseText[]
    return { translation, book, chapter, verses, reference: `${book.book.name} ${chapter}` }
  }

  /** Verses of a chapter that `ref` selects (`16`, `16-18`, `16,18-20`), in the order asked. */
  passage(translationId: string, spelling: string, chapter: number, ref: string): Passage {
    const parts = parseVerseRef(ref)
    const { translation, book } = this.book(translationId, spelling)
    const row = this.chapterRow(translation, book, chapter)
    const verses: VerseText[] = []
    const seen = new Set<number>()
    // Only the verses asked for are read (a range scan inside the chapter's id range).
    for (const [from, to] of parts) {
      const found = this.partStmt.all(row.first_id, row.last_id, from, to) as VerseText[]
      const first = found[0]?.verse
      const last = found[found.length - 1]?.verse
      for (const n of first !== from ? [from] : last !== to ? [to] : []) {
        const max = (this.rangeStmt.all(row.first_id, row.last_id) as VerseText[]).at(-1)?.verse ?? 0
        throw notFound(
          `Verse ${n} is out of range: ${book.book.name} ${chapter} has verses 1-${max} in ${translation.id}${
            n <= max ? ` (verse ${n} ` + `is not in this translation)` : ''
          }.`,
          {
            reason: 'verse_out_of_range',
            verse: n,
            verses: max,
          },
        )
      }
      for (const v of found) {
        if (!seen.has(v.verse)) {
          seen.add(v.verse)
          verses.push(v)
        }
      }
    }
    const label = parts.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(',')
    return { translation, book, chapter, verses, reference: `${book.book.name} ${chapter}:${label}` }
  }

  /**
   * Search: hits grouped by translation (catalogue order, or the order of `translations=`), each group
   * in BM25 order (`relevance`) or Bible order (`canonical`); `page` applies to the grouped sequence.
   * Each phase is priced before it runs (budget.ts): counting, then the page's statements, whose
   * ranking cost is known exactly from the counts. Over the budget: a 422 saying what to narrow.
   */
  search(
    q: string,
    translationIds: string[] | undefined,
    sort: SearchSort,
    page: Page,
    field = 'translations',
    /** Past this estimate, `NotInline` before the costly phase runs (see `searchAnywhere`). */
    inlineMs = Infinity,
  ): SearchResult {
    const parsed = parseQuery(q)
    const chosen = translationIds ? dedupe(translationIds.map((id) => this.translation(id, field))) : this.translations
    const price = this.costs.price(parsed.terms, this.searchBudgetMs, inlineMs)
    // In one translation a common word's own count bounds the matches (`lord` in the Vulgate: none).
    const bound = price.matchBound(chosen.length === 1 ? chosen[0]!.idx : undefined)
    // A lone word's counts and first pages are stored (build.ts): nothing to match or rank for them.
    if (sort === 'relevance' && bound <= FEW_MATCHES && !price.loneWordCounts())
      return this.searchFew(parsed.fts, parsed.terms, chosen, page, price, bound)
    const countIn = this.countMatches(parsed.fts, chosen, price)
    const groups: SearchGroup[] = chosen.map((t) => ({ translation: t.id, name: t.name, count: countIn(t.idx) })).filter((g) => g.count > 0)
    const total = groups.reduce((s, g) => s + g.count, 0)
    // The page: which groups it reads, how many rows each skips and keeps; priced as a whole first.
    const reads: { t: Translation; skip: number; take: number; count: number; ranked?: Uint8Array }[] = []
    let skip = page.offset
    let want = page.limit
    let rankMs = 0
    let rowsMs = 0
    let statementsMs = 0
    for (const g of groups) {
      if (want <= 0) break
      if (skip >= g.count) {
        skip -= g.count
        continue
      }
      const t = this.byId.get(g.translation)!
      const take = Math.min(want, g.count - skip)
      // A lone word's page within its stored ranking is read from there: no matching, no BM25.
      const ranked = sort === 'relevance' && skip + take <= RANKED_IDS ? price.loneWordRanking(t.idx) : undefined
      reads.push({ t, skip, take, count: g.count, ranked })
      rowsMs += price.pageMs(ranked ? 0 : skip, take)
      if (!ranked) statementsMs += price.statementMs(t.idx)
      if (!ranked && sort === 'relevance') rankMs += price.rankMs(g.count)
      want -= take
      skip = 0
    }
    const pageMs = statementsMs + rankMs + rowsMs
    const advice: string[] = []
    if (rankMs > pageMs / 4) advice.push('sort=canonical (Bible order needs no ranking)')
    if (rowsMs > pageMs / 4) advice.push('a smaller limit or offset')
    price.spend(pageMs, advice)
    const hits: SearchHit[] = []
    for (const { t, skip, take, ranked, count } of reads) {
      const words = !ranked && sort === 'relevance' && count <= SCORED_MAX ? price.wordsToRankHere(count) : undefined
      const scored = this.scoredMatches(parsed.fts, words, t)
      const rows = ranked
        ? this.rankedRows(t, ranked, skip, take)
        : scored
          ? scored.sort((a, b) => a.rank - b.rank).slice(skip, skip + take)
          : (this.searchStmts[sort].all(parsed.fts, t.firstId, t.lastId, take, skip) as VerseRow[])
      for (const v of rows) hits.push(this.hit(t, v, parsed.terms))
    }
    return { total, groups, hits, estimatedMs: price.spentMs }
  }

  /**
   * A relevance search of several terms (a lone word's answer is stored) whose rarest term is in at most
   * `bound` <= FEW_MATCHES verses of the chosen translations:
   * one statement reads every match with its BM25 rank, unordered, and the counts and the page come from
   * that, instead of a counting statement and a ranking statement per group (FTS5 prepares a statement
   * of its own for `ORDER BY rank`): ~160 → ~60 µs for a rare KJV word. Rows arrive in id order, so a
   * stable sort by rank gives FTS5's own order, equal ranks included (test/domains/bible/fast-paths.test.ts).
   */
  private searchFew(fts: string, terms: Term[], chosen: Translation[], page: Page, price: SearchPrice, bound: number): SearchResult {
    price.spend(price.statementMs() + price.rankMs(bound) + price.pageMs(0, Math.min(bound, page.limit)))
    const matches = new Map<number, RankedRow[]>()
    // One translation: only its id range is read and ranked (a KJV-rare word is often common in the ASV).
    const only = chosen.length === 1 ? chosen[0]! : undefined
    const rows =
      this.scoredMatches(fts, price.wordsToRankHere(bound), only) ??
      ((only ? this.rankRangeStmt.all(fts, only.firstId, only.lastId) : this.rankAllStmt.all(fts)) as RankedRow[])
    for (const row of rows) {
      const idx = row.id >> ID_SHIFT
      const list = matches.get(idx)
      if (list) list.push(row)
      else matches.set(idx, [row])
    }
    const groups: SearchGroup[] = []
    const hits: SearchHit[] = []
    let skip = page.offset
    let want = page.limit
    for (const t of chosen) {
      const list = matches.get(t.idx)
      if (!list) continue
      groups.push({ translation: t.id, name: t.name, count: list.length })
      if (want <= 0 || skip >= list.length) {
        skip -= Math.min(skip, list.length)
        continue
      }
      list.sort((a, b) => a.rank - b.rank)
      for (const v of list.slice(skip, skip + want)) hits.push(this.hit(t, v, terms))
      want -= Math.min(want, list.length - skip)
      skip = 0
    }
    return { total: groups.reduce((s, g) => s + g.count, 0), groups, hits, estimatedMs: price.spentMs }
  }

  /** Where searches too costly for the event loop run (index.ts sets it); unset, every search runs inline. */
  offload: { pool: QueryPool; inlineMs: number } | undefined

  /**
   * `search`, inline when its price is under `offload.inlineMs` (most searches: a rare word is a fraction
   * of a millisecond and pays no message round trip), otherwise on a query worker of `offload.pool` for
   * `caller`, which prices and runs the same search again under the same budget: the same answer or 422
   * either way. A 422 known from the price is answered inline, before any worker is asked.
   */
  searchAnywhere(
    q: string,
    translationIds: string[] | undefined,
    sort: SearchSort,
    page: Page,
    field: string,
    caller?: string,
  ): SearchResult | Promise<SearchResult> {
    const key = this.searchCache && JSON.stringify([q, translationIds, sort, page.offset, page.limit])
    const kept = key && this.searchCache!.get(key)
    if (kept) return kept
    const offload = this.offload
    const found = !offload
      ? this.search(q, translationIds, sort, page, field)
      : inlineOr(
          () => this.search(q, translationIds, sort, page, field, offload.inlineMs),
          () => offload.pool.run<SearchResult>('search', [q, translationIds, sort, page, field], caller),
        )
    if (!key) return found
    const keep = (r: SearchResult) => (this.searchCache!.set(key, r), r)
    return found instanceof Promise ? found.then(keep) : keep(found)
  }

  /**
   * Matches per translation index: one grouped statement over all translations, or one per chosen
   * translation (a rowid range), whichever is priced lower: a lone word is read only in each range, but
   * a prefix is merged and a phrase read once per statement, and the grouped one sorts its matches.
   */
  private countMatches(fts: string, chosen: Translation[], price: SearchPrice): (idx: number) => number {
    const known = price.loneWordCounts()
    if (known) return known
    const counts = new Map<number, number>()
    const groupedMs = price.groupedCountMs()
    const eachMs = chosen.reduce((s, t) => s + price.statementMs(t.idx), 0)
    price.spend(Math.min(groupedMs, eachMs))
    if (groupedMs <= eachMs) {
      const wanted = new Set(chosen.map((t) => t.idx))
      for (const r of this.countAllStmt.all(fts) as { t: number; n: number }[]) if (wanted.has(r.t)) counts.set(r.t, r.n)
    } else for (const t of chosen) counts.set(t.idx, (this.countOneStmt.get(fts, t.firstId, t.lastId) as { n: number }).n)
    return (idx) => counts.get(idx) ?? 0
  }

  /**
   * Every match of a query of plain words (in one translation, or all) with FTS5's rank computed by bm25.ts,
   * in id order. Undefined without `words` (`SearchPrice.wordsToRankHere`: not such a query, or FTS5 ranks it
   * for less), and when a row the index matched does not hold every word in its text as folded here (the two
   * disagree on a word): FTS5 ranks that query instead.
   */
  private scoredMatches(fts: string, words: readonly WordCost[] | undefined, only?: Translation): RankedRow[] | undefined {
    if (!words) return undefined
    const labels = words.map((w) => w.label)
    const idfs = words.map((w) => idf(this.corpus, w.docs))
    const rows = (only ? this.sizedRangeStmt.all(fts, only.firstId, only.lastId) : this.sizedAllStmt.all(fts)) as (RankedRow & {
      sz: Uint8Array
    })[]
    // Each row gets its rank in place (hit() reads only the verse's fields, so `sz` stays unseen).
    for (const row of rows) {
      const freqs = frequencies(row.text, labels)
      if (freqs.includes(0)) return undefined
      row.rank = bm25Rank(idfs, freqs, varints(row.sz)[0]!, this.corpus.avgdl)
    }
    return rows
  }

  /** Verses `skip` to `skip + take` of a stored ranking (positions as little-endian uint16, build.ts). */
  private rankedRows(t: Translation, positions: Uint8Array, skip: number, take: number): VerseRow[] {
    const rows: VerseRow[] = []
    const view = new DataView(positions.buffer, positions.byteOffset, positions.byteLength)
    for (let i = skip; i < skip + take; i++) rows.push(this.verseStmt.get(t.firstId + view.getUint16(i * 2, true)) as VerseRow)
    return rows
  }

  private hit(t: Translation, v: VerseRow, terms: Term[]): SearchHit {
    const book = bookById(v.book)!
    return {
      translation: t.id,
      reference: `${book.name} ${v.chapter}:${v.verse}`,
      book: book.abbr,
      chapter: v.chapter,
      verse: v.verse,
      text: v.text,
      snippet: snippet(v.text, terms),
    }
  }

  /**
   * The verse of the day (`daily`: the same for every caller on a UTC date and the same filters, spread
   * uniformly over the filtered verses by a hash of both) or a random one (`random`).
   */
  daily(filters: DailyFilters, mode: 'daily' | 'random'): Passage & { date: string } {
    const date = this.now().toISOString().slice(0, 10)
    const pool = this.dailyPool(filters)
    const total = pool.reduce((s, p) => s + p.book.verses, 0)
    const key = JSON.stringify(
      [date, filters.translation ?? '', filters.language ?? '', filters.testament ?? '', filters.book ?? ''].map((s) => s.toLowerCase()),
    )
    let n =
      mode === 'daily'
        ? Number(BigInt('0x' + createHash('sha256').update(key).digest('hex').slice(0, 16)) % BigInt(total))
        : randomInt(total)
    for (const { translation, book } of pool) {
      if (n >= book.verses) {
        n -= book.verses
        continue
      }
      // An empty verse (one the upstream marks as omitted) gives way to the next one with text.
      let id = book.firstId + n
      let v = this.verseStmt.get(id) as { chapter: number; verse: number; text: string }
      while (!v.text && id < book.lastId) v = this.verseStmt.get(++id) as typeof v
      return {
        translation,
        book,
        chapter: v.chapter,
        verses: [{ verse: v.verse, text: v.text }],
        reference: `${book.book.name} ${v.chapter}:${v.verse}`,
        date,
      }
    }
    throw new Error('daily verse pool exhausted') // unreachable: n < total
  }

  private dailyPool(f: DailyFilters): { translation: Translation; book: TranslationBook }[] {
    let translations: Translation[]
    if (f.translation) {
      const t = this.translation(f.translation)
      if (f.language && t.language !== f.language.toLowerCase())
        throw notFound(`Translation ${t.id} is in ${t.languageName} (${t.language}), not ${f.language}: the filters leave no verse.`, {
          reason: 'no_verse',
        })
      translations = [t]
    } else if (f.language) {
      translations = this.translations.filter((t) => t.language === f.language!.toLowerCase())
      if (!translations.length)
        throw notFound(`No translation in language ${JSON.stringify(f.language)}: GET /api/v1/bible/languages lists the languages.`, {
          reason: 'unknown_language',
          language: f.language,
        })
    } else translations = [this.translation('kjv')]
    const testament = f.testament?.toUpperCase() as Testament | undefined
    const info = f.book ? findBook(f.book) : undefined
    if (f.book && !info) throw notFound(`Unknown book ${JSON.stringify(f.book)}.`, { reason: 'unknown_book', book: f.book })
    const pool = translations.flatMap((translation) =>
      this.books
        .get(translation.idx)!
        .filter((b) => (!testament || b.book.testament === testament) && (!info || b.book.id === info.id))
        .map((book) => ({ translation, book })),
    )
    if (!pool.length)
      throw notFound('No verse matches these filters (translation, language, testament, book).', { reason: 'no_verse', filters: f })
    return pool
  }
}

const dedupe = <T>(xs: T[]) => [...new Set(xs)]

/** `16`, `16-18`, `16,18-20` -> [[16,16],[16,18]…]; a 422 naming `verse_ref` otherwise. */
export function parseVerseRef(ref: string): [number, number][] {
  const text = ref.replace(/\s+/g, '')
  if (!/^\d{1,3}(-\d{1,3})?(,\d{1,3}(-\d{1,3})?)*$/.test(text) || text.length > 100) {
    throw invalid('verse_ref', 'expected a verse number, a range (16-18) or a list (16,18-20)', 'path')
  }
  const parts = text.split(',').map((p) => {
    const [a, b] = p.split('-').map(Number)
    return [a!, b ?? a!] as [number, number]
  })
  if (parts.length > REF_MAX_PARTS) throw invalid('verse_ref', `at most ${REF_MAX_PARTS} parts`, 'path')
  for (const [a, b] of parts) {
    if (a < 1) throw invalid('verse_ref', 'verse numbers start at 1', 'path')
    if (b < a) throw invalid('verse_ref', `range ${a}-${b} ends before it starts`, 'path')
  }
  return parts
}
