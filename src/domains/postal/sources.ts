/**
 * Upstream sources of the postal domain: GeoNames postal codes and GeoNames countryInfo.txt (formats,
 * regexes, ISO alpha-3 codes and names). GeoNames republishes both daily, so no sha256 is pinned: the
 * build fingerprints whatever it found, and the manifest records that hash.
 *
 * `geonames-postal` is a folder in the mirror (the per-country `XX.txt.gz`); an operator may instead
 * put the files exactly as GeoNames publishes them there (`allCountries.zip`, `XX.zip`,
 * `GB_full.csv.zip`, `CA_full.csv.zip`, `NL_full.csv.zip`). Without a mirror, `allCountries.zip` is
 * downloaded.
 *
 * allCountries.zip has only the outward part of British, Canadian and Dutch codes (`SW1A`, `K1A`,
 * `1012`); GeoNames publishes their full unit codes apart, as `XX_full.csv.zip` (a tab-separated
 * `XX_full.txt` inside, same 12 columns). They are optional sources, read by default: when one is found
 * its rows replace that country's outward rows; when it is not, the build says so (log, the manifest's
 * `unavailable`, /readyz and /api/v1/meta/datasets) and serves the outward codes.
 */
import type { Source } from '../../data/types.ts'

const GEONAMES_ATTRIBUTION = 'Postal code data from GeoNames (https://www.geonames.org/), CC BY 4.0'

/** The countries GeoNames publishes full unit codes for, apart from allCountries.zip. */
export const FULL_CODE_COUNTRIES = ['GB', 'CA', 'NL'] as const
export const fullCodeSource = (country: string) => `geonames-postal-${country.toLowerCase()}-full`

const fullCodeNotes: Record<(typeof FULL_CODE_COUNTRIES)[number], string> = {
  GB: '; contains Royal Mail data (c) Royal Mail copyright and database right',
  CA: '',
  NL: '',
}

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
  ...FULL_CODE_COUNTRIES.map(
    (country): Source => ({
      id: fullCodeSource(country),
      // GeoNames republishes these daily, like allCountries: dated by the update this was declared against, not pinned.
      version: 'geonames-2026-03-30',
      date: '2026-03-30',
      // Beside the per-country files of the mirror's postal folder, or where `data fetch` puts it (upstream/<id>/).
      mirror: `geonames-postal/${country}_full.csv.zip`,
      url: `https://download.geonames.org/export/zip/${country}_full.csv.zip`,
      license: 'CC-BY-4.0',
      attribution: `${GEONAMES_ATTRIBUTION} (${country} full postal codes)${fullCodeNotes[country]}`,
      homepage: 'https://download.geonames.org/export/zip/',
    }),
  ),
]
