/**
 * Book names per translation, merged at build time from two kinds of upstream: SWORD's locale files
 * (`locales.d/<lang>-utf8.conf` of libsword-common: `[Text]` maps SWORD's English book names to the
 * language's names), keyed to OSIS ids through the `{"Genesis", "Gen", "Gen", 50}` rows of SWORD's
 * canon*.h headers; and the titles a Bible file carries for its own books (USFX `<h>`, USFM `\toc2`,
 * a SWORD module's `<title type="main">`). A translation's own titles come first, then its locale.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

/** OSIS id -> name. */
export type NameList = Map<string, string>

/** SWORD's English book names -> OSIS ids, from every canon*.h table (the locales are keyed by the former). */
export function osisByEnglishName(versificationDir: string): Map<string, string> {
  const out = new Map<string, string>()
  for (const file of readdirSync(versificationDir)
    .filter((f) => /^canon.*\.h$/.test(f))
    .sort()) {
    for (const m of readFileSync(join(versificationDir, file), 'utf8').matchAll(/\{"([^"]+)", "([^"]+)", "[^"]*", \d+\}/g))
      if (!out.has(m[1]!)) out.set(m[1]!, m[2]!)
  }
  return out
}

/** `pt_BR-utf8.conf` -> `pt-BR`. */
const languageOfLocale = (file: string) => file.replace(/-utf8\.conf$/, '').replace(/_/g, '-')

/** Every `<lang>-utf8.conf` of a SWORD locales folder -> language -> OSIS id -> name. */
export function readSwordLocales(localesDir: string, versificationDir: string): Map<string, NameList> {
  const osis = osisByEnglishName(versificationDir)
  const out = new Map<string, NameList>()
  for (const file of readdirSync(localesDir)
    .filter((f) => f.endsWith('-utf8.conf'))
    .sort()) {
    const names: NameList = new Map()
    let section = ''
    for (const line of readFileSync(join(localesDir, file), 'utf8').split(/\r?\n/)) {
      const head = /^\[(.+)\]\s*$/.exec(line)
      if (head) section = head[1]!
      const kv = section === 'Text' ? /^([^#=][^=]*)=(.*)$/.exec(line) : null
      const id = kv && osis.get(kv[1]!.trim())
      const name = kv?.[2]?.trim()
      if (id && name && !names.has(id)) names.set(id, name)
    }
    out.set(languageOfLocale(file), names)
  }
  return out
}

/** Titles of a USFX file: `<book id="GEN"><h>創世紀</h>` -> USFX code -> title. */
export function usfxTitles(xml: string): Map<string, string> {
  const out = new Map<string, string>()
  for (const m of xml.matchAll(/<book id="([0-9A-Z]{3})"[^>]*>\s*<h>([^<]*)<\/h>/g)) if (m[2]!.trim()) out.set(m[1]!, m[2]!.trim())
  return out
}

/** Title of one USFM book: `\toc2` (the short title), else `\h`. */
export function usfmTitle(text: string): string | undefined {
  const short = /^\\toc2 (.+)$/m.exec(text)?.[1]?.trim()
  return short || /^\\h (.+)$/m.exec(text)?.[1]?.trim() || undefined
}

/** Title in a SWORD module's book heading slot: `<title type="main">Genesisy</title>`. */
export function swordBookTitle(raw: string): string | undefined {
  const m = /<title\b[^>]*\btype="main"[^>]*>([^<]*)<\/title>/.exec(raw)
  return m?.[1]?.trim() || undefined
}
