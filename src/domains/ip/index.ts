/**
 * The ip domain: geolocation (GeoLite2 City or the operator's GeoIP2 City), network (ip-location-db ASN
 * or the operator's ASN/ISP databases) and anonymity flags (open lists, operator lists reloaded on
 * SIGHUP, the operator's Anonymous IP database). The operator's databases are opened again on SIGHUP
 * when their files changed.
 */
import { trustedProxies } from '../../http/edge/client-ip.ts'
import { reloadOnHangup } from '../hangup.ts'
import { defineDomain } from '../types.ts'
import { ipSettings } from './settings.ts'
import { ipBuilders } from './build.ts'
import { ipRoutes, type IpDomainState } from './routes.ts'
import { servedIpEntry } from './served.ts'
import { openIpService } from './service.ts'
import { ipSources } from './sources.ts'

export default defineDomain<IpDomainState>({
  name: 'ip',
  tag: {
    name: 'ip',
    description: 'IP geolocation: country, city, network and anonymity signals of an address.',
  },
  settings: ipSettings,
  prefixes: ['/ip'],
  datasets: ['ip', 'ip-lists'],
  open({ config, data, log: logger }) {
    const log = (fields: Record<string, unknown>) => logger({ domain: 'ip', ...fields })
    const trusted = trustedProxies(config.trustedProxies, config.trustedProxyHeader)
    const service = openIpService(config, data, (message) => log({ level: 'warn', msg: message }))
    const stopReloading = reloadOnHangup('operator lists', () => service.reload(), log)
    return { service, trusted, stopReloading }
  },
  routes: ipRoutes,
  close(state) {
    state.stopReloading()
  },
  // A changed ALMANAC_IP_*_MMDB file is opened again with the whole domain on SIGHUP (refresh.ts), and the
  // operator's City database is described in GeoLite2's place (served.ts).
  changedFiles: (state) => state.service.changedDatabases(),
  served: (state, entry) => servedIpEntry(entry, state.service.operatorCity),
  builders: ipBuilders,
  sources: ipSources,
  docs: 'docs/ip.md',
  probes: 'test/domains/ip/probes.ts',
})
