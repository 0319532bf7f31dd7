/**
 * Timezones domain: IANA tzdata compiled at build time (build.ts), served by TimezonesService.
 * The runtime's Intl/ICU tz copy is never consulted.
 */
import { defineDomain } from '../types.ts'
import { TIMEZONES_ARTIFACT } from './artifacts.ts'
import { timezonesBuilder } from './build.ts'
import { timezonesRoutes } from './routes.ts'
import { type TimezonesService, openTimezonesService } from './service.ts'
import { timezonesSources } from './sources.ts'

export default defineDomain<TimezonesService>({
  name: 'timezones',
  tag: {
    name: 'timezones',
    description: 'IANA timezones: current time, offset and DST period of a zone, differences and conversions. From tzdata.',
  },
  prefixes: ['/timezones', '/timezones-diff', '/timezones-convert'],
  datasets: ['timezones'],
  builders: [timezonesBuilder],
  open: ({ data }) => openTimezonesService(data.path(TIMEZONES_ARTIFACT)),
  routes: ({ service, config }) => timezonesRoutes(service, config),
  sources: timezonesSources,
  docs: 'docs/timezones.md',
  probes: 'test/domains/timezones/probes.ts',
})
