/**
 * Upstream sources of the Bible domain: the 34 translation files (pinned by sha256), SWORD's
 * versification tables and its book-name locales, each from the mirror (`bible/` under ALMANAC_MIRROR)
 * or downloaded from its upstream.
 * Credits: the CrossWire module markup of the KJV is GPL; Bíblia Livre is CC BY 3.0 BR; the STEPBible
 * Arabic Van Dyck is CC BY-SA 4.0; the rest are public domain texts.
 */
import type { Source } from '../../data/types.ts'
import { STEPBIBLE_SVD_FILES } from './stepbible-files.ts'
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
    return (
      `${base}. Arabic SVD Bible (Smith & Van Dyck 1865); digitisation, formatting and diacritics by Arabic Bible Outreach Ministry ` +
      '(https://www.arabicbible.com/); tagged edition by STEPBible.org, CC BY-SA 4.0. Changed here: verse text rebuilt from the word ' +
      'rows (column 2 joined with spaces); tags dropped'
    )
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
 * Every translation has an upstream URL pinned by sha256. The 30 SWORD zips are the files of one
 * pinned commit of scrollmapper/bible_databases, byte for byte (the mirror's sha256 holds for the
 * download). The other four the mirror keeps repackaged (gzip, tar), so their URLs pin the upstream
 * form (`urlSha256`, or each of `files`) and the builder reads either form: the USFX files of
 * seven1m/open-bibles, bibledit's USFM files inside Debian's bibledit-data package, and STEPBible's
 * per-book files.
 */
const SCROLLMAPPER = 'https://raw.githubusercontent.com/scrollmapper/bible_databases/a228a19a29099a41c196c2a310cd93e50a390e30/'
const OPEN_BIBLES = 'https://raw.githubusercontent.com/seven1m/open-bibles/4e41ce04b87017781bff3108d69bb4db86b30873/'
/** Debian's archive (bookworm): a pool file never changes once published. */
const DEBIAN_POOL = 'https://deb.debian.org/debian/pool/main/'
export const DEBIAN_PACKAGES = {
  bibleditData: {
    url: `${DEBIAN_POOL}b/bibledit/bibledit-data_5.0.994-3_all.deb`,
    sha256: '1eb4d47e7e91d7755e4b0fe34a6ad053ccdb4597bdc5b81cb6f493d5d35a6be0',
  },
  libswordDev: {
    url: `${DEBIAN_POOL}s/sword/libsword-dev_1.9.0+dfsg-4+b4_amd64.deb`,
    sha256: 'f8ffa638bde5d3f9c934e8de3a8498bbfdfbd56d09f8b6ecd8c59669d84a2bb9',
  },
  libswordCommon: {
    url: `${DEBIAN_POOL}s/sword/libsword-common_1.9.0+dfsg-4_all.deb`,
    sha256: '3bf0fc6153a7927abf8125342240c01ba10ca242497dc329475a54523f722873',
  },
} as const

const UPSTREAM = new Map<string, Pick<Source, 'url' | 'urlSha256' | 'files'>>([
  ['cuv', { url: `${OPEN_BIBLES}chi-cuv.usfx.xml`, urlSha256: '049e36ec3ee1b5c9bc2c8bfd2ca07f9f1f30398838f692d12ea38a092d41fe4b' }],
  ['cuvs', { url: `${OPEN_BIBLES}chi-cuv-simp.usfx.xml`, urlSha256: 'bea9f6e4fd35b70a67e3978ce8b9dc0ad853078e67472653cf1b34f357ae3abf' }],
  ['web', { url: DEBIAN_PACKAGES.bibleditData.url, urlSha256: DEBIAN_PACKAGES.bibleditData.sha256 }],
  ['svd', { files: STEPBIBLE_SVD_FILES }],
])

const urlOf = (t: TranslationInfo): Pick<Source, 'url' | 'urlSha256' | 'files'> => {
  const path = /^scrollmapper\/bible_databases (\S+\.zip) /.exec(t.source)?.[1]
  const upstream = path ? { url: SCROLLMAPPER + path } : UPSTREAM.get(t.id)
  if (!upstream) throw new Error(`bible-${t.id}: no upstream URL declared`)
  return upstream
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
              'Share-alike: redistributed changes stay under CC BY-SA 4.0, naming Arabic Bible Outreach Ministry and STEPBible.org and ' +
              'saying what was changed.',
          }
        : {}),
      homepage: HOMEPAGE.get(t.format),
    }),
  ),
  {
    id: 'bible-versification',
    version: 'libsword-1.9.0',
    date: '2020-07-26',
    // The mirror keeps the canon*.h headers as a folder; upstream they are files of Debian's libsword-dev.
    mirror: 'bible/versification',
    url: DEBIAN_PACKAGES.libswordDev.url,
    urlSha256: DEBIAN_PACKAGES.libswordDev.sha256,
    license: 'GPL-2.0-only',
    attribution: 'Versification tables (canon*.h) from the SWORD Project 1.9.0, CrossWire Bible Society, GPL-2.0',
    homepage: 'https://crosswire.org/sword/',
  },
  {
    // The builder merges these with the titles inside the Bible files into each translation's book names.
    id: 'bible-book-names',
    version: 'libsword-common-1.9.0',
    date: '2020-07-26',
    mirror: 'bible/book-names/sword-locales',
    url: DEBIAN_PACKAGES.libswordCommon.url,
    urlSha256: DEBIAN_PACKAGES.libswordCommon.sha256,
    license: 'GPL-2.0-only',
    attribution: 'Book names from the SWORD Project locales (CrossWire Bible Society, GPL-2.0) and the titles inside the Bible files',
    homepage: 'https://crosswire.org/sword/',
  },
]
