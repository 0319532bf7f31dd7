/**
 * Verse markup -> clean verse text. OSIS and GBF (SWORD modules), USFM and USFX carry notes,
 * cross-references, titles, Strong's numbers and paragraph marks around the words. Notes (with the
 * references inside them) and section titles are dropped with their content; every other element keeps
 * its text. Where a dropped note stood before a word, a space keeps the words apart (`finish`); spaces
 * are collapsed and trimmed, so the text has no tags, no doubled spaces and no note text.
 */

/** Stand-in for a dropped element or break, resolved by `finish`. */
const GAP = '\u0000'

const ENTITIES = new Map([
  ['amp', '&'],
  ['lt', '<'],
  ['gt', '>'],
  ['quot', '"'],
  ['apos', "'"],
  ['nbsp', ' '],
])

function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-zA-Z]{2,6});/g, (all, e: string) => {
    if (e[0] === '#') {
      const code = e[1] === 'x' || e[1] === 'X' ? Number.parseInt(e.slice(2), 16) : Number.parseInt(e.slice(1), 10)
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : all
    }
    return ENTITIES.get(e) ?? all
  })
}

/**
 * A gap (a dropped note) becomes a space where it stood between a word, or a word's closing punctuation,
 * and the next word (`de<note/>l’orient`, `suffering.<note/>They`), and nothing before punctuation
 * (`vide<note/>,`) or after an opening bracket or quote; never between Chinese or Japanese characters,
 * which are written without spaces. White space is collapsed and trimmed.
 */
const GAP_BETWEEN = /([^\s\p{Ps}\p{Pi}\u0000]) ?\u0000[\u0000 ]*(?=[\p{L}\p{N}\p{Ps}\p{Pi}])/gu
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\u3000-\u303F\uFF00-\uFFEF]/u

function finish(s: string): string {
  return s
    .replace(/\s+/g, ' ')
    .replace(GAP_BETWEEN, (gap: string, before: string, at: number, all: string) => {
      const next = all[at + gap.length] ?? ''
      const spaced = UNSPACED.test(before) || UNSPACED.test(next) ? gap.includes(' ') : true
      return spaced ? before + ' ' : before
    })
    .replace(/\u0000/g, '')
    .replace(/ {2,}/g, ' ')
    .trim()
}

/**
 * OSIS elements whose content is not verse text: notes (footnotes, study notes, cross-references, with
 * the `<rdg>`, `<catchWord>` and `<reference>` inside them) and titles (section headings), except
 * canonical titles: a Psalm superscription (`<title canonical="true" type="psalm">`) is scripture, and
 * in the German and Calvin versifications it is verse 1 itself. Neither element nests in these modules.
 * KJV's `<milestone marker="¶"/>` paragraph signs go with the tags.
 */
const OSIS_NOTE = /<note\b[^>]*?(?<!\/)>[\s\S]*?<\/note>/g
const OSIS_TITLE = /<title\b([^>]*?)(?<!\/)>([\s\S]*?)<\/title>/g
/** Elements that separate words (paragraphs, line breaks, line groups). */
const OSIS_BREAK = /<\/?(div|lb|l|lg|p|milestone|br|chapter|verse|q\b[^>]*\bsID)\b[^>]*>/g

function osisPass(raw: string): string {
  return (
    raw
      // Notes first: a canonical title may hold one (Darby's Psalm 90 title, fifteen Malagasy ones).
      .replace(OSIS_NOTE, GAP)
      .replace(OSIS_TITLE, (_, attributes: string, content: string) => (/canonical="true"/.test(attributes) ? ` ${content} ` : GAP))
      .replace(OSIS_BREAK, (tag) => (/^<\/?(div|lb|lg|l|p|br)\b/.test(tag) ? ' ' : GAP))
      .replace(/<[^>]*>/g, '')
  )
}

/**
 * A few modules carry markup escaped as text (`&lt;note&gt;…&lt;/note&gt;` in the Synodal, GBF
 * `&lt;FO&gt;` in the Finnish 1938): once decoded it is markup, and is stripped like the rest.
 */
const ESCAPED_MARKUP = new RegExp(
  '<\\/?(note|title|reference|rdg|catchWord|hi|w|transChange|divineName|q|l|lg|lb|div|milestone|seg|foreign|' +
    'F[IOR]|f[ior]|R[Ff]|C[ML]|T[Ss])\\b[^>]*>',
)

export function stripOsis(raw: string): string {
  let s = decodeEntities(osisPass(raw))
  if (ESCAPED_MARKUP.test(s)) s = osisPass(s)
  return finish(s)
}

/**
 * GBF: `<RF>note<Rf>` footnotes and `<TS>title<Ts>` titles dropped with their content, `<CM>`/`<CL>`
 * paragraph and line marks are breaks, every other token (`<FI>`, `<Fi>`, `<WH1234>`) goes.
 */
export function stripGbf(raw: string): string {
  const s = raw
    .replace(/<RF>[\s\S]*?<Rf>/g, GAP)
    .replace(/<TS>[\s\S]*?<Ts>/g, GAP)
    .replace(/<C[ML]>/g, ' ')
    .replace(/<[^>]*>/g, '')
  return finish(decodeEntities(s))
}

/**
 * USFM inside a verse: footnotes (`\f … \f*`, `\fe … \fe*`), cross-references (`\x … \x*`) dropped
 * with content; character markers (`\w word|strong="H1"\w*`, `\add`, `\nd`, `\wj`…) keep their text
 * without attributes; paragraph markers are breaks.
 */
export function stripUsfm(raw: string): string {
  const s = raw
    .replace(/\\(f|fe|x|ef|ex)\s[\s\S]*?\\\1\*/g, GAP)
    .replace(/\|[^\\]*?(?=\\\+?[a-z0-9]+\*)/g, '') // attributes of \w word|lemma="…"\w*
    .replace(/\\\+?[a-z0-9]+\*/g, '') // closing markers
    .replace(/\\(p|m|pi\d?|mi|q\d?|qc|qr|qm\d?|li\d?|b|nb|pc|pm|pmo|pmc|pmr|ph\d?|cls|tr|th\d?|thr\d?|tc\d?|tcr\d?)(?=\s|$)/g, ' ')
    .replace(/\\\+?[a-z0-9]+\s?/g, '') // opening character markers
  return finish(s)
}

/** USFX: `<f>` notes, `<x>` references and titles dropped with content, other tags go. */
export function stripUsfx(raw: string): string {
  const s = raw
    .replace(/<(f|x|fe|s|d|h|rem|ref|cl)\b[^>]*?(?<!\/)>[\s\S]*?<\/\1>/g, GAP)
    .replace(/<(p|q|b|li|m|pi|qc|lg|l)\b[^>]*\/?>/g, ' ')
    .replace(/<[^>]*>/g, '')
  return finish(decodeEntities(s))
}
