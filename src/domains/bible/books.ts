/**
 * The book catalogue every translation shares: `id` in canonical order (the 66 books of the Protestant
 * canon 1-66, then the deuterocanonical and apocryphal books), the USFX/Paratext code, the English name,
 * the testament, and the spellings a `{book}` path segment accepts. The sources name books by OSIS id
 * (SWORD) or by USFX code (USFX, USFM, STEPBible uses its own three-letter names); each maps here.
 */

export type Testament = 'OT' | 'NT' | 'DC'

export interface BookInfo {
  id: number
  /** USFX/Paratext code. */
  abbr: string
  name: string
  testament: Testament
  /** OSIS ids that name this book in SWORD modules. */
  osis: string[]
  /** Further accepted spellings (lower case, hyphens for spaces). */
  aliases: string[]
}

// [USFX code, English name, OSIS ids, aliases]
const OT: [string, string, string[], string[]][] = [
  ['GEN', 'Genesis', ['Gen'], ['gn', 'ge']],
  ['EXO', 'Exodus', ['Exod'], ['ex', 'exod']],
  ['LEV', 'Leviticus', ['Lev'], ['lv', 'le']],
  ['NUM', 'Numbers', ['Num'], ['nm', 'nu', 'nb']],
  ['DEU', 'Deuteronomy', ['Deut'], ['dt', 'deut']],
  ['JOS', 'Joshua', ['Josh'], ['josh', 'jsh']],
  ['JDG', 'Judges', ['Judg'], ['judg', 'jg', 'jdgs']],
  ['RUT', 'Ruth', ['Ruth'], ['ru', 'rth']],
  ['1SA', '1 Samuel', ['1Sam'], ['1sam', '1sm', '1s', 'i-samuel', 'first-samuel']],
  ['2SA', '2 Samuel', ['2Sam'], ['2sam', '2sm', '2s', 'ii-samuel', 'second-samuel']],
  ['1KI', '1 Kings', ['1Kgs'], ['1kgs', '1kg', '1k', 'i-kings', 'first-kings']],
  ['2KI', '2 Kings', ['2Kgs'], ['2kgs', '2kg', '2k', 'ii-kings', 'second-kings']],
  ['1CH', '1 Chronicles', ['1Chr'], ['1chr', '1chron', 'i-chronicles', 'first-chronicles']],
  ['2CH', '2 Chronicles', ['2Chr'], ['2chr', '2chron', 'ii-chronicles', 'second-chronicles']],
  ['EZR', 'Ezra', ['Ezra'], ['ezr']],
  ['NEH', 'Nehemiah', ['Neh'], ['ne']],
  ['EST', 'Esther', ['Esth'], ['esth', 'es']],
  ['JOB', 'Job', ['Job'], ['jb']],
  ['PSA', 'Psalms', ['Ps'], ['ps', 'psalm', 'pss', 'psm', 'pslm']],
  ['PRO', 'Proverbs', ['Prov'], ['prov', 'pr', 'prv']],
  ['ECC', 'Ecclesiastes', ['Eccl'], ['eccl', 'eccles', 'ec', 'qoh', 'qoheleth']],
  ['SNG', 'Song of Solomon', ['Song'], ['song', 'sos', 'song-of-songs', 'canticles', 'cant', 'ss']],
  ['ISA', 'Isaiah', ['Isa'], ['is']],
  ['JER', 'Jeremiah', ['Jer'], ['je', 'jr']],
  ['LAM', 'Lamentations', ['Lam'], ['la']],
  ['EZK', 'Ezekiel', ['Ezek'], ['ezek', 'eze', 'ezk']],
  ['DAN', 'Daniel', ['Dan'], ['dn', 'da']],
  ['HOS', 'Hosea', ['Hos'], ['ho']],
  ['JOL', 'Joel', ['Joel'], ['jl', 'joe']],
  ['AMO', 'Amos', ['Amos'], ['am']],
  ['OBA', 'Obadiah', ['Obad'], ['obad', 'ob']],
  ['JON', 'Jonah', ['Jonah'], ['jnh', 'jonah']],
  ['MIC', 'Micah', ['Mic'], ['mi']],
  ['NAM', 'Nahum', ['Nah'], ['nah', 'na']],
  ['HAB', 'Habakkuk', ['Hab'], ['hb']],
  ['ZEP', 'Zephaniah', ['Zeph'], ['zeph', 'zp']],
  ['HAG', 'Haggai', ['Hag'], ['hg']],
  ['ZEC', 'Zechariah', ['Zech'], ['zech', 'zc']],
  ['MAL', 'Malachi', ['Mal'], ['ml']],
]
const NT: [string, string, string[], string[]][] = [
  ['MAT', 'Matthew', ['Matt'], ['matt', 'mt']],
  ['MRK', 'Mark', ['Mark'], ['mk', 'mar', 'mr']],
  ['LUK', 'Luke', ['Luke'], ['lk', 'lu']],
  ['JHN', 'John', ['John'], ['jn', 'joh', 'jhn']],
  ['ACT', 'Acts', ['Acts'], ['ac', 'acts-of-the-apostles']],
  ['ROM', 'Romans', ['Rom'], ['ro', 'rm']],
  ['1CO', '1 Corinthians', ['1Cor'], ['1cor', 'i-corinthians', 'first-corinthians']],
  ['2CO', '2 Corinthians', ['2Cor'], ['2cor', 'ii-corinthians', 'second-corinthians']],
  ['GAL', 'Galatians', ['Gal'], ['ga']],
  ['EPH', 'Ephesians', ['Eph'], ['ephes']],
  ['PHP', 'Philippians', ['Phil'], ['phil', 'php', 'pp']],
  ['COL', 'Colossians', ['Col'], ['co']],
  ['1TH', '1 Thessalonians', ['1Thess'], ['1thess', '1thes', 'i-thessalonians', 'first-thessalonians']],
  ['2TH', '2 Thessalonians', ['2Thess'], ['2thess', '2thes', 'ii-thessalonians', 'second-thessalonians']],
  ['1TI', '1 Timothy', ['1Tim'], ['1tim', '1tm', 'i-timothy', 'first-timothy']],
  ['2TI', '2 Timothy', ['2Tim'], ['2tim', '2tm', 'ii-timothy', 'second-timothy']],
  ['TIT', 'Titus', ['Titus'], ['ti']],
  ['PHM', 'Philemon', ['Phlm'], ['phlm', 'philem', 'pm']],
  ['HEB', 'Hebrews', ['Heb'], ['he']],
  ['JAS', 'James', ['Jas'], ['jm', 'jam']],
  ['1PE', '1 Peter', ['1Pet'], ['1pet', '1pt', '1p', 'i-peter', 'first-peter']],
  ['2PE', '2 Peter', ['2Pet'], ['2pet', '2pt', '2p', 'ii-peter', 'second-peter']],
  ['1JN', '1 John', ['1John'], ['1john', '1jn', '1jo', 'i-john', 'first-john']],
  ['2JN', '2 John', ['2John'], ['2john', '2jn', '2jo', 'ii-john', 'second-john']],
  ['3JN', '3 John', ['3John'], ['3john', '3jn', '3jo', 'iii-john', 'third-john']],
  ['JUD', 'Jude', ['Jude'], ['jud', 'jd']],
  ['REV', 'Revelation', ['Rev'], ['re', 'rv', 'revelations', 'apocalypse', 'revelation-of-john']],
]
const DC: [string, string, string[], string[]][] = [
  ['TOB', 'Tobit', ['Tob'], ['tb']],
  ['JDT', 'Judith', ['Jdt'], ['jth']],
  ['ESG', 'Esther (Greek)', ['EsthGr', 'AddEsth'], ['esthgr', 'addesth', 'additions-to-esther', 'greek-esther']],
  ['WIS', 'Wisdom of Solomon', ['Wis'], ['wisdom', 'ws']],
  ['SIR', 'Sirach', ['Sir'], ['ecclesiasticus', 'ecclus']],
  ['BAR', 'Baruch', ['Bar'], ['ba']],
  ['LJE', 'Letter of Jeremiah', ['EpJer'], ['epjer', 'epistle-of-jeremiah', 'epistle-of-jeremy']],
  ['S3Y', 'Song of the Three Young Men', ['PrAzar'], ['prazar', 'prayer-of-azariah', 'song-of-the-three-holy-children']],
  ['SUS', 'Susanna', ['Sus'], []],
  ['BEL', 'Bel and the Dragon', ['Bel'], ['bel']],
  ['1MA', '1 Maccabees', ['1Macc'], ['1macc', '1mac', 'i-maccabees', 'first-maccabees']],
  ['2MA', '2 Maccabees', ['2Macc'], ['2macc', '2mac', 'ii-maccabees', 'second-maccabees']],
  ['3MA', '3 Maccabees', ['3Macc'], ['3macc', '3mac', 'iii-maccabees', 'third-maccabees']],
  ['4MA', '4 Maccabees', ['4Macc'], ['4macc', '4mac', 'iv-maccabees', 'fourth-maccabees']],
  ['1ES', '1 Esdras', ['1Esd'], ['1esd', 'i-esdras', 'first-esdras']],
  ['2ES', '2 Esdras', ['2Esd'], ['2esd', 'ii-esdras', 'second-esdras']],
  ['MAN', 'Prayer of Manasseh', ['PrMan'], ['prman', 'prayer-of-manasses', 'manasseh']],
  ['PS2', 'Psalm 151', ['AddPs'], ['addps', 'ps151']],
  ['DAG', 'Daniel (Greek)', ['AddDan'], ['adddan', 'additions-to-daniel', 'greek-daniel']],
  ['LAO', 'Letter to the Laodiceans', ['EpLao'], ['eplao', 'laodiceans']],
]

const slug = (name: string) => name.toLowerCase().replace(/[()]/g, '').trim().replace(/\s+/g, '-')

export const BOOKS: BookInfo[] = [
  ...OT.map((b) => ({ b, testament: 'OT' as const })),
  ...NT.map((b) => ({ b, testament: 'NT' as const })),
  ...DC.map((b) => ({ b, testament: 'DC' as const })),
].map(({ b: [abbr, name, osis, aliases], testament }, i) => ({ id: i + 1, abbr, name, testament, osis, aliases }))

const byOsis = new Map<string, BookInfo>()
const byCode = new Map<string, BookInfo>()
for (const b of BOOKS) {
  for (const o of b.osis) byOsis.set(o, b)
  byCode.set(b.abbr, b)
}

export const bookByOsis = (osis: string) => byOsis.get(osis)
export const bookByCode = (code: string) => byCode.get(code.toUpperCase())
export const bookById = (id: number) => BOOKS[id - 1]

/**
 * Every accepted spelling (lower case) -> book: the code, the English name with hyphens (and without
 * them: `songofsolomon`), OSIS ids, and the aliases. Spaces, dots and underscores in the input count as
 * hyphens, so `1 John`, `1.john` and `1_john` all work.
 */
const spellings = new Map<string, BookInfo>()
for (const b of BOOKS) {
  const names = [b.abbr, slug(b.name), ...b.osis, ...b.aliases].map((s) => s.toLowerCase())
  for (const n of names) {
    if (!spellings.has(n)) spellings.set(n, b)
    const compact = n.replace(/-/g, '')
    if (!spellings.has(compact)) spellings.set(compact, b)
  }
}

/** The book a `{book}` path segment names, or undefined. */
export function findBook(input: string): BookInfo | undefined {
  if (input.length > 64) return undefined
  const key = input
    .trim()
    .toLowerCase()
    .replace(/[\s._]+/g, '-')
  return spellings.get(key) ?? spellings.get(key.replace(/-/g, ''))
}
