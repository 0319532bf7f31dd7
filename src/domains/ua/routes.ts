/**
 * The three user-agent endpoints of the SPEC (POST /ua, POST /ua/bulk, POST /ua/compat/device-catalog),
 * and GET /ua: the caller's own User-Agent and Client Hints headers, as GET /ip/me is the caller's address.
 */
import { Elysia, type Static, t } from 'elysia'
import { requestContext } from '../../http/routing/context.ts'
import { callerOf } from '../../http/edge/exchange.ts'
import { fieldsQuery } from '../../http/routing/paging.ts'
import { list, one } from '../../http/reply/reply.ts'
import { inSteps } from '../../http/admission/turns.ts'
import { routeDetail } from '../../http/routing/route-facts.ts'
import { invalid } from '../../lib/errors.ts'
import type { DomainContext } from '../types.ts'
import { HINT_MAX_LENGTH, HINT_NAMES } from './hints.ts'
import {
  BareSchema,
  BulkBareItem,
  BulkEnvelopedItem,
  CatalogSchema,
  catalogEntry,
  EnvelopedSchema,
  present,
  presentItem,
} from './present.ts'
import { UA_MAX_LENGTH, type UaService } from './service.ts'

/** A real user agent for the document's examples (Chrome on a Pixel 8). */
const EXAMPLE_UA = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36'

export const BULK_MAX = 100

/**
 * User agents parsed in one turn of the event loop (~40-80 µs each, 0.4-0.8 ms a step): a bulk of 100 is ten
 * heavy steps, each with a turn of its own (http/admission/turns.ts `inSteps`), not 4-8 ms at once.
 */
const UAS_A_STEP = 10

const userAgent = t.String({
  minLength: 1,
  maxLength: UA_MAX_LENGTH,
  description: `A User-Agent header value, 1 to ${UA_MAX_LENGTH} characters (longer: 422 naming the field).`,
  examples: ['Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36'],
})

// An Unknown, checked by the service (hints.ts): Elysia coerces a string or number given for an object
// schema into an object, which would hide a malformed `headers` instead of answering 422.
const hintHeaders = t.Unknown({
  description:
    `Client Hints, an object of header name -> value: ${[...HINT_NAMES.values()].join(', ')}. Names are case-insensitive; every entry ` +
    `optional; values are strings of at most ${HINT_MAX_LENGTH} characters (Sec-CH-UA-Mobile: ?0 or ?1). Other members (forwarded ` +
    `request headers) are ignored.`,
  examples: [
    {
      'Sec-CH-UA': '"Chromium";v="120", "Google Chrome";v="120"',
      'Sec-CH-UA-Mobile': '?1',
      'Sec-CH-UA-Platform': '"Android"',
      'Sec-CH-UA-Platform-Version': '"14.0.0"',
      'Sec-CH-UA-Model': '"Pixel 8"',
    },
  ],
})

/** How GET /ua names the caller's User-Agent in a 422 (its hints are `header.<name>`). */
const OWN_UA_FIELD = 'header.User-Agent'

/** The Client Hint headers a request carries, by their canonical names (empty ones are dropped by the service). */
function ownHints(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [lower, name] of HINT_NAMES) {
    const value = headers.get(lower)
    if (value !== null) out[name] = value
  }
  return out
}

export const uaRoutes = ({ service, config }: DomainContext<UaService>) =>
  new Elysia({ prefix: '/ua' })
    .use(requestContext(config.responseForm))
    .get(
      '',
      ({ request, form }) => {
        const ua = request.headers.get('user-agent')
        if (ua === null)
          throw invalid(OWN_UA_FIELD, 'the request has no User-Agent header; to parse another user agent, POST /api/v1/ua with {"ua": …}')
        return one(present(service.parse(ua, ownHints(request.headers), OWN_UA_FIELD, 'header'), form))
      },
      {
        query: t.Object(fieldsQuery),
        detail: routeDetail({
          summary: "Parse the caller's own user agent",
          description:
            `The request's own User-Agent header with the Client Hints it carries (${[...HINT_NAMES.values()].join(', ')}), parsed as ` +
            `POST /api/v1/ua parses a body: the same answer, quota and forms. A browser sends the high-entropy hints only after the ` +
            `server asks for them (Accept-CH). Bad headers are a 422 naming \`header.<name>\`.`,
          response: { enveloped: EnvelopedSchema, bare: BareSchema },
        }),
      },
    )
    .post('', ({ body, form }) => one(present(service.parse(body.ua, body.headers), form)), {
      body: t.Object({ ua: userAgent, headers: t.Optional(hintHeaders) }, { examples: [{ ua: EXAMPLE_UA }] }),
      query: t.Object(fieldsQuery),
      detail: routeDetail({
        summary: 'Parse a user agent',
        // One user agent (2,048 characters) and nine hints of 1,024, each character up to 3 bytes of UTF-8: 34 KB.
        bodyLimit: 64 * 1024,
        description:
          'Client, OS, device and bot of one User-Agent, with optional Client Hints. With hints, `client.version`, `os.version`, ' +
          '`os.platform` and `device.model` come from the hints where they give them, `ua_only` is the parse of the UA string ' +
          'alone (null without hints) and `tampered` says the two disagree on the major version. Bots answer with `bot` and ' +
          'null client, os and device; headless browsers are bots that keep their client.',
        response: { enveloped: EnvelopedSchema, bare: BareSchema },
      }),
    })
    .post(
      '/bulk',
      async ({ body, form, request }) =>
        list(
          (await inSteps(callerOf(request), body.ua_list, UAS_A_STEP, (slice, from) => service.bulk(slice, 'ua_list', from))).map((r) =>
            presentItem(r, form),
          ),
        ),
      {
        body: t.Object(
          {
            ua_list: t.Array(
              t.Unknown({
                description:
                  'An object {ua, headers?} as the body of POST /ua. A bad item (a member other than ua and headers included) is ' +
                  'answered in its place as {ua, error: {field, message}}; the others are parsed.',
                examples: [{ ua: 'curl/8.5.0' }],
              }),
              {
                minItems: 1,
                maxItems: BULK_MAX,
                description: `1 to ${BULK_MAX} items, each answered on its own; each costs one quota credit.`,
              },
            ),
          },
          { examples: [{ ua_list: [{ ua: EXAMPLE_UA }, { ua: 'curl/8.5.0' }, { ua: '' }] }] },
        ),
        query: t.Object(fieldsQuery),
        detail: routeDetail({
          summary: `Parse up to ${BULK_MAX} user agents`,
          description: 'Each result carries its input `ua`. Each item costs one quota credit.',
          cost: { field: 'ua_list', max: BULK_MAX },
          // 100 items of the single route's body: past the 1 MiB ceiling only with hints no browser sends.
          bodyLimit: 1024 * 1024,
          response: { enveloped: BulkEnvelopedItem, bare: BulkBareItem, list: true, total: false },
        }),
      },
    )
    .post(
      '/compat/device-catalog',
      async ({ body, request }) => {
        const uas = [...new Set(body)] // repeated strings are answered once
        const entries = await inSteps(callerOf(request), uas, UAS_A_STEP, (slice) =>
          slice.map((ua) => [ua, catalogEntry(service.parse(ua), service.touch(ua))] as const),
        )
        const out: Static<typeof CatalogSchema> = Object.create(null) // input strings as keys: no inherited names
        for (const [ua, entry] of entries) out[ua] = entry
        return one(out)
      },
      {
        body: t.Array(userAgent, {
          minItems: 1,
          maxItems: BULK_MAX,
          description: `1 to ${BULK_MAX} User-Agent strings; each costs one quota credit. Repeated strings are answered once.`,
          examples: [[EXAMPLE_UA, 'curl/8.5.0']],
        }),
        detail: routeDetail({
          summary: 'WURFL-style capabilities of up to 100 user agents',
          description:
            'An object keyed by each input string; each entry is a WURFL-style capability map whose sources docs/ua.md describes.',
          cost: { field: '', max: BULK_MAX },
          // 100 user agents of 2,048 characters: 205 KB in ASCII, 615 KB if every character took 3 bytes.
          bodyLimit: 1024 * 1024,
          response: { enveloped: CatalogSchema, bare: CatalogSchema },
        }),
      },
    )
