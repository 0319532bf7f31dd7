/** Countries and subdivisions: ISO 3166-1, 3166-2 and the withdrawn codes of 3166-3 (SPEC "Countries"). */
import { defineDomain } from '../types.ts'
import { ARTIFACT, countriesBuilder } from './build.ts'
import { countriesRoutes } from './routes.ts'
import { openCountriesService, type CountriesService } from './service.ts'
import { countriesSources } from './sources.ts'

export default defineDomain<CountriesService>({
  name: 'countries',
  tag: {
    name: 'countries',
    description: 'ISO 3166-1 countries and ISO 3166-2 subdivisions: codes, names, UN M.49 regions, facts, code validation.',
  },
  prefixes: ['/countries', '/subdivisions'],
  datasets: ['countries'],
  open: ({ data }) => openCountriesService(data.path(ARTIFACT)),
  routes: ({ service, config }) => countriesRoutes(service, config),
  // The iso-codes release date, stored in the artifact when it was built.
  definitionsUpdated: ({ service }) => service.meta.iso_codes_date!,
  close: (service) => service.close(),
  builders: [countriesBuilder],
  sources: countriesSources,
  docs: 'docs/countries.md',
  probes: 'test/domains/countries/probes.ts',
})
