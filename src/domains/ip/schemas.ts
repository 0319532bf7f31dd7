/** Response schemas of the IP record (SPEC "IP record"): Form A nested, Form B flat; for the OpenAPI document. */
import { t } from 'elysia'
import { itemError, nullable } from '../../http/reply/schemas.ts'

const ip = t.String({ description: 'The address, normalized (IPv6 compressed; IPv4-mapped IPv6 as IPv4).', examples: ['8.8.8.8'] })
const str = (description: string) => nullable(t.String(), description)
const num = (description: string) => nullable(t.Number(), description)
const flag = (description: string) => t.Boolean({ description })
/** An anonymity flag from a list the dataset may be built without: null when that list is missing and nothing else flagged it. */
const listFlag = (description: string) =>
  nullable(t.Boolean(), `${description} Null: unknown, the list was not built in (\`unavailable_sources\`).`)
const unavailableSources = t.Array(t.String(), {
  description:
    'Built-in anonymity lists this server was built without (e.g. `tor-exit-nodes`): the flags they feed are null unless another source ' +
    'set them. Empty when every list is in.',
})

const RESERVED = {
  is_reserved: flag('A special-purpose address (private, loopback, link-local, CGNAT, documentation, multicast …): no location.'),
  reserved_range: str('Which special-purpose range, e.g. `private`, `loopback`; null otherwise.'),
}

const country = t.Object({
  name: str('English name.'),
  iso_code: str('ISO 3166-1 alpha-2 code.'),
  is_in_european_union: flag('A member state of the EU.'),
})

const represented = (shape: 'enveloped' | 'bare') =>
  nullable(
    t.Object({
      ...(shape === 'enveloped' ? country.properties : { iso_code: country.properties.iso_code, name: country.properties.name }),
      type: str('What kind of representation, e.g. `military`.'),
    }),
    'The country a military base or embassy network represents (MaxMind); null for nearly every address.',
  )

export const IpRecordSchemas = {
  enveloped: t.Object({
    ip,
    ip_version: t.Union([t.Literal(4), t.Literal(6)]),
    ...RESERVED,
    country: nullable(country, 'Where the address is located; null when unknown.'),
    registered_country: nullable(
      country,
      'Where the network is registered (its ISP), which may differ from where it is used; null when unknown.',
    ),
    represented_country: represented('enveloped'),
    continent: nullable(t.Object({ name: str('English name.'), code: str('Two-letter continent code (EU, NA, …).') })),
    location: nullable(
      t.Object({
        city: str('City name.'),
        region: str('First-level subdivision name.'),
        region_code: str('First-level subdivision ISO 3166-2 code suffix.'),
        postal_code: str('Postal code.'),
        latitude: num('Approximate latitude.'),
        longitude: num('Approximate longitude.'),
        accuracy_radius: num('Radius in km around the point that holds the address (a rough figure).'),
        timezone: str('IANA timezone name.'),
      }),
      'Null when the data has nothing finer than the country.',
    ),
    network: nullable(
      t.Object({
        isp: str('Internet service provider.'),
        organization: str('Organization the network is registered to.'),
        asn: nullable(t.Integer(), 'Autonomous system number.'),
        asn_organization: str('Organization of the autonomous system.'),
        connection_type: str('Connection type where known (e.g. Cable/DSL); null in the free data.'),
      }),
      'Null for special-purpose addresses.',
    ),
    security: t.Object({
      is_anonymous: listFlag('Any of the anonymity signals below (null when none is true and one is null).'),
      is_anonymous_vpn: listFlag('A known VPN exit.'),
      is_hosting_provider: listFlag('In a hosting or data-centre range.'),
      is_public_proxy: listFlag('A known open proxy.'),
      is_residential_proxy: flag('A known residential proxy.'),
      is_tor_exit_node: listFlag('A current Tor exit node.'),
      sources: t.Array(t.String(), { description: 'Which lists or databases flagged the address (empty when none).' }),
      unavailable_sources: unavailableSources,
    }),
  }),
  bare: t.Object({
    ip,
    ...RESERVED,
    country: nullable(t.Object({ iso_code: str('ISO 3166-1 alpha-2 code.'), name: str('English name.') })),
    registered_country: nullable(
      t.Object({ iso_code: str('ISO 3166-1 alpha-2 code.'), name: str('English name.') }),
      'Where the network is registered (its ISP); null when unknown.',
    ),
    represented_country: represented('bare'),
    city: str('City name.'),
    latitude: num('Approximate latitude.'),
    longitude: num('Approximate longitude.'),
    isp: str('Internet service provider.'),
    is_vpn: listFlag('A known VPN exit.'),
    is_proxy: listFlag('A known public or residential proxy.'),
    is_tor: listFlag('A current Tor exit node.'),
    unavailable_sources: unavailableSources,
  }),
}

/** A bulk item: the record, or `{ip, error}` for an address that could not be read. */
const IpItemError = itemError('ip', t.Unknown({ description: 'The item as sent.' }))
export const IpBulkItemSchemas = {
  enveloped: t.Union([IpRecordSchemas.enveloped, IpItemError]),
  bare: t.Union([IpRecordSchemas.bare, IpItemError]),
}
