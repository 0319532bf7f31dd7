/**
 * Upstream sources of the Bible domain: the 34 translation files (pinned by sha256), SWORD's
 * versification tables and the book-name lists, read from the mirror (`bible/` under ALMANAC_MIRROR).
 * Credits: the CrossWire module markup of the KJV is GPL; Bíblia Livre is CC BY 3.0 BR; the STEPBible
 * Arabic Van Dyck is CC BY-SA 4.0; the rest are public domain texts.
 */
import type { Source } from '../../data/types.ts'
import { TRANSLATIONS, type TranslationInfo } from './translations.ts'

const SPDX = new Map([
  ['Public Domain', 'Public-Domain'],
  ['GPL', 'GPL-2.0-only'],
  ['Creative Commons Attribution 3.0 Brazil', 'CC-BY-3.0-BR'],
  ['CC BY-SA 4.0', 'CC-BY-SA-4.0'],
])

function attribution(t: TranslationInfo): string {
  const base = `${t.name} (${t.id}), ${t.source}`
  if (t.id === 'kjv')
    return `${base}. Text public domain; CrossWire SWORD module markup (Strong's numbers, morphology) GPL-2.0, https://crosswire.org/`
  if (t.id === 'blivre') return `${base}. Bíblia Livre (C) 2017 Diego Santos, Mario Sérgio & Marco Teles, CC BY 3.0 Brazil`
  if (t.id === 'svd')
    return `${base}. Arabic SVD Bible (Smith & Van Dyck 1865); digitisation, formatting and diacritics by Arabic Bible Outreach Ministry (https://www.arabicbible.com/); tagged edition by STEPBible.org, CC BY-SA 4.0. Changed here: verse text rebuilt from the word rows (column 2 joined with spaces); tags dropped`
  return `${base}. ${t.license}`
}

const HOMEPAGE = new Map([
  ['sword-ztext-zip', 'https://crosswire.org/sword/modules/'],
  ['usfx', 'https://github.com/seven1m/open-bibles'],
  ['usfm', 'https://ebible.org/find/details.php?id=eng-web'],
  ['stepbible-tt-tsv', 'https://github.com/STEPBible/STEPBible-Data'],
])

/** Versions of the files that are not SWORD modules (those carry `vX.Y` in their source line). */
const OTHER_VERSIONS = new Map([
  ['cuv', 'open-bibles-2026-05-04'],
  ['cuvs', 'open-bibles-2026-05-04'],
  ['web', 'bibledit-data-5.0.994-3'],
  ['svd', 'TTAraSVD-4.0.1'],
])

/**
 * The 30 SWORD zips are the files of one pinned commit of scrollmapper/bible_databases, byte for byte,
 * so without a mirror they can be downloaded from it (and the sha256 still holds). The other four are
 * repackaged in the mirror (gzip, tar) and come from the mirror only.
 */
const SCROLLMAPPER = 'https://raw.githubusercontent.com/scrollmapper/bible_databases/a228a19a29099a41c196c2a310cd93e50a390e30/'
const urlOf = (t: TranslationInfo) => {
  const path = /^scrollmapper\/bible_databases (\S+\.zip) /.exec(t.source)?.[1]
  return path ? { url: SCROLLMAPPER + path } : { mirrorOnly: `repackaged by the mirror (gzip or tar) from ${t.source}` }
}

export const bibleSources: Source[] = [
  ...TRANSLATIONS.map(
    (t): Source => ({
      id: `bible-${t.id}`,
      version: /v[\d.]+\)$/.exec(t.source)?.[0].slice(0, -1) ?? OTHER_VERSIONS.get(t.id) ?? t.date,
      date: t.date,
      mirror: t.file,
      ...urlOf(t),
      sha256: t.sha256,
      license: SPDX.get(t.license) ?? t.license,
      attribution: attribution(t),
      ...(t.id === 'svd'
        ? {
            duties:
              'Share-alike: redistributed changes stay under CC BY-SA 4.0, naming Arabic Bible Outreach Ministry and STEPBible.org and saying what was changed.',
          }
        : {}),
      homepage: HOMEPAGE.get(t.format),
    }),
  ),
  {
    id: 'bible-versification',
    version: 'libsword-1.9.0',
    date: '2020-07-26',
    mirror: 'bible/versification',
    mirrorOnly: 'the canon*.h tables of Debian libsword-dev 1.9.0, collected by the mirror',
    license: 'GPL-2.0-only',
    attribution: 'Versification tables (canon*.h) from the SWORD Project 1.9.0, CrossWire Bible Society, GPL-2.0',
    homepage: 'https://crosswire.org/sword/',
  },
  {
    id: 'bible-book-names',
    version: 'libsword-common-1.9.0',
    date: '2020-07-26',
    mirror: 'bible/book-names/book-names.json',
    mirrorOnly: 'merged by the mirror from the SWORD locales of Debian libsword-common and the titles inside the Bible files',
    license: 'GPL-2.0-only',
    attribution:
      'Book names from the SWORD Project locales (CrossWire Bible Society, GPL-2.0) and the titles inside the mirrored Bible files',
    homepage: 'https://crosswire.org/sword/',
  },
]
