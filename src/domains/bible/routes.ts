/** The eleven Bible endpoints: paths and schemas; the answers come from the service. */
import { Elysia, t } from 'elysia'
import type { Config } from '../../config.ts'
import { requestContext } from '../../http/routing/context.ts'
import { callerOf } from '../../http/edge/exchange.ts'
import { fieldsQuery, pageOf, pageQuery } from '../../http/routing/paging.ts'
import { list, one } from '../../http/reply/reply.ts'
import { type ResponseShapes, routeDetail } from '../../http/routing/route-facts.ts'
import { invalid } from '../../lib/errors.ts'
import {
  BookSchema,
  ChapterSchema,
  LanguageSchema,
  LanguagesBareSchema,
  PassageSchemaA,
  PassageSchemaB,
  presentBook,
  presentPassage,
  presentTranslation,
  SearchGroupsSchema,
  SearchHitSchema,
  TranslationDetailSchema,
  TranslationSchema,
} from './present.ts'
import { QUERY_MAX_LENGTH } from './query.ts'
import type { BibleService, SearchResult, SearchSort } from './service.ts'

const SEARCH_DEFAULT_LIMIT = 20
const MAX_TRANSLATIONS = 40

const translationParam = t.String({
  minLength: 1,
  maxLength: 32,
  description: 'Translation id (`kjv`, `web`, `synodal`), any case.',
  examples: ['kjv'],
})
const bookParam = t.String({
  minLength: 1,
  maxLength: 64,
  description:
    'Book: USFX code (`JHN`), English name with hyphens (`song-of-solomon`, `1-john`) or a common abbreviation ' +
    '(`jn`, `1jn`, `gen`, `ps`); any case.',
  examples: ['jn'],
})
const chapterParam = t.String({
  pattern: '^[0-9]{1,4}$',
  description: 'Chapter number.',
  error: 'chapter: expected a chapter number',
  examples: ['3'],
})
const verseRefParam = t.String({
  maxLength: 64,
  description: 'A verse (`16`), a range (`16-18`) or a list of both (`16,18-20`), at most 20 parts.',
  examples: ['16-18'],
})
const sortQuery = t.Optional(
  t.Union([t.Literal('relevance'), t.Literal('canonical')], {
    description: '`relevance` (BM25, default) or `canonical` (Bible order) within each translation group.',
    error: 'sort: expected relevance or canonical',
  }),
)
const qQuery = t.String({
  minLength: 1,
  maxLength: QUERY_MAX_LENGTH,
  description:
    'Keywords (all must match), "exact phrases" in double quotes, `prefix*` (at least 3 letters). Case, accents, Hebrew points and ' +
    'Arabic harakat are ignored.',
  error: `q: expected 1 to ${QUERY_MAX_LENGTH} characters`,
  examples: ['"only begotten" lov*'],
})

const searchShapes: ResponseShapes = {
  enveloped: SearchHitSchema,
  bare: SearchHitSchema,
  list: true,
  envelopedSiblings: { groups: SearchGroupsSchema },
  bareSiblings: { groups: SearchGroupsSchema },
}
const passageShapes: ResponseShapes = { enveloped: PassageSchemaA, bare: PassageSchemaB }
/** The daily verse: a passage with the UTC date it is the verse of. */
const dated = { date: t.String({ format: 'date', description: 'The UTC date (YYYY-MM-DD) the verse was chosen for.' }) }
const dailyShapes: ResponseShapes = {
  enveloped: t.Composite([PassageSchemaA, t.Object(dated)]),
  bare: t.Composite([PassageSchemaB, t.Object(dated)]),
}

/** The `language` filter of a query; `description` says what it filters. */
const languageQuery = (description: string) =>
  t.Optional(t.String({ pattern: '^[A-Za-z]{2,3}$', description, error: 'language: expected a 2- or 3-letter code' }))

const chapterNumber = (s: string) => {
  const n = Number(s)
  if (!Number.isInteger(n) || n < 1) throw invalid('chapter', 'chapters start at 1', 'path')
  return n
}

const translationList = (s: string | undefined) => {
  if (s === undefined) return undefined
  const ids = s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)
  if (!ids.length) throw invalid('translations', 'expected comma-separated translation ids', 'query')
  if (ids.length > MAX_TRANSLATIONS) throw invalid('translations', `at most ${MAX_TRANSLATIONS} ids`, 'query')
  return ids
}

// Stable: the service's answer cache hands the same result to every caller of the same question, and
// nothing changes it, so its hits' JSON is made once (~9 µs of a 50 µs cached answer in process).
const searchReply = ({ total, groups, hits }: SearchResult) => list(hits, { total, enveloped: { groups }, bare: { groups }, stable: true })

export const bibleRoutes = (service: BibleService, config: Config) =>
  new Elysia({ prefix: '/bible' })
    .use(requestContext(config.responseForm))
    .use(catalogueRoutes(service, config))
    .use(readingRoutes(service, config))

/** What there is to read: languages, translations, the verse of the day. */
function catalogueRoutes(service: BibleService, config: Config) {
  let bareLanguages: { count: number; languages: unknown[] } | undefined
  return new Elysia()
    .use(requestContext(config.responseForm))
    .get(
      '/languages',
      ({ form, query }) => {
        const languages = service.languages()
        const { limit, offset } = pageOf(query)
        // The whole list (the default page, 28 languages) is one object served to every caller: its JSON is made once.
        const whole = offset === 0 && limit >= languages.length
        const page = whole ? languages : languages.slice(offset, offset + limit)
        return form === 'enveloped'
          ? list(page, { total: languages.length, stable: whole })
          : one(whole ? (bareLanguages ??= { count: languages.length, languages }) : { count: languages.length, languages: page }, {
              stable: whole,
            })
      },
      {
        query: t.Object({ ...pageQuery(config.maxLimit), ...fieldsQuery }),
        detail: routeDetail({
          cache: 'reference',
          summary: 'Languages with at least one translation',
          description:
            'Form B: `{count, languages: [...]}` (the array is named `languages`, not `results`); Form A: `data` is the array. ' +
            '`count` / `total` is the number of languages before paging; `limit` and `offset` page the array.',
          response: {
            enveloped: t.Array(LanguageSchema),
            bare: LanguagesBareSchema,
            envelopedSiblings: { total: { type: 'integer', minimum: 0, description: 'Number of languages.' } },
          },
        }),
      },
    )
    .get(
      '/translations',
      ({ query }) => {
        const { total, items } = service.listTranslations(query.language, pageOf(query))
        return list(
          items.map((x) => presentTranslation(x, false)),
          { total },
        )
      },
      {
        query: t.Object({
          language: languageQuery('ISO 639-1 code; an unknown one gives an empty list.'),
          ...pageQuery(config.maxLimit),
          ...fieldsQuery,
        }),
        detail: routeDetail({
          cache: 'reference',
          summary: 'Translations, optionally of one language',
          response: { enveloped: TranslationSchema, bare: TranslationSchema, list: true },
        }),
      },
    )
    .get(
      '/translations/:translation_id',
      ({ params }) => one(presentTranslation(service.translation(params.translation_id, 'translation_id'), true)),
      {
        params: t.Object({ translation_id: translationParam }),
        query: t.Object(fieldsQuery),
        detail: routeDetail({
          cache: 'reference',
          summary: 'One translation with its book, chapter and verse counts',
          response: { enveloped: TranslationDetailSchema, bare: TranslationDetailSchema },
        }),
      },
    )
    .get(
      '/daily',
      ({ query, form }) => {
        const p = service.daily(
          { translation: query.translation, language: query.language, testament: query.testament, book: query.book },
          query.mode ?? 'daily',
        )
        return one(presentPassage(p, form, { date: p.date }))
      },
      {
        query: t.Object({
          translation: t.Optional(translationParam),
          mode: t.Optional(
            t.Union([t.Literal('daily'), t.Literal('random')], {
              description: '`daily` (default): one verse per UTC date and filters; `random`: a new verse per call.',
              error: 'mode: expected daily or random',
            }),
          ),
          language: languageQuery('ISO 639-1 code: the verse comes from one of its translations.'),
          testament: t.Optional(
            t.Union([t.Literal('OT'), t.Literal('NT'), t.Literal('DC'), t.Literal('ot'), t.Literal('nt'), t.Literal('dc')], {
              description: '`OT`, `NT` or `DC` (deuterocanonical).',
              error: 'testament: expected OT, NT or DC',
            }),
          ),
          book: t.Optional(bookParam),
          ...fieldsQuery,
        }),
        detail: routeDetail({
          summary: 'Verse of the day, or a random verse',
          description:
            'Default translation `kjv` (with `language`, one of its translations). Daily: the same verse for every caller on a UTC date ' +
            'with the same filters, spread uniformly over the filtered verses. A filter that leaves nothing is a 404. Both forms ' +
            'add `date` (UTC, YYYY-MM-DD).',
          response: dailyShapes,
        }),
      },
    )
}

/** Search, and the text itself: books, chapters, passages. */
function readingRoutes(service: BibleService, config: Config) {
  const search = (
    q: string,
    ids: string[] | undefined,
    sort: SearchSort | undefined,
    query: { limit?: number; offset?: number },
    request: Request,
    field = 'translations',
  ) => {
    const found = service.searchAnywhere(q, ids, sort ?? 'relevance', pageOf(query, SEARCH_DEFAULT_LIMIT), field, callerOf(request))
    return found instanceof Promise ? found.then(searchReply) : searchReply(found)
  }
  const searchPage = pageQuery(config.maxLimit, SEARCH_DEFAULT_LIMIT)
  return new Elysia()
    .use(requestContext(config.responseForm))
    .get(
      '/search',
      ({ query, request }) =>
        search(
          query.q,
          query.translation !== undefined ? [query.translation] : translationList(query.translations),
          query.sort,
          query,
          request,
          query.translation !== undefined ? 'translation' : 'translations',
        ),
      {
        query: t.Object({
          q: qQuery,
          translation: t.Optional(translationParam),
          translations: t.Optional(
            t.String({
              maxLength: 400,
              description:
                `Comma-separated translation ids (at most ${MAX_TRANSLATIONS}); default all. Ignored when \`translation\` is ` + `given.`,
            }),
          ),
          sort: sortQuery,
          ...searchPage,
          ...fieldsQuery,
        }),
        detail: routeDetail({
          cache: 'reference',
          summary: 'Full-text search, grouped by translation',
          description:
            'Hits are grouped by translation (catalogue order, or the order of `translations`), each group ranked by BM25 or in Bible ' +
            'order (`sort`); `groups` labels them with their counts, and `limit`/`offset` page the grouped sequence.',
          response: searchShapes,
        }),
      },
    )
    .get(
      '/:translation/search',
      ({ params, query, request }) => search(query.q, [params.translation], query.sort, query, request, 'translation'),
      {
        params: t.Object({ translation: translationParam }),
        query: t.Object({ q: qQuery, sort: sortQuery, ...searchPage, ...fieldsQuery }),
        detail: routeDetail({ cache: 'reference', summary: 'Full-text search in one translation', response: searchShapes }),
      },
    )
    .get(
      '/:translation/books',
      ({ params, query }) => {
        const { books } = service.booksOf(params.translation)
        const page = pageOf(query, config.maxLimit)
        return list(books.slice(page.offset, page.offset + page.limit).map(presentBook), {
          total: books.length,
        })
      },
      {
        params: t.Object({ translation: translationParam }),
        query: t.Object({ ...pageQuery(config.maxLimit, config.maxLimit), ...fieldsQuery }),
        detail: routeDetail({
          cache: 'reference',
          summary: 'Books of a translation, in canonical order',
          response: { enveloped: BookSchema, bare: BookSchema, list: true },
        }),
      },
    )
    .get('/:translation/books/:book', ({ params }) => one(presentBook(service.book(params.translation, params.book).book)), {
      params: t.Object({ translation: translationParam, book: bookParam }),
      query: t.Object(fieldsQuery),
      detail: routeDetail({
        cache: 'reference',
        summary: 'One book of a translation',
        response: { enveloped: BookSchema, bare: BookSchema },
      }),
    })
    .get(
      '/:translation/:book/chapters',
      ({ params, query }) => {
        const { chapters } = service.chapters(params.translation, params.book)
        const page = pageOf(query, config.maxLimit)
        return list(chapters.slice(page.offset, page.offset + page.limit), { total: chapters.length })
      },
      {
        params: t.Object({ translation: translationParam, book: bookParam }),
        query: t.Object({ ...pageQuery(config.maxLimit, config.maxLimit), ...fieldsQuery }),
        detail: routeDetail({
          cache: 'reference',
          summary: 'Chapters of a book with their verse counts',
          response: { enveloped: ChapterSchema, bare: ChapterSchema, list: true },
        }),
      },
    )
    .get(
      '/:translation/:book/:chapter',
      ({ params, form }) => one(presentPassage(service.chapter(params.translation, params.book, chapterNumber(params.chapter)), form)),
      {
        params: t.Object({ translation: translationParam, book: bookParam, chapter: chapterParam }),
        query: t.Object(fieldsQuery),
        detail: routeDetail({ cache: 'reference', summary: 'A whole chapter', response: passageShapes }),
      },
    )
    .get(
      '/:translation/:book/:chapter/:verse_ref',
      ({ params, form }) =>
        one(presentPassage(service.passage(params.translation, params.book, chapterNumber(params.chapter), params.verse_ref), form)),
      {
        params: t.Object({ translation: translationParam, book: bookParam, chapter: chapterParam, verse_ref: verseRefParam }),
        query: t.Object(fieldsQuery),
        detail: routeDetail({
          cache: 'reference',
          summary: 'A verse, a range or a list of verses of one chapter',
          response: passageShapes,
        }),
      },
    )
}
