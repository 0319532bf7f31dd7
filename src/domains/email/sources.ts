/**
 * Upstream sources of the email domain: three disposable-address lists and a free-provider list from
 * npm, and The Block List Project's phishing and scam lists from GitHub at a pinned commit. The RDAP bootstrap
 * (which registry answers for which TLD) is built from IANA's dns.json when found, else from the npm
 * package whoisserver-world: see `rdap-build.ts`.
 */
import type { Source } from '../../data/types.ts'

const BLOCKLISTPROJECT = 'https://raw.githubusercontent.com/blocklistproject/Lists/ee3bdbaddf49c756cf3340bb2e6a9dee5282d1c6/alt-version/'

export const emailSources: Source[] = [
  {
    id: 'mailchecker',
    version: '6.0.21',
    date: '2026-07-18',
    npm: { package: 'mailchecker', path: 'platform/node/index.js' },
    homepage: 'https://github.com/FGRibreau/mailchecker',
    sha256: '1fe07b543453e5eff72dcbb66f621fec1a81eab7de8923ea4f0f44c568d440d6',
    license: 'MIT',
    attribution:
      'Disposable email domains: MailChecker by François-Guillaume Ribreau (https://github.com/FGRibreau/mailchecker), MIT licence.',
  },
  {
    id: 'disposable-email-domains-js',
    version: '1.26.0',
    date: '2026-09-21',
    npm: { package: 'disposable-email-domains-js', path: 'dist/dict/disposable_email_blocklist.json' },
    homepage: 'https://github.com/mziyut/disposable-email-domains-js',
    sha256: '4bc4c52a1d89848ff75ce569714eab38e47d87e57612d530f1d3821036091bd3',
    license: 'CC0-1.0',
    attribution:
      'Disposable email domains: disposable-email-domains (https://github.com/disposable-email-domains/disposable-email-domains), ' +
      'packaged by disposable-email-domains-js, CC0 1.0.',
  },
  {
    id: 'burner-email-providers',
    version: '1.0.67',
    date: '2024-12-11',
    npm: { package: 'burner-email-providers', path: 'emails.txt' },
    homepage: 'https://github.com/findie/burner-email-providers',
    sha256: '75aa087967f7251edf774f958099ca5a6883d1de2605ff60f3093766bf5dfefc',
    license: 'MIT',
    attribution: 'Burner email providers: findie/burner-email-providers (https://github.com/findie/burner-email-providers), MIT licence.',
  },
  {
    id: 'free-email-domains',
    version: '1.12.6',
    date: '2026-09-23',
    npm: { package: 'free-email-domains', path: 'domains.json' },
    homepage: 'https://github.com/Kikobeats/free-email-domains',
    sha256: 'a2f19e1ccfc3422564f3bab33cb54898783240a743d8cbe758a9c750791b34e0',
    license: 'MIT',
    attribution:
      'Free email providers: free-email-domains by Kiko Beats (https://github.com/Kikobeats/free-email-domains), MIT licence, from ' +
      "HubSpot's list of free email domains.",
    duties:
      "The package's postinstall script re-downloads its list from outside sources; Almanac blocks lifecycle scripts (package.json " +
      'trustedDependencies: []) so the pinned, published domains.json is what is built.',
  },
  {
    // The RDAP bootstrap the build prefers: IANA republishes it as registries change (dated, not pinned).
    id: 'iana-rdap-dns',
    version: 'iana-rdap-dns',
    date: '2026-11-23',
    mirror: 'rdap/dns.json',
    url: 'https://data.iana.org/rdap/dns.json',
    homepage: 'https://www.iana.org/assignments/rdap-dns/',
    license: 'IANA registry data (facts: which RDAP server answers for a TLD)',
    attribution: 'RDAP servers per TLD: the IANA RDAP bootstrap registry for DNS (RFC 9224), https://data.iana.org/rdap/dns.json.',
  },
  {
    // Without IANA's file: the same registry per TLD, as this package records it (its code is not used).
    id: 'whoisserver-world',
    version: '1.0.31',
    date: '2025-10-03',
    npm: { package: 'whoisserver-world', path: 'whoisservers.json' },
    homepage: 'https://github.com/7c/whoisserver-world',
    sha256: 'abfc2439f564811c2aefc0c997cd78a0beab3fd7c5a3b78f078c82f8e4435685',
    license: 'ISC',
    attribution:
      'RDAP servers per TLD: whoisserver-world (https://github.com/7c/whoisserver-world), ISC licence, from the IANA root zone database ' +
      'and RDAP bootstrap registry.',
    duties:
      'Only its data file is read. Its dependency mybase (database and vault clients, one fetched from a git URL) is replaced by an ' +
      "empty package (package.json overrides), since none of the package's code runs.",
  },
  {
    // Not built: shipped in the source tree (rdap-bootstrap.json), read by the email-rdap build only for the
    // TLDs whoisserver-world has no server for. Declared here so NOTICE.md credits it and says what it is.
    id: 'iana-rdap-bootstrap-subset',
    version: '2026-11-23',
    date: '2026-11-23',
    homepage: 'https://www.iana.org/assignments/rdap-dns/',
    license: 'IANA registry data (facts: which RDAP server answers for a TLD); the subset was compiled by hand for Almanac',
    attribution:
      'RDAP servers per TLD: a hand-compiled subset of the IANA RDAP bootstrap registry for DNS (RFC 9224), ' +
      'https://data.iana.org/rdap/dns.json.',
    duties: "12 TLDs; used only where IANA's file is not found and whoisserver-world has no server for the TLD.",
  },
  {
    id: 'blocklistproject-abuse',
    version: 'ee3bdbad',
    date: '2026-07-20',
    // Two upstream lists, merged by the builder (abuse-list.ts). The mirror keeps them gzipped under email/upstream/.
    mirror: 'email/upstream',
    files: [
      {
        url: `${BLOCKLISTPROJECT}phishing-nl.txt`,
        sha256: 'fe48504cad11b592353e4f4412826967e109e28a4de1266202543481e4c7e967',
      },
      {
        url: `${BLOCKLISTPROJECT}scam-nl.txt`,
        sha256: '3afe134239341c6fd68d62f8656f744f6a02e9f35c935a1cec9bc46c4690fade',
      },
    ],
    homepage: 'https://github.com/blocklistproject/Lists',
    license: 'Unlicense (The Block List Project)',
    attribution:
      'Abuse domains: The Block List Project (https://github.com/blocklistproject/Lists), phishing and scam lists of 2026-07-20, ' +
      'Unlicense.',
  },
]
