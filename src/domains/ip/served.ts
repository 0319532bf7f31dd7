/**
 * What the ip domain serves, described (Domain.served): with `ALMANAC_IP_CITY_MMDB` set, the `ip` dataset's
 * location half is the operator's database, not the bundled GeoLite2 City. Its source then replaces
 * `geolite2-city` in the description: its type, build date and languages from its own metadata, the
 * operator's licence, and the dataset's version, date, age and staleness from its build date. The ASN half
 * and the `ip-lists` dataset keep the manifest's description.
 */
import type { ManifestEntry } from '../../data/types.ts'
import type { ServedEntry, ServedSource } from '../types.ts'
import type { OperatorCity } from './service.ts'

/** The `ip` dataset's source the operator's City database stands in for. */
const BUNDLED_CITY = 'geolite2-city'

const OPERATOR_CITY_ORIGIN = 'operator-supplied (ALMANAC_IP_CITY_MMDB)'

const GEOLITE2_ATTRIBUTION = 'This product includes GeoLite2 data created by MaxMind, available from https://www.maxmind.com.'

/**
 * The licence, credit line and duties of an operator's database, by the type its metadata names. The
 * operator obtained it and holds its licence; a GeoLite2 database is under the GeoLite2 EULA whoever
 * downloaded it (credit line, 30 days); for any other the operator's own agreement governs.
 */
function terms(type: string): Pick<ServedSource, 'license' | 'attribution' | 'duties'> {
  const staleness = 'Almanac reports the dataset stale 30 days after the build date in its metadata.'
  if (/^GeoLite/i.test(type))
    return {
      license:
        `MaxMind GeoLite2 End User License Agreement (https://www.maxmind.com/en/geolite2/eula), accepted by the operator, who ` +
        `supplied this ${type} database`,
      attribution: GEOLITE2_ATTRIBUTION,
      duties:
        'GeoLite2 EULA: show the attribution wherever the data is used or shown; replace the database with each new MaxMind ' +
        'release within 30 days of its publication (replace the file, then SIGHUP) and delete it when MaxMind asks; do not use it ' +
        `to identify specific households or individuals. ${staleness}`,
    }
  const publisher = /^GeoIP/i.test(type) ? 'MaxMind' : 'its publisher'
  return {
    license:
      `The operator's own licence from ${publisher}: this ${type} database was supplied by the operator, ` + 'not distributed with Almanac',
    attribution: '',
    duties: `Whatever the operator's agreement with ${publisher} asks. ${staleness}`,
  }
}

/** The operator's City database as a source of the `ip` dataset. */
function operatorCitySource(city: OperatorCity): ServedSource {
  const { database_type: type, build_epoch, languages, description } = city.metadata
  const built = new Date(build_epoch * 1000).toISOString()
  const date = built.slice(0, 10)
  return {
    id: 'operator-city-mmdb',
    version: date,
    date,
    via: 'operator',
    ...terms(type),
    origin: OPERATOR_CITY_ORIGIN,
    database: {
      type,
      build_epoch,
      built,
      languages: languages ?? [],
      description: description?.en ?? Object.values(description ?? {})[0] ?? null,
    },
  }
}

/** The `ip` entry as served: the manifest's, or with the operator's City database in GeoLite2's place. */
export function servedIpEntry(entry: ManifestEntry, city: OperatorCity | null): ServedEntry {
  if (entry.id !== 'ip' || !city) return entry
  const source = operatorCitySource(city)
  const sources: ServedSource[] = [source, ...entry.sources.filter((s) => s.id !== BUNDLED_CITY)]
  // The licence and credit lines are made again from the sources (meta.ts), without GeoLite2's; the
  // version and date are the City database's, as the build takes them from the bundled one.
  const { license: _license, attribution: _attribution, ...rest } = entry
  return {
    ...rest,
    version: source.version,
    date: source.date,
    sources,
    counts: { ...entry.counts, city_tree_nodes: city.metadata.node_count },
    served_from: OPERATOR_CITY_ORIGIN,
  }
}
