/**
 * SWORD versification tables (`canon*.h` from libsword, mirrored under `bible/versification/`): the
 * book order, chapters per book and verses per chapter a zText module's verse slots follow. Parsed from
 * the C headers at build time, so the tables are SWORD's own, not a copy kept here.
 *
 * One versification the mirror lacks, `Calvin` (Hungarian Károli), is SWORD's KJV table with a few
 * chapters counted differently; those differences are listed below as facts (SWORD 1.9 canon_calvin.h),
 * and the test suite checks them against libsword's own reading of the module (mod2imp).
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

export interface VersificationBook {
  /** OSIS book id (`Gen`, `1Macc`). */
  osis: string
  /** Verses per chapter. */
  chapters: number[]
}

export interface Versification {
  name: string
  ot: VersificationBook[]
  nt: VersificationBook[]
}

/** conf `Versification=` value -> header file and its array suffix. */
const FILES = new Map<string, { file: string; suffix: string }>([
  ['KJV', { file: 'canon.h', suffix: '' }],
  ['KJVA', { file: 'canon_kjva.h', suffix: '_kjva' }],
  ['NRSV', { file: 'canon_nrsv.h', suffix: '_nrsv' }],
  ['NRSVA', { file: 'canon_nrsva.h', suffix: '_nrsva' }],
  ['German', { file: 'canon_german.h', suffix: '_german' }],
  ['Luther', { file: 'canon_luther.h', suffix: '_luther' }],
  ['Leningrad', { file: 'canon_leningrad.h', suffix: '_leningrad' }],
  ['MT', { file: 'canon_mt.h', suffix: '_mt' }],
  ['Synodal', { file: 'canon_synodal.h', suffix: '_synodal' }],
  ['SynodalProt', { file: 'canon_synodalprot.h', suffix: '_synodalProt' }],
  ['Vulg', { file: 'canon_vulg.h', suffix: '_vulg' }],
  ['LXX', { file: 'canon_lxx.h', suffix: '_lxx' }],
  ['Orthodox', { file: 'canon_orthodox.h', suffix: '_orthodox' }],
])

/** Calvin = KJV except these chapters (book, chapter -> verses). */
const CALVIN_CHANGES: [string, number, number][] = [
  ['Num', 12, 15],
  ['Num', 13, 34],
  ['Num', 29, 39],
  ['Num', 30, 17],
  ['1Sam', 20, 43],
  ['1Sam', 23, 28],
  ['1Sam', 24, 23],
  ['1Kgs', 22, 54],
  ['Job', 38, 38],
  ['Job', 39, 38],
  ['Job', 40, 28],
  ['Job', 41, 25],
  ['Ps', 3, 9],
  ['Ps', 4, 9],
  ['Ps', 5, 13],
  ['Ps', 6, 11],
  ['Ps', 7, 18],
  ['Ps', 8, 10],
  ['Ps', 9, 21],
  ['Ps', 12, 9],
  ['Ps', 18, 51],
  ['Ps', 19, 15],
  ['Ps', 20, 10],
  ['Ps', 21, 14],
  ['Ps', 22, 32],
  ['Ps', 30, 13],
  ['Ps', 31, 25],
  ['Ps', 34, 23],
  ['Ps', 36, 13],
  ['Ps', 38, 23],
  ['Ps', 39, 14],
  ['Ps', 40, 18],
  ['Ps', 41, 14],
  ['Ps', 42, 12],
  ['Ps', 44, 27],
  ['Ps', 45, 18],
  ['Ps', 46, 12],
  ['Ps', 47, 10],
  ['Ps', 48, 15],
  ['Ps', 49, 21],
  ['Ps', 51, 21],
  ['Ps', 52, 11],
  ['Ps', 53, 7],
  ['Ps', 54, 9],
  ['Ps', 55, 24],
  ['Ps', 56, 14],
  ['Ps', 57, 12],
  ['Ps', 58, 12],
  ['Ps', 59, 18],
  ['Ps', 60, 14],
  ['Ps', 61, 9],
  ['Ps', 62, 13],
  ['Ps', 63, 12],
  ['Ps', 64, 11],
  ['Ps', 65, 14],
  ['Ps', 67, 8],
  ['Ps', 68, 36],
  ['Ps', 69, 37],
  ['Ps', 70, 6],
  ['Ps', 75, 11],
  ['Ps', 76, 13],
  ['Ps', 77, 21],
  ['Ps', 80, 20],
  ['Ps', 81, 17],
  ['Ps', 83, 19],
  ['Ps', 84, 13],
  ['Ps', 85, 14],
  ['Ps', 88, 19],
  ['Ps', 89, 53],
  ['Ps', 92, 16],
  ['Ps', 102, 29],
  ['Ps', 108, 14],
  ['Ps', 140, 14],
  ['Ps', 142, 8],
  ['Eccl', 11, 8],
  ['Eccl', 12, 16],
  ['Isa', 8, 23],
  ['Isa', 9, 20],
  ['Ezek', 20, 44],
  ['Ezek', 21, 37],
  ['Hos', 11, 11],
  ['Hos', 12, 15],
  ['Jonah', 1, 16],
  ['Jonah', 2, 11],
  ['Mark', 9, 51],
  ['Mark', 10, 53],
  ['Acts', 19, 40],
  ['Acts', 24, 28],
  ['Rom', 3, 30],
  ['Rom', 8, 38],
  ['1Cor', 3, 22],
  ['2Cor', 13, 13],
  ['3John', 1, 15],
  ['Rev', 12, 18],
]

interface SBook {
  osis: string
  chapters: number
}

function arrayBody(source: string, name: string): string | undefined {
  const start = source.indexOf(`${name}[] = {`)
  if (start < 0) return undefined
  const end = source.indexOf('};', start)
  return source.slice(start, end)
}

function parseBooks(body: string): SBook[] {
  const books: SBook[] = []
  for (const m of body.matchAll(/\{"[^"]*", "([^"]*)", "[^"]*", (\d+)\}/g))
    if (Number(m[2]) > 0) books.push({ osis: m[1]!, chapters: Number(m[2]) })
  return books
}

const parseInts = (body: string) =>
  body
    .replace(/\/\/[^\n]*/g, '')
    .replace(/^[^{]*\{/, '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map(Number)

/** Reads one versification from the mirrored headers (`dir` = `bible/versification`). */
export function loadVersification(dir: string, name: string): Versification {
  if (name === 'Calvin') {
    const kjv = loadVersification(dir, 'KJV')
    const books = [...kjv.ot, ...kjv.nt].map((b) => ({ osis: b.osis, chapters: [...b.chapters] }))
    for (const [osis, chapter, verses] of CALVIN_CHANGES) books.find((b) => b.osis === osis)!.chapters[chapter - 1] = verses
    return { name, ot: books.slice(0, kjv.ot.length), nt: books.slice(kjv.ot.length) }
  }
  const entry = FILES.get(name)
  if (!entry) throw new Error(`versification ${name} is not known (known: ${[...FILES.keys(), 'Calvin'].join(', ')})`)
  const path = join(dir, entry.file)
  if (!existsSync(path)) throw new Error(`${path}: versification table missing`)
  const source = readFileSync(path, 'utf8')
  const base = readFileSync(join(dir, 'canon.h'), 'utf8')
  const ot = parseBooks(arrayBody(source, `otbooks${entry.suffix}`) ?? arrayBody(base, 'otbooks')!)
  // Leningrad and MT are Old Testament only (SWORD registers them with ntbooks_null).
  const otOnly = name === 'Leningrad' || name === 'MT'
  const nt = otOnly ? [] : parseBooks(arrayBody(source, `ntbooks${entry.suffix}`) ?? arrayBody(base, 'ntbooks')!)
  const counts = parseInts(arrayBody(source, `vm${entry.suffix}`)!)
  let i = 0
  const take = (b: SBook): VersificationBook => ({ osis: b.osis, chapters: Array.from({ length: b.chapters }, () => counts[i++]!) })
  const out = { name, ot: ot.map(take), nt: nt.map(take) }
  if (i !== counts.length) throw new Error(`${path}: ${counts.length} chapter counts for ${i} chapters`)
  return out
}

/** A verse slot of a testament file: its reference. */
export interface Slot {
  osis: string
  chapter: number
  verse: number
}

/**
 * Verse slots of one testament in SWORD's layout: slot 0 module heading, 1 testament heading, then per
 * book a book-heading slot and per chapter a chapter-heading slot followed by its verses.
 */
export function slotsOf(books: VersificationBook[]): (Slot | null)[] {
  const slots: (Slot | null)[] = [null, null]
  for (const b of books) {
    slots.push(null)
    b.chapters.forEach((n, c) => {
      slots.push(null)
      for (let v = 1; v <= n; v++) slots.push({ osis: b.osis, chapter: c + 1, verse: v })
    })
  }
  return slots
}
