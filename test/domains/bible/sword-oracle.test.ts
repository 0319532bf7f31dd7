/**
 * Every SWORD translation against libsword itself: Debian's `mod2imp` (libsword-utils) exports each
 * module's verses with their references, read by CrossWire's C++ code and versification tables. The
 * built database must hold exactly the verses mod2imp shows with text, at the same references, and
 * each verse's text must be the markup mod2imp printed, stripped. A seeded sample also checks our zText
 * reader's raw markup byte for byte.
 */
import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { bookByOsis } from '../../../src/domains/bible/books.ts'
import { stripGbf, stripOsis } from '../../../src/domains/bible/markup.ts'
import { readSwordModule } from '../../../src/domains/bible/sword.ts'
import { TRANSLATIONS } from '../../../src/domains/bible/translations.ts'
import { MIRROR } from '../../support/mirror.ts'
import { rng } from '../../support/random.ts'
import { tempDirs } from '../../support/temp.ts'
import { versesOf } from './db.ts'

const temp = tempDirs('almanac-bible-sword-')
const VERSIFICATION = join(MIRROR, 'bible/versification')

/** SWORD's English book names (what mod2imp prints) -> OSIS ids, from the sbook entries of the tables. */
const osisOfName = new Map<string, string>()
for (const f of readdirSync(VERSIFICATION).filter((f) => f.endsWith('.h'))) {
  for (const m of readFileSync(join(VERSIFICATION, f), 'utf8').matchAll(/\{"([^"]+)", "([^"]+)", "[^"]*", \d+\}/g))
    osisOfName.set(m[1]!, m[2]!)
}

/** mod2imp's export: `$$$Book C:V` lines, each followed by the entry's raw text. */
function exportModule(zip: string): { name: string; entries: Map<string, string> } {
  const dir = temp()
  const unzip = Bun.spawnSync(['unzip', '-q', zip, '-d', dir])
  if (unzip.exitCode !== 0) throw new Error(`unzip ${zip}: ${unzip.stderr}`)
  const conf = readdirSync(join(dir, 'mods.d'))[0]!
  const name = /^\[(.+)\]/m.exec(readFileSync(join(dir, 'mods.d', conf), 'utf8'))![1]!
  const r = Bun.spawnSync(['mod2imp', name], { env: { ...process.env, SWORD_PATH: dir } })
  if (r.exitCode !== 0) throw new Error(`mod2imp ${name}: ${r.stderr}`)
  const entries = new Map<string, string>()
  let key: string | null = null
  let lines: string[] = []
  const flush = () => {
    if (key) entries.set(key, lines.join('\n'))
  }
  for (const line of r.stdout.toString('utf8').split('\n')) {
    const m = /^\$\$\$(.+) (\d+):(\d+)$/.exec(line)
    if (m || line.startsWith('$$$')) {
      flush()
      key = null
      lines = []
      if (m && Number(m[3]) > 0) {
        const osis = osisOfName.get(m[1]!)
        if (!osis) throw new Error(`mod2imp book name ${m[1]} is in no versification table`)
        key = `${osis} ${m[2]}:${m[3]}`
      }
      continue
    }
    lines.push(line)
  }
  flush()
  for (const [k, v] of entries) entries.set(k, v.replace(/\n$/, ''))
  return { name, entries }
}

const sword = TRANSLATIONS.filter((t) => t.format === 'sword-ztext-zip')

describe('SWORD modules against libsword (mod2imp)', () => {
  test('mod2imp is installed (libsword-utils)', () => {
    expect(Bun.which('mod2imp')).not.toBeNull()
  })

  test.each(sword.map((t) => [t.id]))('%s: same verses, same references, same text', async (id) => {
    const t = sword.find((x) => x.id === id)!
    const zip = join(MIRROR, t.file)
    const { entries } = exportModule(zip)
    const withText = [...entries].filter(([, raw]) => raw.replace(/<[^>]*>/g, '').trim())
    const ours = versesOf(id)
    const oursByKey = new Map(ours.map((v) => [`${v.book} ${v.chapter}:${v.verse}`, v.text]))
    expect(ours.length).toBe(withText.length)
    const module = await readSwordModule(zip, VERSIFICATION)
    const strip = module.conf.get('SourceType') === 'GBF' ? stripGbf : stripOsis
    let mismatches = 0
    for (const [key, raw] of withText) {
      const [osis, cv] = key.split(' ')
      const text = oursByKey.get(`${bookByOsis(osis!)!.id} ${cv}`)
      if (text !== strip(raw)) {
        if (mismatches++ < 3) expect({ key, text }).toEqual({ key, text: strip(raw) })
      }
    }
    expect(mismatches).toBe(0)
    // The reader's raw markup, byte for byte, for a seeded sample.
    const raws = new Map(module.verses.map((v) => [`${v.osis} ${v.chapter}:${v.verse}`, v.raw]))
    const random = rng(id.length * 7919)
    for (let i = 0; i < 40; i++) {
      const [key, raw] = withText[Math.floor(random() * withText.length)]!
      expect({ key, raw: raws.get(key) }).toEqual({ key, raw })
    }
  })
})
