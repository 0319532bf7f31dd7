/**
 * The three non-SWORD formats, each read into the same verse records: USFX XML (Chinese Union), USFM
 * (World English Bible) and STEPBible tagged text (Arabic Van Dyck). Book codes are USFX/Paratext codes
 * (STEPBible writes them in title case: `1Co`, `Jhn`).
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import { usfmTitle } from './book-names.ts'
import { stripUsfm, stripUsfx } from './markup.ts'

export interface SourceVerse {
  /** USFX code (upper case). */
  code: string
  chapter: number
  verse: number
  text: string
}

/** A USFX file's text, as published or gzipped (the mirror's form). */
export function usfxText(path: string): string {
  const bytes = readFileSync(path)
  return (bytes[0] === 0x1f && bytes[1] === 0x8b ? gunzipSync(bytes) : bytes).toString('utf8')
}

export const readUsfx = (path: string): SourceVerse[] => readUsfxText(usfxText(path))

/** `<book id="GEN">… <c id="1"/> <v id="1"/>text<ve/>`. */
export function readUsfxText(xml: string): SourceVerse[] {
  const out: SourceVerse[] = []
  for (const book of xml.matchAll(/<book id="([0-9A-Z]{3})"[^>]*>([\s\S]*?)<\/book>/g)) {
    const code = book[1]!
    let chapter = 0
    for (const m of book[2]!.matchAll(/<c id="(\d+)"\s*\/>|<v id="(\d+)[^"]*"\s*\/>([\s\S]*?)(?:<ve\s*\/>|(?=<v |<c |$))/g)) {
      if (m[1]) chapter = Number(m[1])
      else out.push({ code, chapter, verse: Number(m[2]), text: stripUsfx(m[3]!) })
    }
  }
  return out
}

/** Paragraph-level markers whose line is not verse text (titles, headings, introductions, remarks). */
const NOT_TEXT = new RegExp(
  '^\\\\(id|ide|h|toc\\d?|toca\\d?|mt\\d?|mte\\d?|ms\\d?|mr|s\\d?|sr|r|d|sp|cl|cp|cd|ip\\w*|is\\d?|io\\d?|iot|' +
    'imt\\d?|ie|ili\\d?|iq\\d?|im\\w*|ipr|rem|sts|usfm|periph|restore)\\b',
)

/** One USFM file per book; a verse runs from its `\v` to the next `\v`, `\c` or heading. */
export function readUsfmBook(text: string): SourceVerse[] {
  const out: SourceVerse[] = []
  const start = text.indexOf('\\id ')
  if (start < 0) return out
  const lines = text.slice(start).split(/\r?\n/)
  const code = /^\\id ([0-9A-Z]{3})/.exec(lines[0]!)?.[1]
  if (!code) return out
  let chapter = 0
  let current: { verse: number; raw: string[] } | null = null
  const flush = () => {
    if (current) out.push({ code, chapter, verse: current.verse, text: stripUsfm(current.raw.join(' ')) })
    current = null
  }
  // Split further at inline \c and \v so that a verse that starts mid-line is found.
  for (const line of lines.flatMap((l) => l.split(/(?=\\[cv]\s)/))) {
    const c = /^\\c\s+(\d+)/.exec(line)
    if (c) {
      flush()
      chapter = Number(c[1])
      continue
    }
    const v = /^\\v\s+(\d+)(?:[-,]\d+)*[a-z]?\s?([\s\S]*)$/.exec(line)
    if (v) {
      flush()
      current = { verse: Number(v[1]), raw: [v[2]!] }
      continue
    }
    if (NOT_TEXT.test(line)) {
      flush()
      continue
    }
    current?.raw.push(line)
  }
  flush()
  return out
}

const usfmFiles = (dir: string) =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.(usfm|sfm)$/i.test(e.name))
    .map((e) => join(e.parentPath, e.name))
    .sort()

export const readUsfmFolder = (dir: string): SourceVerse[] => readUsfmBooks(dir).flatMap((b) => b.verses)

/** Each USFM file of a folder: its book code, its title (usfmTitle) and its verses. */
export function readUsfmBooks(dir: string): { code: string | undefined; title: string | undefined; verses: SourceVerse[] }[] {
  return usfmFiles(dir).map((f) => {
    const text = readFileSync(f, 'utf8')
    const book = text.slice(Math.max(0, text.indexOf('\\id ')))
    return { code: /^\\id ([0-9A-Z]{3})/.exec(book)?.[1], title: usfmTitle(book), verses: readUsfmBook(text) }
  })
}

/**
 * STEPBible tagged text: per verse a `Book.C.V` line, `========>>>`, a header row, one row per word
 * (column 2 the Arabic word or phrase, empty where the original word has no counterpart), `<<<========`.
 */
export function readStepBible(dir: string): SourceVerse[] {
  const files = readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.txt'))
    .map((e) => join(e.parentPath, e.name))
    .sort()
  const out: SourceVerse[] = []
  for (const f of files) {
    const lines = readFileSync(f, 'utf8').split(/\r?\n/)
    for (let i = 0; i < lines.length; i++) {
      if (lines[i] !== '========>>>') continue
      const ref = /^([0-9A-Za-z]{3})\.(\d+)\.(\d+)$/.exec(lines[i - 1]?.trim() ?? '')
      if (!ref) throw new Error(`${f}:${i}: verse block without a Book.C.V line`)
      const words: string[] = []
      let j = i + 2 // skip the header row
      for (; j < lines.length && lines[j] !== '<<<========'; j++) {
        const word = lines[j]!.split('\t')[1]?.trim()
        if (word) words.push(word)
      }
      out.push({ code: ref[1]!.toUpperCase(), chapter: Number(ref[2]), verse: Number(ref[3]), text: words.join(' ').replace(/\s+/g, ' ') })
      i = j
    }
  }
  return out
}
