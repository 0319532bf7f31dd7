/** Canonical Bible results -> the SPEC's Form A (enveloped) and Form B (bare) shapes, and their schemas. */
// Plain TypeBox: these schemas only document responses; Elysia's `t.Integer` would document a numeric string too.
import { type Static, Type as t } from '@sinclair/typebox'
import type { ResponseForm } from '../../http/reply/reply.ts'
import type { Passage, Translation, TranslationBook } from './service.ts'

// Each form's branch `satisfies` its own schema, so neither can take the other's shape.
type PassageA = Static<typeof PassageSchemaA>
type PassageB = Static<typeof PassageSchemaB>
type PassageForms = PassageA | PassageB

/** A translation in the list, or with its counts (`detail`: the single-translation response). */
export function presentTranslation(
  tr: Translation,
  detail: boolean,
): Static<typeof TranslationSchema> | Static<typeof TranslationDetailSchema> {
  return {
    id: tr.id,
    name: tr.name,
    language: tr.language,
    language_name: tr.languageName,
    year: tr.year,
    license: tr.license,
    ...(detail ? { books: tr.books, chapters: tr.chapters, verses: tr.verses, year_text: tr.yearText, source: tr.source } : {}),
  }
}

export const presentBook = (b: TranslationBook): Static<typeof BookSchema> => ({
  id: b.book.id,
  abbr: b.book.abbr,
  name: b.book.name,
  local_name: b.localName,
  testament: b.book.testament,
  chapters: b.chapters,
  verses: b.verses,
})

/**
 * A chapter or verses: Form B `{reference, translation, verses: [{number, text}]}`; Form A the verse
 * result (`translation_id`, `book`, `chapter`, `verse`, `reference`, with the translation's and the
 * language's names), `verse` the first verse and `verses` all of them when there are several.
 */
export function presentPassage(p: Passage, form: ResponseForm): PassageForms
/** `extra`: members a route adds after the passage's own (the daily verse's `date`). */
export function presentPassage<Extra extends object>(p: Passage, form: ResponseForm, extra: Extra): PassageForms & Extra
export function presentPassage(p: Passage, form: ResponseForm, extra: object = {}): PassageForms {
  if (form === 'bare')
    return {
      reference: p.reference,
      translation: p.translation.id,
      verses: p.verses.map((v) => ({ number: v.verse, text: v.text })),
      ...extra,
    } satisfies PassageB
  const verses = p.verses.map((v) => ({ verse: v.verse, text: v.text }))
  return {
    translation_id: p.translation.id,
    translation_name: p.translation.name,
    lang_code: p.translation.language,
    lang_name: p.translation.languageName,
    book: presentBook(p.book),
    chapter: p.chapter,
    ...(verses.length === 1 ? { verse: verses[0] } : { verse: verses[0] ?? null, verses }),
    reference: p.reference,
    ...extra,
  } satisfies PassageA
}

// Schemas for the OpenAPI document (documents() in http/endpoints/openapi.ts).
export const LanguageSchema = t.Object({
  code: t.String({ description: 'ISO 639-1 code.' }),
  name: t.String(),
  translations: t.Integer({ description: 'Translations in this language.' }),
})
export const LanguagesBareSchema = t.Object({ count: t.Integer(), languages: t.Array(LanguageSchema) })
export const SearchGroupsSchema = t.Array(
  t.Object({ translation: t.String(), name: t.String(), count: t.Integer({ description: 'Hits in this translation.' }) }),
  { description: 'Translations with hits, in result order.' },
)
const translationFields = {
  id: t.String({ description: 'Translation id (`kjv`, `synodal`, ...).' }),
  name: t.String(),
  language: t.String({ description: 'ISO 639-1 code.' }),
  language_name: t.String(),
  year: t.Union([t.Integer(), t.Null()], { description: 'First year the upstream states (`1611/1769` -> 1611); null when unknown.' }),
  license: t.String(),
}
export const TranslationSchema = t.Object(translationFields)
export const TranslationDetailSchema = t.Object({
  ...translationFields,
  books: t.Integer(),
  chapters: t.Integer(),
  verses: t.Integer(),
  year_text: t.String({ description: 'The year as the upstream states it.' }),
  source: t.String({ description: 'Upstream file and version.' }),
})
export const BookSchema = t.Object({
  id: t.Integer({ description: 'Canonical order: 1-66 the Protestant canon, 67+ deuterocanonical books.' }),
  abbr: t.String({ description: 'USFX/Paratext code (GEN, 1JN, TOB).' }),
  name: t.String({ description: 'English name.' }),
  local_name: t.String({ description: "Name in the translation's language (the English name where none is known)." }),
  testament: t.Union([t.Literal('OT'), t.Literal('NT'), t.Literal('DC')]),
  chapters: t.Integer(),
  verses: t.Integer(),
})
export const ChapterSchema = t.Object({
  chapter: t.Integer(),
  verses: t.Integer({ description: 'Verses of the chapter in this translation.' }),
})
const verseA = t.Object({ verse: t.Integer(), text: t.String() })
export const PassageSchemaA = t.Object({
  translation_id: t.String(),
  translation_name: t.String(),
  lang_code: t.String(),
  lang_name: t.String(),
  book: BookSchema,
  chapter: t.Integer(),
  verse: t.Union([verseA, t.Null()], { description: 'The (first) verse.' }),
  verses: t.Optional(t.Array(verseA, { description: 'Every verse, when there are several.' })),
  reference: t.String({ description: '`John 3:16`, `John 3:16-18`, `John 3`.' }),
})
export const PassageSchemaB = t.Object({
  reference: t.String(),
  translation: t.String(),
  verses: t.Array(t.Object({ number: t.Integer(), text: t.String() })),
})
export const SearchHitSchema = t.Object({
  translation: t.String(),
  reference: t.String(),
  book: t.String({ description: 'USFX code.' }),
  chapter: t.Integer(),
  verse: t.Integer(),
  text: t.String(),
  snippet: t.String({
    description: 'The text, HTML-escaped, matches wrapped in `<mark>` and `</mark>`; a long verse is cut around its first match (`…`).',
  }),
})
