/**
 * The three non-SWORD translations against independent readings of the mirror, and every translation's
 * counts against the mirror's MANIFEST.json and the versification tables.
 *
 * - USFX (Chinese Union): CPython's XML parser collects each verse's text between `<v/>` and `<ve/>`.
 * - USFM (WEB): the `\v` markers of each book file counted by a line scan; the text of a sample of
 *   verses must be free of markers and of the footnote text that the raw line carries.
 * - STEPBible (Arabic): CPython rebuilds each verse from column 2 of its word rows.
 */
import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { BOOKS, bookByCode } from '../../../src/domains/bible/books.ts'
import { TRANSLATIONS } from '../../../src/domains/bible/translations.ts'
import { loadVersification } from '../../../src/domains/bible/versification.ts'
import { MIRROR } from '../../support/mirror.ts'
import { pythonJson } from '../../support/python.ts'
import { tempDirs } from '../../support/temp.ts'
import { bibleDb as db, versesOf } from './db.ts'

const temp = tempDirs('almanac-bible-formats-')
const manifest = JSON.parse(readFileSync(join(MIRROR, 'MANIFEST.json'), 'utf8')).bible.translations as {
  id: string
  verses: number
  language: { iso639_1: string }
}[]

const key = (code: string, c: number, v: number) => `${bookByCode(code)!.id} ${c}:${v}`

describe('counts', () => {
  test('34 translations in 28 languages, each with the verse count the mirror states', () => {
    const rows = db.query('SELECT id, language, verses FROM translations').all() as { id: string; language: string; verses: number }[]
    expect(rows.length).toBe(34)
    expect(new Set(rows.map((r) => r.language)).size).toBe(28)
    for (const m of manifest) {
      const r = rows.find((x) => x.id === m.id)
      expect({ id: m.id, verses: r?.verses, language: r?.language }).toEqual({ id: m.id, verses: m.verses, language: m.language.iso639_1 })
      expect(versesOf(m.id).length).toBe(m.verses)
    }
  })

  test('SWORD translations: every verse exists in the module versification; complete chapters match the table', () => {
    const versificationOf = new Map<string, string>()
    for (const t of TRANSLATIONS.filter((x) => x.format === 'sword-ztext-zip')) {
      const dir = temp()
      Bun.spawnSync(['unzip', '-q', join(MIRROR, t.file), 'mods.d/*', '-d', dir])
      const conf = readFileSync(join(dir, 'mods.d', readdirSync(join(dir, 'mods.d'))[0]!), 'utf8')
      versificationOf.set(t.id, /^Versification=(.+)$/m.exec(conf)?.[1]?.trim() ?? 'KJV')
    }
    let exact = 0
    for (const [id, name] of versificationOf) {
      const v11n = loadVersification(join(MIRROR, 'bible/versification'), name)
      const max = new Map<string, number>()
      for (const b of [...v11n.ot, ...v11n.nt]) {
        const book = BOOKS.find((x) => x.osis.includes(b.osis))!
        b.chapters.forEach((n, i) => max.set(`${book.id} ${i + 1}`, n))
      }
      const counts = new Map<string, number>()
      for (const r of versesOf(id)) {
        const m = max.get(`${r.book} ${r.chapter}`)
        expect(m !== undefined && r.verse <= m).toBe(true)
        counts.set(`${r.book} ${r.chapter}`, (counts.get(`${r.book} ${r.chapter}`) ?? 0) + 1)
      }
      // The chapters table agrees with the verses.
      const rows = db
        .query('SELECT c.book, c.chapter, c.verses FROM chapters c JOIN translations t ON t.idx = c.translation WHERE t.id = ?')
        .all(id) as { book: number; chapter: number; verses: number }[]
      for (const r of rows) expect(r.verses).toBe(counts.get(`${r.book} ${r.chapter}`)!)
      // A translation with every slot filled has exactly the table's chapters.
      if ([...max.values()].reduce((a, b) => a + b, 0) === versesOf(id).length) {
        exact++
        for (const [k, n] of max) expect({ k, n: counts.get(k) }).toEqual({ k, n })
      }
    }
    expect(exact).toBeGreaterThanOrEqual(10)
  })
})

describe('USFX: Chinese Union Version', () => {
  test.each([['cuv'], ['cuvs']])('%s: every verse equals CPython ElementTree reading of the file', (id) => {
    const file = join(MIRROR, TRANSLATIONS.find((t) => t.id === id)!.file)
    const oracle = pythonJson<[string, number, number, string][]>(
      `
import gzip, json, sys, xml.etree.ElementTree as ET
root = ET.fromstring(gzip.open(json.load(sys.stdin), 'rb').read())
out = []
for book in root.iter('book'):
    chapter, verse, parts = 0, None, []
    def walk(el):
        global chapter, verse, parts
        for child in el:
            if child.tag == 'c': chapter = int(child.get('id'))
            elif child.tag == 'v': verse, parts = int(child.get('id')), []
            elif child.tag == 've':
                out.append([book.get('id'), chapter, verse, ' '.join(''.join(parts).split())]); verse = None
            elif child.tag in ('f', 'x', 'h'): pass
            else: walk(child)
            if verse is not None and child.tail and child.tag != 've': parts.append(child.tail)
    walk(book)
print(json.dumps(out, ensure_ascii=False))
`,
      file,
    )
    const ours = new Map(versesOf(id).map((r) => [`${r.book} ${r.chapter}:${r.verse}`, r.text]))
    expect(oracle.length).toBe(ours.size)
    let bad = 0
    for (const [code, c, v, text] of oracle)
      if (ours.get(key(code, c, v)) !== text && bad++ < 3)
        expect({ ref: `${code} ${c}:${v}`, text: ours.get(key(code, c, v)) }).toEqual({ ref: `${code} ${c}:${v}`, text })
    expect(bad).toBe(0)
  })
})

describe('USFM: World English Bible', () => {
  const dir = temp()
  Bun.spawnSync(['tar', '-xzf', join(MIRROR, 'bible/web.usfm.tar.gz'), '-C', dir])
  const files = readdirSync(join(dir, 'web-usfm')).map((f) => readFileSync(join(dir, 'web-usfm', f), 'utf8'))
  const web = versesOf('web')

  test('verses per book equal the \\v markers of each book file', () => {
    for (const text of files) {
      const code = /\\id (\w{3})/.exec(text)?.[1]
      if (!code || !bookByCode(code)) continue
      const markers = text.split('\n').reduce((n, line) => n + (line.match(/\\v\s+\d/g)?.length ?? 0), 0)
      expect({ code, n: web.filter((r) => r.book === bookByCode(code)!.id).length }).toEqual({ code, n: markers })
    }
  })

  test('every verse equals a CPython reading of the USFM (notes and cross-references out, markers out)', () => {
    const oracle = pythonJson<[string, number, number, string][]>(
      `
import json, os, re, sys
d = json.load(sys.stdin)
HEAD = re.compile(r'\\\\(id|ide|h|toc\\d?|mt\\d?|ms\\d?|mr|s\\d?|r|d|sp|cl|cp|ip|is\\d?|ili\\d?|rem)\\b')
out = []
for name in sorted(os.listdir(d)):
    text = open(os.path.join(d, name), encoding='utf-8').read()
    if '\\\\id ' not in text: continue
    text = text[text.index('\\\\id '):]
    code = text[4:7]
    if code in ('FRT', 'GLO'): continue
    chapter, cur = 0, None
    def flush():
        global cur
        if cur is not None:
            t = ' '.join(cur[1])
            t = re.sub(r'\\\\(f|fe|x)\\s.*?\\\\\\1\\*', ' ', t)
            t = re.sub(r'\\|[^\\\\]*?(?=\\\\\\+?w\\*)', '', t)
            t = re.sub(r'\\\\\\+?[a-z0-9]+\\*', '', t)
            t = re.sub(r'\\\\\\+?[a-z0-9]+(\\s|$)', '', t)
            t = ' '.join(t.split())
            t = re.sub(r' (?=[,.;:!?’”)])', '', t)
            out.append([code, chapter, cur[0], t])
        cur = None
    for line in text.split('\\n'):
        for part in re.split(r'(?=\\\\[cv]\\s)', line):
            m = re.match(r'\\\\c\\s+(\\d+)', part)
            if m: flush(); chapter = int(m.group(1)); continue
            m = re.match(r'\\\\v\\s+(\\d+)\\S*\\s?(.*)', part, re.S)
            if m: flush(); cur = [int(m.group(1)), [m.group(2)]]; continue
            if HEAD.match(part): flush(); continue
            if cur is not None: cur[1].append(part)
    flush()
print(json.dumps(out, ensure_ascii=False))
`,
      join(dir, 'web-usfm'),
    )
    const ours = new Map(web.map((r) => [`${r.book} ${r.chapter}:${r.verse}`, r.text]))
    expect(oracle.length).toBe(ours.size)
    // The scan puts a space where a note stood and removes spaces before punctuation; ours keeps words
    // apart only between letters: compare with spaces before punctuation removed on both sides.
    const norm = (t: string | undefined) => t?.replace(/ (?=[,.;:!?’”)])/g, '')
    let bad = 0
    for (const [code, c, v, text] of oracle) {
      const got = norm(ours.get(key(code, c, v)))
      if (got !== text && bad++ < 3) expect({ ref: `${code} ${c}:${v}`, text: got }).toEqual({ ref: `${code} ${c}:${v}`, text })
    }
    expect(bad).toBe(0)
  })

  test('no markers, no footnote or cross-reference text, no doubled spaces in any verse', () => {
    for (const r of web) {
      expect(r.text).not.toMatch(/\\|\|| {2}|^ | $/)
    }
    // Tobit 1:2 carries the footnote "That is, Shalmaneser. Compare 2 Kings 17:3, 23."
    const tob = web.find((r) => r.book === bookByCode('TOB')!.id && r.chapter === 1 && r.verse === 2)!
    expect(tob.text).toStartWith('who in the days of Enemessar king of the Assyrians')
    expect(tob.text).not.toContain('Shalmaneser')
    // John 3:16 with its \wj words of Jesus kept, markers gone.
    expect(web.find((r) => r.book === 43 && r.chapter === 3 && r.verse === 16)!.text).toStartWith(
      'For God so loved the world, that he gave his one and only Son',
    )
  })
})

describe('STEPBible: Arabic Van Dyck', () => {
  test('every verse equals column 2 of its word rows, joined with spaces (CPython)', () => {
    const dir = temp()
    Bun.spawnSync(['tar', '-xzf', join(MIRROR, 'bible/svd.stepbible-tt.tar.gz'), '-C', dir])
    const oracle = pythonJson<[string, number, number, string][]>(
      `
import glob, json, os, sys
out = []
for path in sorted(glob.glob(os.path.join(json.load(sys.stdin), '**', '*.txt'), recursive=True)):
    text = open(path, encoding='utf-8').read().replace('\\r\\n', '\\n')
    for block in text.split('========>>>\\n')[1:]:
        ref = None
        body, _, _ = block.partition('<<<========')
        rows = body.split('\\n')[1:]
        words = [r.split('\\t')[1].strip() for r in rows if len(r.split('\\t')) > 1 and r.split('\\t')[1].strip()]
        out.append(' '.join(' '.join(words).split()))
    # references: the line before each block start
    refs = [l.strip() for l, n in zip(text.split('\\n'), text.split('\\n')[1:]) if n == '========>>>']
    base = len(out) - len(refs)
    for i, ref in enumerate(refs):
        b, c, v = ref.split('.')
        out[base + i] = [b.upper(), int(c), int(v), out[base + i]]
print(json.dumps(out, ensure_ascii=False))
`,
      dir,
    )
    const ours = new Map(versesOf('svd').map((r) => [`${r.book} ${r.chapter}:${r.verse}`, r.text]))
    expect(oracle.length).toBe(31102)
    let bad = 0
    for (const [code, c, v, text] of oracle)
      if (ours.get(key(code, c, v)) !== text && bad++ < 3)
        expect({ ref: `${code} ${c}:${v}`, text: ours.get(key(code, c, v)) }).toEqual({ ref: `${code} ${c}:${v}`, text })
    expect(bad).toBe(0)
  })
})
