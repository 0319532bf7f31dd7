/**
 * Upstream sources of the postal domain: GeoNames postal codes and GeoNames countryInfo.txt (formats,
 * regexes, ISO alpha-3 codes and names). GeoNames republishes both daily, so no sha256 is pinned: the
 * build fingerprints whatever it found, and the manifest records that hash.
 *
 * `geonames-postal` is a folder in the mirror (the per-country `XX.txt.gz`); an operator may instead
 * put the files exactly as GeoNames publishes them there (`allCountries.zip`, `XX.zip`,
 * `GB_full.csv.zip`, `CA_full.csv.zip`, `NL_full.csv.zip`). Without a mirror, `allCountries.zip` is
 * downloaded.
 */
import type { Source } from '../../data/types.ts'

const GEONAMES_ATTRIBUTION = 'Postal code data from GeoNames (https://www.geonames.org/), CC BY 4.0'

export const postalSources: Source[] = [
  {
    id: 'geonames-postal',
    version: 'geonames-2024-04-12+2026-03-30',
    date: '2026-03-30',
    mirror: 'geonames-postal',
    url: 'https://download.geonames.org/export/zip/allCountries.zip',
    license: 'CC-BY-4.0',
    attribution: `${GEONAMES_ATTRIBUTION}; GB rows contain Royal Mail data (c) Royal Mail copyright and database right`,
    homepage: 'https://download.geonames.org/export/zip/',
  },
  {
    id: 'geonames-countryinfo',
    version: 'geonames-2026-01-19',
    date: '2026-01-19',
    mirror: 'geonames-countryinfo/countryInfo.txt',
    url: 'https://download.geonames.org/export/dump/countryInfo.txt',
    license: 'CC-BY-4.0',
    attribution: 'Country information from GeoNames (https://www.geonames.org/), CC BY 4.0',
    homepage: 'https://download.geonames.org/export/dump/',
  },
]
