/**
 * The work budget of one search. FTS5 does its work inside single SQLite steps (a prefix is expanded
 * and merged before the first row comes out, BM25 ranks every match before the first hit), and
 * bun:sqlite has no progress handler to stop a step, so a search is priced before each phase runs and
 * refused (422, saying what to narrow) when the price is over the budget; nothing is cut off midway.
 *
 * The price is an estimate in milliseconds from the term statistics built into bible.sqlite (build.ts):
 * how many index entries each statement reads (each word's verses in the translations searched, each
 * prefix's merged expansion, which FTS5 builds over all translations whatever the rowid range), how
 * many matches BM25 ranks (known exactly once the cheap counting phase has run) and how many rows the
 * page skips and reads. The constants were measured in process on this 2-core machine (docs/bible.md).
 */
import type { Database, Statement } from 'bun:sqlite'
import { AlmanacError } from '../../lib/errors.ts'
import { NotInline } from '../../lib/query-pool.ts'
import { decodeTermTranslations, type TermInTranslation } from './artifacts.ts'
import type { Term } from './query.ts'

/** The estimated milliseconds one search may take; measured worst admitted searches stay well under 50 ms. */
export const SEARCH_BUDGET_MS = 25
/**
 * Searches priced over this many milliseconds run on a query worker, cheaper ones on the event loop
 * (docs/bible.md, "Where a search runs"): a worker's round trip costs ~0.1 ms, not worth it below.
 */
export const SEARCH_INLINE_MS = 1
/** Most index terms one `prefix*` may expand to: 3-letter prefixes reach 4,151 (`meg*`) over 28 languages, `lov*` 235. */
export const MAX_PREFIX_WORDS = 2500

/** Microseconds per unit of work (in process, 2 shared cores). */
const US = {
  /** One doclist entry of a word read while matching (`the` over all: 147,204 entries, 3.2 ms counted). */
  read: 0.025,
  /** One doclist entry of a prefix's expansion merged (`the*`: 287,220 entries, 26–34 ms per statement). */
  merge: 0.11,
  /** Preparing and stepping one statement. */
  statement: 15,
  /** BM25 for one match, and per term of the query (`the` in the KJV: 24,127 matches, 15–18 ms). */
  rank: 0.55,
  rankPerTerm: 0.2,
  /** One match through the sorter of `GROUP BY rowid >> 16` (the grouped count over all translations). */
  group: 0.13,
  /** One row of the page read and skipped or kept (a verse joined by id). */
  row: 0.6,
  /** One hit made: its snippet. */
  hit: 8,
}

/**
 * A word in at least this many verses (of all translations) is priced per translation (its counts in
 * `search_terms.translations`); a rarer one costs little wherever it is searched, so its total bounds each.
 */
const COMMON_TERM_DOCS = 1000

/** Entries of a common word read per row of the rarest term when FTS5 seeks it there (calibrated, see statementMs). */
const US_SEEK = 16

export interface WordCost {
  label: string
  docs: number
  /** Its part in each translation holding it, for a common word or a lone one; otherwise `docs` bounds every translation. */
  perTranslation: readonly TermInTranslation[] | undefined
}

/** A word's part in translation `idx`: a scan of at most 34 parts costs less than making a Map of them. */
const partIn = (w: WordCost, idx: number) => w.perTranslation?.find((p) => p.translation === idx)

interface PrefixCost {
  label: string
  words: number
  docs: number
}

/** One term priced: its plain words and its prefix (the last word of a `prefix*`). */
interface TermCost {
  words: WordCost[]
  prefix: PrefixCost | undefined
}

/** What ranking one match in bm25.ts costs, in rows of a doclist FTS5 counts for its IDF (see wordsToRankHere). */
const SCAN_ROWS_PER_SCORED_ROW = 100

/** Term statistics lookups, prepared once per database. */
export class SearchCosts {
  private readonly termStmt: Statement
  private readonly expansionStmt: Statement

  constructor(db: Database) {
    this.termStmt = db.query('SELECT docs, translations FROM search_terms WHERE term = ?')
    this.expansionStmt = db.query(
      `SELECT count(*) AS words, coalesce(sum(docs), 0) AS docs FROM (SELECT docs FROM search_terms WHERE term >= ?1 AND term < ?1 || ` +
        `char(1114111) LIMIT ${MAX_PREFIX_WORDS + 1})`,
    )
  }

  /**
   * The price list of a query's terms; a prefix over the expansion limit is a 422 naming it. A search
   * whose price passes `inlineMs` (and not the budget) stops with `NotInline`, to run on a query worker.
   */
  price(terms: Term[], budgetMs = SEARCH_BUDGET_MS, inlineMs = Infinity): SearchPrice {
    // One plain word and nothing else (no second term, no phrase, no prefix): its counts and first pages per
    // translation are its search's (`loneWordCounts`, `loneWordRanking`).
    const lone = terms.length === 1 && terms[0]!.words.length === 1 && !terms[0]!.prefix
    const priced = terms.map((t) => ({
      words: (t.prefix ? t.words.slice(0, -1) : t.words).map((w) => this.word(w, lone)),
      prefix: t.prefix ? this.prefix(t.words.at(-1)!) : undefined,
    }))
    return new SearchPrice(priced, lone, budgetMs, inlineMs)
  }

  private word(w: string, lone: boolean): WordCost {
    const row = this.termStmt.get(w) as { docs: number; translations: Uint8Array } | null
    if (!row || (!lone && row.docs < COMMON_TERM_DOCS)) return { label: w, docs: row?.docs ?? 0, perTranslation: undefined }
    return { label: w, docs: row.docs, perTranslation: decodeTermTranslations(row.translations) }
  }

  private prefix(w: string): PrefixCost {
    const { words, docs } = this.expansionStmt.get(w) as { words: number; docs: number }
    if (words > MAX_PREFIX_WORDS)
      throw new AlmanacError(
        'invalid',
        `q: the prefix ${w}* matches more than ${MAX_PREFIX_WORDS.toLocaleString('en')} different words; give more letters before the *`,
        {
          errors: [{ in: 'query', field: 'q', message: `prefix ${w}* expands to more than ${MAX_PREFIX_WORDS} words` }],
          extra: { reason: 'prefix_too_broad', prefix: `${w}*`, max_prefix_words: MAX_PREFIX_WORDS },
        },
      )
    return { label: `${w}*`, words, docs }
  }
}

/** The priced terms of one query, and the running total of one search against the budget. */
export class SearchPrice {
  /** The estimate of the phases admitted so far. */
  spentMs = 0
  private readonly words: WordCost[]
  private readonly prefixes: PrefixCost[]
  /** The query's one plain word, when it is nothing else (no second term, no phrase, no prefix). */
  private readonly lone: WordCost | undefined

  constructor(
    private readonly terms: TermCost[],
    /** The query is one plain word (`SearchCosts.price` says). */
    lone: boolean,
    private readonly budgetMs: number,
    /** Past this estimate a search leaves the event loop for a query worker (`NotInline`). */
    private readonly inlineMs = Infinity,
  ) {
    this.words = terms.flatMap((t) => t.words)
    this.prefixes = terms.flatMap((t) => (t.prefix ? [t.prefix] : []))
    this.lone = lone ? this.words[0] : undefined
  }

  /**
   * The query's words in query order, when every term is one plain word (no phrase, no prefix) and `matches`
   * rows are ranked for less by bm25.ts than by FTS5; otherwise undefined. FTS5's IDF first counts the rows
   * of each word's whole doclist, over all translations (~0.05 µs a row: 1.3 ms for `have`, in 27,302
   * verses); bm25.ts reads each match's text and counts its words (a few µs a match more). Measured over the
   * 212 mixed KJV queries of bench/peers.ts (A/B in one process, 6 passes): ratios of 50 to 200 are alike, 20
   * and 400 worse; at 100 the set took 72 ms a pass against 98 with FTS5 ranking all.
   */
  wordsToRankHere(matches: number): readonly WordCost[] | undefined {
    if (this.prefixes.length || this.terms.some((t) => t.words.length !== 1)) return undefined
    // A word the index does not hold as one token (docs 0) could still match as FTS5 splits it: FTS5 ranks that.
    if (this.words.some((w) => w.docs === 0)) return undefined
    return matches * SCAN_ROWS_PER_SCORED_ROW < this.words.reduce((sum, w) => sum + w.docs, 0) ? this.words : undefined
  }

  private wordDocs(w: WordCost, idx: number | undefined) {
    return idx === undefined || !w.perTranslation ? w.docs : (partIn(w, idx)?.docs ?? 0)
  }

  /**
   * One statement over one translation (`idx`) or all. Only a query of one lone word stops reading at
   * the end of its rowid range: FTS5 looks for the next row of an AND or a phrase past the range's end
   * before the cursor sees it (measured: sixteen common words cost 2.7 ms over Hebrew, which has none of
   * them, as over the KJV), and merges a prefix's expansion over all translations. So the words of any
   * other query are priced over all translations, each at most `SEEK` entries per verse of the rarest
   * term (the others are advanced to its rows through the doclist index: `"in the beginning"` reads
   * 0.5 ms, `"the the"` 9 ms), and every prefix at its whole expansion.
   */
  statementMs(idx?: number): number {
    const lone = this.lone !== undefined
    const rarest = lone ? Infinity : this.matchBound() * US_SEEK
    let us = US.statement
    for (const w of this.words) us += Math.min(this.wordDocs(w, lone ? idx : undefined), rarest) * US.read
    for (const p of this.prefixes) us += p.docs * US.merge
    return us / 1000
  }

  /**
   * The verses per translation index of a query that is one plain word the index holds: exact, from the
   * term statistics, so counting its matches reads nothing. Undefined for any other query, and for a word
   * the index does not hold as one token (FTS5 may still match it, split).
   */
  loneWordCounts(): ((idx: number) => number) | undefined {
    const lone = this.lone
    return lone?.perTranslation && ((idx) => partIn(lone, idx)?.docs ?? 0)
  }

  /** The first RANKED_IDS verses of the lone word in translation `idx` (positions as little-endian uint16, build.ts). */
  loneWordRanking(idx: number): Uint8Array | undefined {
    return this.lone && partIn(this.lone, idx)?.ranked
  }

  /** At most this many verses match in translation `idx` (or all): the rarest term's. */
  matchBound(idx?: number): number {
    return Math.min(...this.terms.map((t) => Math.min(...t.words.map((w) => this.wordDocs(w, idx)), t.prefix?.docs ?? Infinity)))
  }

  /** Counting per translation in one grouped statement: its matches go through a sorter. */
  groupedCountMs(): number {
    return this.statementMs() + (this.matchBound() * US.group) / 1000
  }

  /** Ranking `matches` hits by BM25. */
  rankMs(matches: number) {
    return (matches * (US.rank + US.rankPerTerm * this.terms.length)) / 1000
  }

  /** Reading a page: rows skipped and kept, and the kept ones made into hits. */
  pageMs(skip: number, take: number) {
    return ((skip + take) * US.row + take * US.hit) / 1000
  }

  /**
   * Adds a phase's price to the search; over the budget, a 422 saying what to narrow, before it runs.
   * `advice` is what the phase adds to the terms' own (fewer or rarer words, longer prefixes). Fewer
   * translations is not advised: only a lone word's reading is confined to its translations' rowids.
   * Within the budget but past `inlineMs`: `NotInline`, before the phase runs (a query worker starts over).
   */
  spend(ms: number, advice: string[] = []): void {
    if (this.spentMs + ms <= this.budgetMs) {
      if (this.spentMs + ms > this.inlineMs) throw new NotInline()
      this.spentMs += ms
      return
    }
    const estimate = Math.round(this.spentMs + ms)
    const narrow: string[] = []
    const costly = [
      ...this.words.map((w) => ({ label: w.label, docs: w.docs, text: `${w.label} (${w.docs.toLocaleString('en')} verses)` })),
      ...this.prefixes.map((p) => ({
        label: p.label,
        docs: p.docs,
        text: `${p.label} (${p.words.toLocaleString('en')} words in ${p.docs.toLocaleString('en')} verses)`,
      })),
    ]
      .sort((a, b) => b.docs - a.docs)
      .filter((c, i, all) => all.findIndex((d) => d.label === c.label) === i)
      .slice(0, 3)
    if (this.terms.length > 1 || this.words.length + this.prefixes.length > 1) narrow.push('fewer or rarer words')
    if (this.prefixes.length) narrow.push('longer prefixes')
    narrow.push(...advice)
    if (!narrow.length) narrow.push('a rarer word')
    const detail =
      `q: this search is estimated at ${estimate} ms of database work, over the ${this.budgetMs} ms one search may take ` +
      `(costliest: ${costly.map((c) => c.text).join(', ')}); narrow it: ${narrow.join(', ')}`
    throw new AlmanacError('invalid', detail, {
      errors: [{ in: 'query', field: 'q', message: `over the search budget; narrow it: ${narrow.join(', ')}` }],
      extra: {
        reason: 'search_over_budget',
        estimated_ms: estimate,
        budget_ms: this.budgetMs,
        costliest_terms: costly.map((c) => c.label),
        narrow,
      },
    })
  }
}
