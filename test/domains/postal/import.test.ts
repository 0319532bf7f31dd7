/**
 * The importer takes the files as GeoNames publishes them. ZIPs here are written by Python's zipfile
 * (an independent implementation: deflate, stored, and forced ZIP64), gzip by node:zlib; the built
 * database must hold exactly the rows of the most complete file per country, and be byte-identical
 * when built twice from the same inputs.
 */
import { Database } from 'bun:sqlite'
import { afterAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { buildPostalDatabase } from '../../../src/domains/postal/build.ts'
import { classify } from '../../../src/domains/postal/inputs.ts'
import { zipEntries } from '../../../src/lib/zip.ts'
import { MIRROR } from '../../support/mirror.ts'

const COUNTRY_INFO = join(MIRROR, 'geonames-countryinfo/countryInfo.txt')
const dir = mkdtempSync(join(tmpdir(), 'postal-import-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const row = (...c: (string | number)[]) => c.join('\t')
const GB_SHORT = [row('GB', 'SW1A', 'Westminster', 'England', 'ENG', 'Greater London', '11609024', '', '', 51.5018, -0.1328, 4)]
const GB_FULL = [
  row('GB', 'SW1A 1AA', 'London', 'England', 'ENG', 'Greater London', '11609024', 'Westminster', 'E09000033', 51.501, -0.1416, 6),
  row('GB', 'SW1A 2AA', 'London', 'England', 'ENG', 'Greater London', '11609024', 'Westminster', 'E09000033', 51.5034, -0.1276, 6),
]
const DE = [
  row('DE', '10115', 'Berlin', 'Berlin', 'BE', '', '00', 'Berlin, Stadt', '11000', 52.5323, 13.3846, 6),
  row('DE', '80331', 'München', 'Bayern', 'BY', 'Oberbayern', '091', 'München, Kreisfreie Stadt', '09162', 48.1371, 11.5754, 6),
]
const LI = [row('LI', '9490', 'Vaduz', '', '', '', '', '', '', 47.1415, 9.5215, 4)]
const FR = [row('FR', '75001', 'Paris 01', 'Île-de-France', '11', 'Paris', '75', 'Paris', '751', 48.8592, 2.3417, 5)]

/** Writes a zip with Python's zipfile; `entries` maps names to text. */
function pythonZip(path: string, entries: Record<string, string>, opts: { stored?: boolean; zip64?: boolean } = {}) {
  const script = `
import json, sys, zipfile
path, entries, stored, zip64 = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3] == '1', sys.argv[4] == '1'
with zipfile.ZipFile(path, 'w', zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED) as z:
    for name, text in entries.items():
        with z.open(name, 'w', force_zip64=zip64) as f:
            f.write(text.encode('utf-8'))
`
  const r = Bun.spawnSync(['python3', '-c', script, path, JSON.stringify(entries), opts.stored ? '1' : '0', opts.zip64 ? '1' : '0'])
  if (r.exitCode !== 0) throw new Error(`python3 zipfile failed: ${r.stderr.toString()}`)
}

const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex')

describe('GeoNames file names', () => {
  test('allCountries, per-country and full-code files are recognised; readme is not', () => {
    expect(classify('/x/allCountries.zip')).toMatchObject({ country: null, rank: 1 })
    expect(classify('/x/GB.zip')).toMatchObject({ country: 'GB', rank: 2 })
    expect(classify('/x/GB_full.csv.zip')).toMatchObject({ country: 'GB', rank: 3 })
    expect(classify('/x/DE.txt.gz')).toMatchObject({ country: 'DE', rank: 2 })
    expect(classify('/x/readme.txt')).toBeNull()
    expect(classify('/x/GB')).toBeNull()
  })
})

describe('zip reader', () => {
  test('reads the central directory of deflated, stored and ZIP64 archives', () => {
    for (const [name, opts] of [
      ['d.zip', {}],
      ['s.zip', { stored: true }],
      ['z.zip', { zip64: true }],
    ] as const) {
      pythonZip(join(dir, name), { 'readme.txt': 'hello', 'DE.txt': DE.join('\n') + '\n' }, opts)
      const entries = zipEntries(join(dir, name))
      expect(entries.map((e) => e.name)).toEqual(['readme.txt', 'DE.txt'])
      expect(entries[1]!.size).toBe(Buffer.byteLength(DE.join('\n') + '\n'))
    }
  })

  test('a file that is not a zip is refused with its name', () => {
    writeFileSync(join(dir, 'bad.zip'), 'not a zip at all')
    expect(() => zipEntries(join(dir, 'bad.zip'))).toThrow(/bad\.zip is not a ZIP file/)
  })
})

describe('import', () => {
  const src = join(dir, 'upstream')
  const build = (out: string) => buildPostalDatabase({ postal: src, countryInfo: COUNTRY_INFO, out })

  test('allCountries.zip + GB_full.csv.zip + XX.zip + XX.txt.gz: the most complete file wins per country', async () => {
    Bun.spawnSync(['mkdir', '-p', src])
    // allCountries holds GB's short codes, DE, and an LI row that LI.txt.gz will replace.
    pythonZip(join(src, 'allCountries.zip'), {
      'allCountries.txt': [...GB_SHORT, ...DE, row('LI', '9999', 'Old', '', '', '', '', '', '', 47, 9.5, 1)].join('\r\n') + '\r\n',
      'readme.txt': 'GeoNames',
    })
    pythonZip(join(src, 'GB_full.csv.zip'), { 'GB_full.txt': GB_FULL.join('\n') + '\n', 'readme.txt': 'GeoNames' }, { zip64: true })
    pythonZip(join(src, 'FR.zip'), { 'FR.txt': FR.join('\n'), 'readme.txt': 'GeoNames' }, { stored: true })
    writeFileSync(join(src, 'LI.txt.gz'), gzipSync(LI.join('\n') + '\n'))
    const out = join(dir, 'a.sqlite')
    const result = await build(out)
    expect(result.counts.records).toBe(GB_FULL.length + DE.length + FR.length + LI.length)
    const db = new Database(out, { readonly: true })
    const codes = db.query('SELECT country, postal_code FROM places ORDER BY country, postal_code').all()
    expect(codes).toEqual([
      { country: 'DE', postal_code: '10115' },
      { country: 'DE', postal_code: '80331' },
      { country: 'FR', postal_code: '75001' },
      { country: 'GB', postal_code: 'SW1A 1AA' },
      { country: 'GB', postal_code: 'SW1A 2AA' },
      { country: 'LI', postal_code: '9490' },
    ])
    const munich = db
      .query(
        'SELECT p.place_name, p.place_folded, a.admin_code1, a.admin_name3, p.accuracy FROM places p JOIN admins a ON a.id = p.admin_id ' +
          "WHERE postal_code = '80331'",
      )
      .get()
    expect(munich).toEqual({
      place_name: 'München',
      place_folded: 'munchen',
      admin_code1: 'BY',
      admin_name3: 'München, Kreisfreie Stadt',
      accuracy: 6,
    })
    expect(db.query("SELECT total_codes, total_records FROM systems WHERE alpha2 = 'GB'").get()).toEqual({
      total_codes: 2,
      total_records: 2,
    })
    expect(db.query('SELECT COUNT(*) AS n FROM places_rtree').get()).toEqual({ n: 6 })
    db.close()
  })

  test('the same inputs build a byte-identical database', async () => {
    await build(join(dir, 'b1.sqlite'))
    await build(join(dir, 'b2.sqlite'))
    expect(sha(join(dir, 'b1.sqlite'))).toBe(sha(join(dir, 'b2.sqlite')))
  })

  test('a folder without GeoNames files is refused with a message that says what it expects', async () => {
    const empty = join(dir, 'empty')
    Bun.spawnSync(['mkdir', '-p', empty])
    writeFileSync(join(empty, 'notes.md'), 'x')
    await expect(buildPostalDatabase({ postal: empty, countryInfo: COUNTRY_INFO, out: join(dir, 'c.sqlite') })).rejects.toThrow(
      /holds no GeoNames postal file/,
    )
  })
})
