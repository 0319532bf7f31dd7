/**
 * The three IP geolocation endpoints of the SPEC (POST /ip, GET /ip/me, POST /ip/bulk), and GET /ip/{ip},
 * the form ipinfo-style clients use. Elysia's router (and admission.ts) prefer the literal `/me` and
 * `/bulk` to `/:ip`, so neither word is ever read as an address.
 */
import { Elysia, t } from 'elysia'
import type { DomainContext } from '../types.ts'
import { clientAddress, type TrustedProxies } from '../../http/edge/client-ip.ts'
import { requestContext } from '../../http/routing/context.ts'
import { fieldsQuery } from '../../http/routing/paging.ts'
import { list, one } from '../../http/reply/reply.ts'
import { routeDetail } from '../../http/routing/route-facts.ts'
import { AlmanacError, badRequest } from '../../lib/errors.ts'
import type { ResponseForm } from '../../config.ts'
import { envelopedJson, present, presentItem } from './present.ts'
import { IpBulkItemSchemas, IpRecordSchemas } from './schemas.ts'
import type { IpRecord, IpService } from './service.ts'

export const BULK_MAX = 100

export interface IpDomainState {
  service: IpService
  trusted: TrustedProxies
  /** Removes the SIGHUP listener that reloads the operator lists. */
  stopReloading: () => void
}

/** One record's reply; Form A's JSON written from the record's parts, each serialised once (present.ts). */
const recordReply = (r: IpRecord, form: ResponseForm) =>
  one(present(r, form), { json: form === 'enveloped' ? () => envelopedJson(r) : undefined })

/** How the IP record differs between the forms, said on every route that answers one. */
const IP_FORMS =
  'The forms differ in shape: Form A nests `location` (city, region, postal code, position, timezone), `network` (isp, ' +
  'organization, asn) and `security` (each anonymity flag); Form B is flat: `city`, `latitude`, `longitude`, `isp`, `is_vpn`, ' +
  '`is_proxy`, `is_tor`.'

const address = t.String({
  description: 'An IPv4 or IPv6 address without port, zone or prefix; IPv4-mapped IPv6 (::ffff:a.b.c.d) is answered as IPv4.',
  examples: ['8.8.8.8', '2001:4860:4860::8888'],
})

export const ipRoutes = ({ service: state, config }: DomainContext<IpDomainState>) => {
  const { service, trusted } = state
  return new Elysia({ prefix: '/ip' })
    .use(requestContext(config.responseForm))
    .get(
      '/me',
      ({ request, server, form }) => {
        const peer = server?.requestIP(request)?.address
        const client = clientAddress(request.headers, peer, trusted)
        if (!client.ip)
          throw badRequest('The client address is unknown: the request did not arrive over a TCP connection this server can see.')
        return recordReply(service.lookupAddress(client.ip), form)
      },
      {
        query: t.Object(fieldsQuery),
        detail: routeDetail({
          summary: "The caller's IP record",
          description:
            'Geolocates the connecting address. Behind a proxy in ALMANAC_TRUSTED_PROXIES, the one forwarding header ' +
            'ALMANAC_TRUSTED_PROXY_HEADER names (X-Forwarded-For or Forwarded) is believed, walked from the right; the other is ignored. ' +
            IP_FORMS,
          response: { name: 'IpRecord', ...IpRecordSchemas },
        }),
      },
    )
    .get(
      '/:ip',
      ({ params, form }) => {
        // GET /ip/bulk lands here (the literal is a POST route): the same 405 as before this route existed.
        if (params.ip === 'bulk')
          throw new AlmanacError('method', 'GET is not allowed on /api/v1/ip/bulk; use POST.', { headers: { Allow: 'POST' } })
        return recordReply(service.lookup(params.ip, 'ip'), form)
      },
      {
        params: t.Object({ ip: address }),
        query: t.Object(fieldsQuery),
        detail: routeDetail({
          summary: 'Geolocate one address (GET form)',
          description:
            'The same record and quota as POST /api/v1/ip, with the address in the path (IPv6 as it is ' +
            'written: `/api/v1/ip/2001:db8::1`). `me` is the caller, as GET /api/v1/ip/me. ' +
            IP_FORMS,
          response: { name: 'IpRecord', ...IpRecordSchemas },
        }),
      },
    )
    .post('', ({ body, form }) => recordReply(service.lookup(body.ip, 'ip'), form), {
      body: t.Object({ ip: address }, { examples: [{ ip: '8.8.8.8' }] }),
      query: t.Object(fieldsQuery),
      detail: routeDetail({
        summary: 'Geolocate one address',
        description:
          'Private, loopback, link-local, CGNAT, documentation and multicast addresses answer with is_reserved true and no location. ' +
          IP_FORMS,
        response: { name: 'IpRecord', ...IpRecordSchemas },
      }),
    })
    .post('/bulk', ({ body, form }) => list(service.bulk(body.ips, 'ips').map((r) => presentItem(r, form))), {
      body: t.Object(
        {
          ips: t.Array(address, {
            minItems: 1,
            maxItems: BULK_MAX,
            description: `1 to ${BULK_MAX} addresses. Each is answered on its own: an invalid one gets {ip, error} in its place.`,
          }),
        },
        { examples: [{ ips: ['8.8.8.8', '2001:4860:4860::8888', '81.2.69.142', 'not-an-address'] }] },
      ),
      query: t.Object(fieldsQuery),
      detail: routeDetail({
        summary: 'Geolocate up to 100 addresses',
        description: `Each address costs one quota credit. ${IP_FORMS}`,
        cost: { field: 'ips', max: BULK_MAX },
        response: { name: 'IpBulkItem', ...IpBulkItemSchemas, list: true, total: false },
      }),
    })
}
